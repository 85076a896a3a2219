#!/bin/bash
# Session 24, lease 4 (one call): the declared wgmma_i12_128x64, now staged by the copy engine (refill = tma, log 46):
# parity (ragged, both layouts, a GGUF tensor on both), the mutants (the new int12_token_box_column among them),
# memcheck and racecheck on both layouts; then the int12 engine's three tiles beside the default at the nine prefill
# shapes (cuBLAS bf16 beside).
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s24-i12-stages.toml"
{
step "parity"
timeout 120 $B parity --variant wgmma_i12_128x64 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | tail -8; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --variant wgmma_i12_128x64 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 90 $B parity --mutants 2>&1 | tail -3; echo "exit ${PIPESTATUS[0]}"
step "sanitizers"
for tool in memcheck racecheck; do
  for layout in raw padded; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity --variant wgmma_i12_128x64 --shape 333,9,4352 --layout $layout 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
  done
done
step "bench"
timeout 240 $B $V bench $(repeat_flag variant tma_128x128 wgmma_i12_128x64 i12_128x80_tma i12_128x96_tma) $(repeat_flag shape 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
