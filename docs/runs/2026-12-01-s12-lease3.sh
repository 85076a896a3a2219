#!/bin/bash
# Session 12, lease 3 (two calls: `bash ... proof-bench`, then `bash ... peer`): the committed code after log 38
# and decode log 21.
#  1. the variants whose source changed (the seven tma folds, the eleven rings) bit-exact on four ragged shapes of
#     both layouts (n = 77 among them) and on a GGUF tensor, every mutant, `mmqgen run` (the footprint line) - while
#     llama.cpp's peer builds in the background;
#  2. the shipped picks at 45 shapes from 1 to 4096 tokens, cuBLAS bf16 beside;
#  3. (second call) llama.cpp's perf script alone on the GPU on the same shapes.
source scripts/lease.sh
L="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,8,4096 4096,12,4096 4096,16,4096 4096,24,4096 4096,32,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 14336,8,4096 14336,12,4096 14336,16,4096 14336,24,4096 14336,32,4096 4096,1,14336 4096,2,14336 4096,4,14336 4096,8,14336 4096,16,14336 4096,32,14336 4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
SH=$(repeat_flag shape $L)
if [ "$1" = proof-bench ]; then {
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "peer build (background)"
(bash .device/peer/llamacpp-perf.sh 4096,1,4096 > $OUT/peer-build.txt 2>&1; echo "peer build exit $?" >> $OUT/peer-build.txt) &
PEER=$!
step "parity: the changed variants, ragged, both layouts"
V=$(repeat_flag variant tma_128x128 tma_128x64 tma_64x96_b2 tma_64x96_w2 tma_64x64_w2 tma_64x64_b2 tma_64x128_b2 ring_t1 ring_t1_tall ring_t1_fused ring_t1_tall_fused ring_t2 ring_t2_fused ring_t2_tall_fused ring_t4 ring_t4_tall ring_t4_long_k)
timeout 150 $B parity $V --shape 1000,77,2816 --shape 333,3,1280 --shape 129,2,2816 --shape 4100,1,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF, the changed variants (300 tokens and 2)"
timeout 60 $B parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 300 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --variant ring_t2_fused --variant ring_t2_tall_fused --variant ring_t1_fused --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 2 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
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
