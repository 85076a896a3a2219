#!/bin/bash
# Session 9 lease B: refill = bulk on the register fold: parity (ragged, both layouts, GGUF), sanitizers, then
# the nine prefill shapes and three ~100-256-token shapes against the shipped picks.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
V="--variant rf_bulk --variant rf_b2_bulk --variant rf_128x96_bulk --variant rf_64x64_bulk"
{
step "parity: ragged, both layouts"
timeout 120 $B --variants .device/bulk.toml parity $V --shape 333,17,1280 --shape 1000,100,4352 --shape 4097,130,4096 --shape 200,5,1024 --shape 128,128,512 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 40 $B --variants .device/bulk.toml parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 5 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: rf_bulk"
  timeout 40 compute-sanitizer --tool $tool $B --variants .device/bulk.toml parity --variant rf_bulk --shape 200,5,1024 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "bench: prefill + 96-256 tokens"
timeout 300 $B --variants .device/bulk.toml bench $V --variant regfold_128x128 --variant regfold_64x128_b2 --variant regfold_128x96 --variant regfold_64x64 --no-cublas --repeats 10 --shape 4096,512,4096 --shape 4096,512,14336 --shape 14336,512,4096 --shape 4096,2048,4096 --shape 4096,2048,14336 --shape 14336,2048,4096 --shape 4096,4096,4096 --shape 4096,4096,14336 --shape 14336,4096,4096 --shape 4096,96,4096 --shape 14336,192,4096 --shape 14336,256,4096 --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "ncu: rf_bulk"
timeout 60 $B --variants .device/bulk.toml profile --variant rf_bulk --shape 4096,1024,4096 2>&1 | tail -22
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|ERROR SUMMARY|RACECHECK SUMMARY|===|bench exit|mismatch|FAIL|refus" $OUT/checks.txt | head -40
grep -E "^\| [0-9]" $OUT/bench.md | awk -F'|' '{print $2,$3,$4}'
sed -n '/ncu: rf_bulk/,$p' $OUT/checks.txt | head -30
