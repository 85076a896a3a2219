#!/bin/bash
# Session 30, lease 6 (one call). OLD: 58bcb29. B: plus log 71 (128 x 64 only, for the experiment: on padded blocks
# the next window's stage wait, half-block words and first-chunk fold happen while this window's last wgmmas run,
# before the drain and the super-block's epilogue, instead of after them). Parity of B's 128 x 64 (ragged and
# 4096x512x4096, both layouts; the GGUF tensor), memcheck and racecheck, then two A/B rounds.
source scripts/lease.sh
export LEASE_CHANGE="+log71"
{
step "parity (B): wgmma_i12_128x64, both layouts; the GGUF tensor"
timeout 90 $B parity --timeout 30 --variant wgmma_i12_128x64 --variant wgmma_i12_128x96 --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 30 --variant wgmma_i12_128x64 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers (B): wgmma_i12_128x64"
for tool in memcheck racecheck; do
  for layout in raw padded; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_128x64 --shape 333,9,4352 --layout $layout 2>&1 | grep -v "^\[" | tail -1; echo "$tool $layout exit ${PIPESTATUS[0]}"
  done
done
ab_rounds 60 old=$OLD new=$B -- --variant wgmma_i12_128x64 $(repeat_flag shape 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336) --no-cublas
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
