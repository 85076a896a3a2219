#!/bin/bash
# Session 21, lease 4 (one call), on the commit that lands decode log 46 (ring_t1_ks4_fused at n = 1 below m = 8192,
# K = 7168-9216 and 11264-16384; llama.cpp's peer builds meanwhile): the proof for the new pick (ragged m and K, both
# layouts, the GGUF tensor at one token, the mutants, memcheck and racecheck), then the shipped picks at n = 1 over K
# with ring_t1 beside and cuBLAS bf16, then llama.cpp's perf script alone on the GPU, same shapes.
source scripts/lease.sh
peer_build
L="4096,1,4096 14336,1,4096 4096,1,6144 4096,1,8192 4096,1,10240 4096,1,12288 4096,1,14336 4096,1,16384 4096,2,14336"
{
step "parity: ring_t1_ks4_fused, ragged, both layouts"
timeout 120 $B parity --variant ring_t1_ks4_fused --shape 4100,1,14336 --shape 333,1,9216 --shape 1000,3,12544 --shape 77,2,1024 --shape 129,1,16384 --shape 200,5,4352 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -12; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --variant ring_t1_ks4_fused --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 1 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: ring_t1_ks4_fused"
  timeout 60 compute-sanitizer --tool $tool $B parity --variant ring_t1_ks4_fused --shape 333,1,14336 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "peer build"
peer_wait
step "bench: the shipped picks (cuBLAS beside)"
timeout 150 $B bench --picks --variant ring_t1 --variant ring_t1_ks4_fused $(repeat_flag shape $L) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "peer alone"
timeout 150 bash .device/peer/llamacpp-perf.sh $L > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
sed -n "/the config's pick/,\$p" $OUT/bench.md | head -14
tail -10 $OUT/llamacpp.txt
