#!/bin/bash
# Session 29, lease 4 (one call; the working tree's binary, MMQGEN_EXP=nostagger through .device/x_nostagger.sh for
# the tiles without the stagger): log 62, the second warpgroup of a tile with fold warps starts half a window (four
# chunks) behind the first, over a ring of eight slots. Parity, the sanitizers on the two-warpgroup fold, then A/B
# (two rounds) against the same tiles without the stagger, the shipped 128 x 64 beside them.
source scripts/lease.sh
export LEASE_CHANGE="+log62"
V="--variants docs/runs/2026-12-03-s29-fold-warps.toml"
FW="i12_fw8_128x64 i12_fw_128x64_treg"
{
step "parity"
timeout 150 $B parity $V $(repeat_flag variant $FW) --timeout 30 --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity $V $(repeat_flag variant $FW) --timeout 30 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers"
for layout in padded raw; do
  for tool in memcheck racecheck; do
    timeout 90 compute-sanitizer --tool $tool --print-limit 2 $B parity $V --timeout 60 --variant i12_fw_128x64_treg --shape 333,9,4352 --layout $layout 2>&1 | grep -v "^\[" | tail -1; echo "$layout $tool exit ${PIPESTATUS[0]}"
  done
done
ab_rounds 90 old=.device/x_nostagger.sh new=$B -- $V $(repeat_flag variant wgmma_i12_128x64 i12_fw_128x64_treg i12_fw8_128x64) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
