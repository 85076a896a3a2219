#!/bin/bash
# Session 29, lease 6 (one call; the working tree's binary, switched by MMQGEN_EXP through .device/x_two.sh and
# .device/x_nostagger.sh): log 64, three fragment sets a tile warp (wgmma.wait_group 2, the chunk before may still
# run while the next one's fragments load) against two (old), and the stagger of log 62 off (ns), on the fold tiles.
# Parity and racecheck with three sets, then A/B in two rounds.
source scripts/lease.sh
export LEASE_CHANGE="+log64"
V="--variants docs/runs/2026-12-03-s29-fold-warps.toml"
FW="i12_fw_64x128 i12_fw_128x64_treg"
{
step "parity"
timeout 150 $B parity $V $(repeat_flag variant $FW) --timeout 30 --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
step "racecheck"
timeout 90 compute-sanitizer --tool racecheck --print-limit 2 $B parity $V --timeout 60 --variant i12_fw_64x128 --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -1; echo "racecheck exit ${PIPESTATUS[0]}"
ab_rounds 90 old=.device/x_two.sh new=$B ns=.device/x_nostagger.sh -- $V $(repeat_flag variant $FW) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,512,14336 4096,2048,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
