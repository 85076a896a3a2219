#!/bin/bash
# Session 24, lease 5 (one call): the int12 engine's token boxes a chunk wide in the 64-byte swizzle (log 47; log 46
# had a box per 16-byte column, half of each 32-byte L2 sector): parity (ragged, both layouts, the GGUF tensor), the
# mutants, memcheck and racecheck (padded: the swizzle is the copy engine's), one bench beside the default at four
# prefill shapes (the session's device budget was nearly spent).
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s24-i12-stages.toml"
{
step "parity"
timeout 150 $B $V parity $(repeat_flag variant wgmma_i12_128x64 i12_128x96_tma) --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -6; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --variant wgmma_i12_128x64 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 90 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers"
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity --variant wgmma_i12_128x64 --shape 333,9,4352 --layout padded 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "bench"
timeout 240 $B $V bench --no-cublas $(repeat_flag variant tma_128x128 wgmma_i12_128x64 i12_128x96_tma) $(repeat_flag shape 4096,512,4096 4096,2048,4096 14336,512,4096 4096,4096,4096) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
