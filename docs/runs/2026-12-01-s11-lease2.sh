#!/bin/bash
# Session 11, lease 2 (two calls: `bash ... proof-bench`, then `bash ... peer`): the committed code after logs 35-36.
#  1. the whole catalogue bit-exact on two ragged shapes of both layouts (the register folds' stage loader moved
#     into load_stage_blocks), the seven tma variants on a GGUF tensor, `mmqgen run` (the footprint line) - while
#     llama.cpp's peer builds in the background;
#  2. the shipped picks at 45 shapes from 1 to 4096 tokens, cuBLAS bf16 beside;
#  3. (second call) llama.cpp's perf script alone on the GPU on the same shapes.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
L="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,8,4096 4096,12,4096 4096,16,4096 4096,24,4096 4096,32,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 14336,8,4096 14336,12,4096 14336,16,4096 14336,24,4096 14336,32,4096 4096,1,14336 4096,2,14336 4096,4,14336 4096,8,14336 4096,16,14336 4096,32,14336 4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
SH=""; for s in $L; do SH="$SH --shape $s"; done
if [ "$1" = proof-bench ]; then {
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "peer build (background)"
(bash .device/peer/llamacpp-perf.sh 4096,1,4096 > $OUT/peer-build.txt 2>&1; echo "peer build exit $?" >> $OUT/peer-build.txt) &
PEER=$!
step "parity: the whole catalogue, ragged, both layouts"
timeout 240 $B parity --shape 333,17,1280 --shape 129,257,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF, the tma variants"
V=""; for v in tma_128x128 tma_128x64 tma_64x96_b2 tma_64x96_w2 tma_64x64_w2 tma_64x64_b2 tma_64x128_b2; do V="$V --variant $v"; done
timeout 40 $B parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 300 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
step "mmqgen run"
timeout 120 $B run > $OUT/run.txt 2>&1; echo "run exit $?"; grep -i "footprint\|GGUF\|pass\|fail" $OUT/run.txt | tail -6
step "waiting for the peer build"
wait $PEER; tail -2 $OUT/peer-build.txt
step "bench: the shipped picks (cuBLAS beside)"
timeout 240 $B bench --picks --variant tma_128x128 $SH --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
sed -n "/the config's pick/,\$p" $OUT/bench.md | head -50
else {
step "peer alone"
timeout 420 bash .device/peer/llamacpp-perf.sh $L > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks2.txt 2>&1
cat $OUT/checks2.txt; tail -47 $OUT/llamacpp.txt
fi
