#!/bin/bash
# Session 14, lease 6 (two calls: `bash ... proof-bench`, then `bash ... peer`), on the committed code. The first
# try of the first call was cut off when the machine was taken back; the whole-catalogue parity run was then
# dropped to fit the device time left.
#  1. the config's picks on two ragged shapes, both layouts (every launch is now queued early: decode logs 29 and
#     31), and on the GGUF tensor, every mutant, memcheck and racecheck on three early-queued picks, `mmqgen run`,
#     ncu on the n = 16 pick at m = 14336 - while llama.cpp's peer builds;
#  2. the shipped picks at 45 shapes from 1 to 4096 tokens, cuBLAS bf16 beside;
#  3. (second call) llama.cpp's perf script alone on the GPU on the same shapes.
source scripts/lease.sh
L="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,8,4096 4096,12,4096 4096,16,4096 4096,24,4096 4096,32,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 14336,8,4096 14336,12,4096 14336,16,4096 14336,24,4096 14336,32,4096 4096,1,14336 4096,2,14336 4096,4,14336 4096,8,14336 4096,16,14336 4096,32,14336 4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
SH=$(repeat_flag shape $L)
PICKS="llamacpp regfold_64x32_ks2 regfold_64x64_ks4 ring_t1 ring_t1_fused ring_t1_tall ring_t1_tall_fused ring_t2 ring_t2_fused ring_t2_tall_fused ring_t4 ring_t4_fused ring_t4_long_k ring_t4_tall splitk2_per32 stream_t1 stream_t2 stream_t4 stream_t4_wide tma_128x128 tma_64x128_b2 tma_64x64_b2 tma_64x96_b2 tma_64x96_w2 widen_112x32 widen_128x16 widen_128x16_ks4 widen_64x32_ks4"
if [ "$1" = proof-bench ]; then {
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "peer build (background)"
(bash .device/peer/llamacpp-perf.sh 4096,1,4096 > $OUT/peer-build.txt 2>&1; echo "peer build exit $?" >> $OUT/peer-build.txt) &
PEER=$!
step "parity: the picks, 1000x77x2816 and 129x17x14336, both layouts; GGUF at 32 tokens"
timeout 150 $B parity $(repeat_flag variant $PICKS) --shape 1000,77,2816 --shape 129,17,14336 --json $OUT/parity-picks.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 90 $B parity $(repeat_flag variant $PICKS) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 32 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: regfold_64x64_ks4, tma_64x64_b2, widen_128x16"
  timeout 60 compute-sanitizer --tool $tool $B parity --variant regfold_64x64_ks4 --variant tma_64x64_b2 --variant widen_128x16 --shape 333,17,2816 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "mmqgen run"
timeout 170 $B run > $OUT/run.txt 2>&1; echo "run exit $?"; grep -i "footprint: \|everything\|fail" $OUT/run.txt | tail -8
step "profile: widen_128x16 at 14336x16x4096"
timeout 90 $B profile --variant widen_128x16 --shape 14336,16,4096 > $OUT/profile.txt 2>&1; echo "profile exit $?"
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
