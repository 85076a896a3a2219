#!/bin/bash
# Session 17, lease 1 (one call: the session had 272 s of device time, too few for llama.cpp's peer build), on
# a634726 plus `ring_lanes` (decode log 39): the six rows-per-lane rings of docs/runs/2026-12-02-s17-ring-lanes.toml
# on ragged shapes of both layouts, past K = 8192 and on the GGUF tensor; memcheck and racecheck on two; then two
# rounds of one bench of each beside the catalogue ring it copies, at that ring's pick shapes.
source scripts/lease.sh
T=docs/runs/2026-12-02-s17-ring-lanes.toml
NEW="ring_t4_fused_lr ring_t3_fused_lr ring_t2_fused_lr ring_t1_fused_lr ring_t1_lr ring_t4_lr"
OLDV="ring_t4_fused ring_t3_fused ring_t2_fused ring_t1_fused ring_t1 ring_t4"
S="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,1,14336 4096,4,8192"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the six, ragged, both layouts"
timeout 45 $B --variants $T parity $(repeat_flag variant $NEW) --shape 333,3,1280 --shape 1000,4,4352 --shape 77,5,8192 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 15 $B --variants $T parity --variant ring_t1_lr --variant ring_t1_fused_lr --shape 333,1,14336 --json $OUT/parity-long-k.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 15 $B --variants $T parity --variant ring_t4_fused_lr --variant ring_t3_fused_lr --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 4 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "bench, two rounds"
for round in 1 2; do
  timeout 40 $B --variants $T bench --no-cublas $(repeat_flag variant $OLDV $NEW) $(repeat_flag shape $S) --json $OUT/bench-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
for tool in memcheck racecheck; do
  step "$tool: ring_t4_fused_lr, ring_t1_lr"
  timeout 25 compute-sanitizer --tool $tool $B --variants $T parity --variant ring_t4_fused_lr --variant ring_t1_lr --shape 77,3,2816 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT bench
