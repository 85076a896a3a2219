#!/bin/bash
# Session 21, lease 8 (one call): lease 7's token copies by the lanes, with the slot's release made visible to
# racecheck (lease 7: 10 hazards, the refill's cp.async writes against the other warps' reads, ordered only by the
# atomic count): every warp arrives on an "empty" mbarrier of the slot before it counts itself out, and the last one
# waits on it (it has completed) before it copies (.device/mmqgen_lanes: 7b0bc58 plus
# docs/runs/2026-12-02-s21-lease8-lanes.patch). Racecheck and parity first, then two rounds of both binaries.
source scripts/lease.sh
L=.device/mmqgen_lanes
{
for tool in racecheck memcheck; do
  step "$tool"
  timeout 60 compute-sanitizer --tool $tool --print-limit 2 $L parity --variant ring_mma_128x8 --variant ring_mma_32x8_k4 --shape 333,9,4352 --layout padded 2>&1 | tail -3; echo "exit ${PIPESTATUS[0]}"
done
step "parity: ragged, both layouts"
timeout 120 $L parity --variant ring_mma_128x8 --variant ring_mma_32x8_k4 --shape 1000,8,4352 --shape 333,5,14336 --shape 77,3,512 --shape 8200,16,8192 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -12; echo "exit ${PIPESTATUS[0]}"
ab_rounds 90 old=$B lanes=$L -- --no-cublas $(repeat_flag variant ring_mma_128x8 ring_mma_32x8_k4) $(repeat_flag shape 14336,8,4096 14336,4,4096 14336,3,4096 4096,8,4096 4096,4,14336 4096,8,14336 14336,8,14336)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-old ab-lanes
