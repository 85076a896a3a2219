#!/bin/bash
# Session 29, lease 8 (one call; OLD: d299431, B: the working tree): log 65, the fold warps of wgmma_i12_64x128_fold
# start folding while the quantizer still runs (PDL): only the tile's warps wait for it (griddepcontrol.wait), and
# the first stages' token copies are issued after that wait. Parity, memcheck and racecheck on the changed tile, then
# A/B in two rounds at the shapes it is picked for.
source scripts/lease.sh
export LEASE_CHANGE="+log65"
{
step "parity"
timeout 120 $B parity --timeout 30 --variant wgmma_i12_64x128_fold --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 30 --variant wgmma_i12_64x128_fold --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers"
for tool in memcheck racecheck; do
  for layout in raw padded; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_64x128_fold --shape 333,9,4352 --layout $layout 2>&1 | grep -v "^\[" | tail -1; echo "$tool $layout exit ${PIPESTATUS[0]}"
  done
done
ab_rounds 60 old=$OLD new=$B -- --variant wgmma_i12_64x128_fold $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,512,14336 4096,2048,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
