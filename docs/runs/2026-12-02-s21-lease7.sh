#!/bin/bash
# Session 21, lease 7 (one call): the fragment ring's tokens by the lanes' own cp.async copies instead of two tensor
# copies a stage (.device/mmqgen_lanes: 7b0bc58 plus docs/runs/2026-12-02-s21-lease7-lanes.patch). The profile of
# ring_mma_128x8 at 14336x8x4096 (docs/runs/2026-12-02-s21-profile-ring_mma_128x8.txt) books 24% of the stall
# samples (half the SASS samples) on the token barrier's wait; log 45's deeper token ring did not move it. If the
# token boxes queue behind the weights' tensor copies in the copy engine, copies through the load path will not.
# Parity and racecheck first, then two rounds of both binaries.
source scripts/lease.sh
L=.device/mmqgen_lanes
{
step "parity: the lanes' token copies, ragged, both layouts"
timeout 120 $L parity --variant ring_mma_128x8 --variant ring_mma_32x8_k4 --shape 1000,8,4352 --shape 333,5,14336 --shape 77,3,512 --shape 8200,16,8192 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -12; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool"
  timeout 60 compute-sanitizer --tool $tool $L parity --variant ring_mma_128x8 --variant ring_mma_32x8_k4 --shape 333,9,4352 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
ab_rounds 90 old=$B lanes=$L -- --no-cublas $(repeat_flag variant ring_mma_128x8 ring_mma_32x8_k4) $(repeat_flag shape 14336,8,4096 14336,4,4096 14336,3,4096 4096,8,4096 4096,4,14336 4096,8,14336 14336,8,14336)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-old ab-lanes
