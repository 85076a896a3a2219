#!/bin/bash
# Session 21, lease 9 (one call; an H100 if no H200 comes): lease 8's change with every lane arriving on the slot's
# empty mbarrier (lease 8: racecheck still saw 10 hazards with lane 0 arriving for its warp), the helpers named
# (.device/mmqgen_lanes: 7b0bc58 plus docs/runs/2026-12-02-s21-lease9-lanes.patch). Racecheck, memcheck, parity
# (ragged, both layouts, the GGUF tensor), then one round of both binaries.
source scripts/lease.sh
L=.device/mmqgen_lanes
{
nvidia-smi --query-gpu=name --format=csv,noheader
for tool in racecheck memcheck; do
  step "$tool"
  timeout 40 compute-sanitizer --tool $tool --print-limit 2 $L parity --variant ring_mma_128x8 --variant ring_mma_32x8_k4 --shape 333,9,4352 --layout padded 2>&1 | tail -3; echo "exit ${PIPESTATUS[0]}"
done
step "parity"
timeout 60 $L parity --variant ring_mma_128x8 --variant ring_mma_32x8_k4 --shape 1000,8,4352 --shape 333,5,14336 --shape 77,3,512 --shape 8200,16,8192 --json $OUT/parity.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 30 $L parity --variant ring_mma_128x8 --variant ring_mma_32x8_k4 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 8 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "one round"
for pair in old=$B lanes=$L; do
  timeout 40 ${pair#*=} bench --no-cublas --repeats 10 $(repeat_flag variant ring_mma_128x8 ring_mma_32x8_k4) $(repeat_flag shape 14336,4,4096 4096,8,4096 4096,4,14336) --json $OUT/ab-${pair%%=*}-1.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-old ab-lanes
