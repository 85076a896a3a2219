#!/bin/bash
# Session 8 lease 2 (the last of the session's device time): the fused-quantizer ring (parity, GGUF,
# sanitizers, decode bench against the ring), then the raw layout's candidates from n = 8.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
FQ="--variant ring_t1_fq --variant ring_t1_tall_fq --variant ring_t2_fq --variant ring_t4_fq --variant ring_t4_tall_fq --variant ring_t4_long_k_fq"
RING="--variant ring_t1 --variant ring_t1_tall --variant ring_t2 --variant ring_t4 --variant ring_t4_tall --variant ring_t4_long_k"
{
step "parity: fused ring, ragged, both layouts (+ ring_t1)"
timeout 75 $B --variants .device/fq.toml parity $FQ --variant ring_t1 --shape 4097,1,4096 --shape 1001,3,2816 --shape 333,17,1280 --shape 1000,32,4352 --shape 64,1,256 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 30 $B --variants .device/fq.toml parity $FQ --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 5 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
for v in ring_t1_fq ring_t4_fq; do for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: $v"
  timeout 25 compute-sanitizer --tool $tool $B --variants .device/fq.toml parity --variant $v --shape 200,5,1024 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done; done
step "bench: decode, padded"
timeout 90 $B --variants .device/fq.toml bench $FQ $RING --no-cublas --repeats 10 --shape 4096,1,4096 --shape 4096,2,4096 --shape 4096,3,4096 --shape 4096,4,4096 --shape 14336,1,4096 --shape 14336,2,4096 --shape 14336,4,4096 --shape 4096,1,14336 --shape 4096,2,14336 --shape 4096,4,14336 --json $OUT/bench-fq.jsonl > $OUT/bench-fq.md 2>&1; echo "bench exit $?"
step "bench: raw layout from n = 8"
timeout 100 $B bench --layout raw --no-cublas --repeats 10 --variant stream_t4_wide --variant stream_t4 --variant stream_t8 --variant regfold_64x16_ks4 --variant regfold_64x32_ks4 --variant regfold_64x64 --variant regfold_128x128 --variant regfold_64x128_b2 --variant splitk2_per32 --variant llamacpp --variant fold_per32 --shape 4096,8,4096 --shape 4096,16,4096 --shape 4096,32,4096 --shape 4096,64,4096 --shape 4096,128,4096 --shape 4096,512,4096 --shape 14336,8,4096 --shape 14336,32,4096 --shape 14336,128,4096 --shape 14336,512,4096 --shape 4096,8,14336 --json $OUT/bench-raw.jsonl > $OUT/bench-raw.md 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|ERROR SUMMARY|RACECHECK SUMMARY|===|bench exit" $OUT/checks.txt
grep -E "^\| [0-9]" $OUT/bench-fq.md | awk -F'|' '{print $2,$3,$4}'
grep -E "^\| [0-9]" $OUT/bench-raw.md | awk -F'|' '{print $2,$3,$4}'
