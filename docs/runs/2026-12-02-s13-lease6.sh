#!/bin/bash
# Session 13, lease 6 (two calls: `bash ... proof-bench`, then `bash ... peer`), on the committed code:
#  1. the variants whose source changed this session (the four mma_k16_widen picks; the register folds, whose chunk
#     loop now calls chunk_mmas / chunk_sum) bit-exact on ragged shapes of both layouts and on the GGUF tensor,
#     every mutant, memcheck and racecheck on widen_112x32, `mmqgen run` - while llama.cpp's peer builds;
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
WIDEN="widen_128x16 widen_128x16_ks4 widen_112x32 widen_64x32_ks4"
FOLDS="regfold_128x128 regfold_128x64 regfold_128x96 regfold_16x128_warps regfold_64x128 regfold_64x128_b2 regfold_64x16_ks4 regfold_64x32_ks2 regfold_64x32_ks4 regfold_64x48 regfold_64x64 regfold_64x64_ks2 regfold_64x64_ks4 tma_128x128 tma_128x64 tma_64x128_b2 tma_64x64_b2 tma_64x64_w2 tma_64x96_b2 tma_64x96_w2"
V=$(repeat_flag variant $WIDEN $FOLDS)
step "parity: the widen picks on four ragged shapes, the folds on two, both layouts"
timeout 100 $B parity $(repeat_flag variant $WIDEN) --shape 1000,77,2816 --shape 333,3,1280 --shape 129,17,2816 --shape 4100,32,4096 --json $OUT/parity-widen.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 150 $B parity $(repeat_flag variant $FOLDS) --shape 1000,77,2816 --shape 129,17,2816 --json $OUT/parity-folds.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF, the changed variants (300 tokens), the widen picks (5 and 32)"
timeout 90 $B parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 300 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for t in 5 32; do
  timeout 40 $B parity $(repeat_flag variant $WIDEN) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens $t 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: widen_112x32"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant widen_112x32 --shape 333,17,2816 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "mmqgen run"
timeout 170 $B run > $OUT/run.txt 2>&1; echo "run exit $?"; grep -i "footprint: \|everything\|fail" $OUT/run.txt | tail -8
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
