#!/bin/bash
# Session 18, lease 2 (one call), the binary of lease 1 (1465430 plus decode log 40): the rings picked at n = 1-4
# below m = 8192 beside the points of docs/runs/2026-12-02-s18-ring-stages.toml (half the warps, a second stage;
# decode log 41) and lease 1's ring_t2_w8s2: parity first (ragged, both layouts, past K = 8192), then two rounds
# of one bench at the picks' shapes.
source scripts/lease.sh
T1=docs/runs/2026-12-02-s18-ring-geometry.toml
T2=docs/runs/2026-12-02-s18-ring-stages.toml
NEW="ring_t2_w8s2 ring_t1_w4s4 ring_t2_w4s4 ring_t2_fused_w8s2 ring_t3_fused_w8s2 ring_t4_fused_w8s2 ring_t4_w8s2 ring_t4_long_k_w6s2"
PICKS="ring_t1 ring_t1_fused ring_t2 ring_t2_fused ring_t3_fused ring_t4 ring_t4_fused ring_t4_long_k widen_128x16_ks4"
S="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,1,14336 4096,2,8192 4096,2,14336 4096,3,6144 4096,4,6144 4096,4,8192 4096,3,14336 4096,4,14336"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the new points, ragged, both layouts"
timeout 90 $B --variants $T1 --variants $T2 parity $(repeat_flag variant $NEW) --shape 333,3,1280 --shape 1000,2,4352 --shape 77,4,9216 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
for round in 1 2; do
  step "bench round $round"
  timeout 90 $B --variants $T1 --variants $T2 bench --no-cublas $(repeat_flag variant $PICKS $NEW) $(repeat_flag shape $S) --json $OUT/bench-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT bench
