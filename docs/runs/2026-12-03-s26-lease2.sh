#!/bin/bash
# Session 26, lease 2 (one call): log 50, a third stage. Lease 1's Nsight Compute put a third of the int12 engine's
# stall samples on the stage's mbarrier wait at the window's top; three stages fit 128 x 64 and 128 x 80 (not 128 x 96).
# One bench, two rounds, at four shapes; parity of the new points first (ragged, both layouts).
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s26-stages.toml"
{
step "parity: the new points"
timeout 60 $B $V parity $(repeat_flag variant i12_128x64_s3 i12_128x80_s3 i12_128x80) --shape 333,9,4352 --shape 1000,77,2816 --timeout 30 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
ab_rounds 60 r=$B -- $V $(repeat_flag variant wgmma_i12_128x64 i12_128x64_s3 i12_128x80 i12_128x80_s3 wgmma_i12_128x96) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-r 2>&1 | tail -30
