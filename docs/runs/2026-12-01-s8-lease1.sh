#!/bin/bash
# Session 8 lease 1: the f16 engine with the quantizer's f16 tokens: parity (ragged, both layouts, GGUF), then
# the nine prefill shapes against regfold_128x128.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
V="--variant wgmma_f16_128x64 --variant f16_128x64_a1 --variant f16_128x96_a1 --variant f16_192x48_a2 --variant f16_128x64_a2_s3 --variant f16_128x64_a1_s3"
{
step "parity: ragged, both layouts"
timeout 200 $B --variants .device/f16s8.toml parity $V --shape 333,17,1280 --shape 1000,100,4352 --shape 4097,130,4096 --shape 200,5,1024 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 60 $B --variants .device/f16s8.toml parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 5 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
step "bench: prefill"
timeout 400 $B --variants .device/f16s8.toml bench $V --variant regfold_128x128 --repeats 10 --shape 4096,512,4096 --shape 4096,512,14336 --shape 14336,512,4096 --shape 4096,2048,4096 --shape 4096,4096,4096 --shape 14336,4096,4096 --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "memcheck f16_128x96_a1"
timeout 60 compute-sanitizer --tool memcheck $B --variants .device/f16s8.toml parity --variant f16_128x96_a1 --shape 200,5,1024 2>&1 | tail -3
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|ERROR SUMMARY|===|bench exit|mismatch|FAIL" $OUT/checks.txt | head -40
cat $OUT/bench.md | head -60
