#!/bin/bash
# Session 9 final lease, call 1: the peer's build in the background; parity and sanitizers on the fused ring
# (two records' loads at once); then, build done, the decode and prefill benches of the shipped picks and the
# fused-against-ring A/B. Call 2 (s9d.sh) runs llama.cpp alone on the same shapes, then the main job.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
SHAPES="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,8,4096 4096,12,4096 4096,16,4096 4096,24,4096 4096,32,4096 4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 14336,8,4096 14336,12,4096 14336,16,4096 14336,24,4096 14336,32,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,1,14336 4096,2,14336 4096,4,14336 4096,8,14336 4096,16,14336 4096,32,14336"
PREFILL="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
sh() { for s in $1; do printf -- "--shape %s " $s; done; }
FUSED="--variant ring_t1_fused --variant ring_t1_tall_fused --variant ring_t2_fq --variant ring_t4_fq --variant ring_t4_tall_fq --variant ring_t4_long_k_fq"
RING="--variant ring_t1 --variant ring_t1_tall --variant ring_t2 --variant ring_t4 --variant ring_t4_tall --variant ring_t4_long_k"
(bash .device/peer/llamacpp-perf.sh 4096,1,4096 > $OUT/peer-build.txt 2>&1; echo "peer build exit $?" >> $OUT/peer-build.txt) &
PEER=$!
{
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
step "parity: fused ring, n = 1, 3, 8, 17, 32 with ragged m, both layouts"
timeout 120 $B --variants .device/fq9.toml parity $FUSED --shape 4097,1,4096 --shape 1001,3,2816 --shape 4097,8,4096 --shape 333,17,1280 --shape 1000,32,4352 --shape 64,1,256 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 40 $B --variants .device/fq9.toml parity $FUSED --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 5 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
for v in ring_t1_fused ring_t2_fq; do for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: $v"
  timeout 30 compute-sanitizer --tool $tool $B --variants .device/fq9.toml parity --variant $v --shape 200,5,1024 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done; done
step "waiting for the peer's build"
wait $PEER; tail -2 $OUT/peer-build.txt
step "bench: decode, the shipped picks (36 shapes, cuBLAS beside)"
timeout 150 $B bench --picks --variant ring_t1_fused $(sh "$SHAPES") --json $OUT/bench-decode.jsonl > $OUT/bench-decode.md 2>&1; echo "bench exit $?"
step "bench: fused against ring, n = 1-4"
timeout 90 $B --variants .device/fq9.toml bench $FUSED $RING --no-cublas --shape 4096,1,4096 --shape 4096,2,4096 --shape 4096,3,4096 --shape 4096,4,4096 --shape 14336,1,4096 --shape 14336,2,4096 --shape 14336,4,4096 --shape 4096,1,14336 --shape 4096,2,14336 --shape 4096,4,14336 --json $OUT/bench-fused.jsonl > $OUT/bench-fused.md 2>&1; echo "bench exit $?"
step "bench: prefill, the shipped picks (cuBLAS beside)"
timeout 150 $B bench --picks --variant regfold_128x128 $(sh "$PREFILL") --json $OUT/bench-prefill.jsonl > $OUT/bench-prefill.md 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|ERROR SUMMARY|RACECHECK SUMMARY|===|bench exit|peer build" $OUT/checks.txt
grep -E "^\| [0-9]" $OUT/bench-fused.md | awk -F'|' '{print $2,$3,$4}'
sed -n '/picks/,$p' $OUT/bench-decode.md | head -50
sed -n '/picks/,$p' $OUT/bench-prefill.md | head -20
