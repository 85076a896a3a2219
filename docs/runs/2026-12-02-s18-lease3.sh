#!/bin/bash
# Session 18, lease 3 (one call), the binary of leases 1-2: the points of docs/runs/2026-12-02-s18-ring-stages2.toml
# (decode log 41) beside the picks they would replace and lease 2's winners (ring_t2_w8s2, ring_t4_w8s2): parity
# first (ragged, both layouts), then two rounds of one bench.
source scripts/lease.sh
T1=docs/runs/2026-12-02-s18-ring-geometry.toml
T2=docs/runs/2026-12-02-s18-ring-stages.toml
T3=docs/runs/2026-12-02-s18-ring-stages2.toml
NEW="ring_t1_r16w4s2 ring_t1_fused_w4s4 ring_t1_fused_w16s1 ring_t2_w8s2_lr ring_t4_w8s2_items ring_t1_tall_fused_w4s4 ring_t1_tall_fused_w16s1 ring_t2_tall_fused_w4s4 ring_t2_tall_fused_w16s1 ring_t4_tall_w4s4 ring_t4_tall_w16s1"
PICKS="ring_t1 ring_t1_fused ring_t1_tall_fused ring_t2 ring_t2_tall_fused ring_t4 ring_t4_tall ring_t2_w8s2 ring_t4_w8s2"
S="4096,1,4096 4096,1,8192 4096,1,14336 4096,2,8192 4096,2,14336 4096,3,6144 4096,4,6144 4096,4,8192 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 14336,2,8192"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the new points, ragged, both layouts"
timeout 120 $B --variants $T1 --variants $T2 --variants $T3 parity $(repeat_flag variant $NEW) --shape 333,3,1280 --shape 1000,2,4352 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
for round in 1 2; do
  step "bench round $round"
  timeout 100 $B --variants $T1 --variants $T2 --variants $T3 bench --no-cublas $(repeat_flag variant $PICKS $NEW) $(repeat_flag shape $S) --json $OUT/bench-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT bench
