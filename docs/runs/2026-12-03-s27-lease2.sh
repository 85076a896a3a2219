#!/bin/bash
# Session 27, lease 2 (one call): logs 54-55 in one binary, switched by MMQGEN_EXP (wrappers .device/x_*.sh).
# wbox: the weight box as a 3-D box ([m][K/256][112] 16-bit elements, box 120 x 1 x nbj) whose 16 bytes past each
# block lie outside the tensor (zeros, not fetched): 224 bytes from L2 a row instead of 240. tbox: a window's four
# two-chunk token boxes as one 3-D box ([K/64][n][64], the pairs 128 bytes apart). Parity of each (a hang shows
# first on one small case), then two A/B rounds.
source scripts/lease.sh
export LEASE_CHANGE="+log54-55(env)"
{
step "parity: one small case each"
for x in wbox tbox; do
  timeout 40 .device/x_$x.sh parity --timeout 30 --variant wgmma_i12_128x64 --shape 333,9,4352 --layout padded 2>&1 | tail -1; echo "$x exit ${PIPESTATUS[0]}"
done
timeout 40 .device/x_wbox.sh parity --timeout 30 --variant tma_128x128 --shape 333,9,4352 --layout padded 2>&1 | tail -1; echo "wbox exit ${PIPESTATUS[0]}"
step "parity: both, ragged and 4096x512x4096, both layouts"
timeout 150 .device/x_wt.sh parity --timeout 30 $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 tma_128x128 widen_64x32_ks4) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
step "A/B"
ab_rounds 40 old=$B wbox=.device/x_wbox.sh tbox=.device/x_tbox.sh wt=.device/x_wt.sh -- $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 tma_128x128) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT 2>&1 | tail -30
# The device returns eight files at most: the rounds travel as one archive.
tar czf $OUT/ab.tgz -C $OUT $(cd $OUT && ls ab-*.jsonl) && rm $OUT/ab-*.jsonl
