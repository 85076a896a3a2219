#!/bin/bash
# Session 16, lease 3 (one call), on the committed code (9960421: token_unroll = 1 for ring_t4_fused, ring_t4_tall,
# ring_t4_long_k and the new ring_t3_fused; every other variant's source differs from session 14's only by the new
# header line):
#  1. the four changed rings on ragged shapes of both layouts and on the GGUF tensor, every mutant, memcheck and
#     racecheck on two of them, while llama.cpp's peer builds;
#  2. ring_t4_long_k against widen_128x16_ks4 at 4096 x 3 / 4 x 14336 (the rule between them);
#  3. the shipped picks at 45 shapes from 1 to 4096 tokens, cuBLAS bf16 beside; then llama.cpp's perf script alone
#     on the GPU on the same shapes. (`mmqgen run` in a second call: docs/runs/2026-12-02-s16-lease3-run.sh.)
# (After it ran, its per-shape table became `scripts/ab_summary.py --shapes` and its peer build scripts/lease.sh's
# peer_build / peer_wait: the same commands.)
source scripts/lease.sh
L="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,8,4096 4096,12,4096 4096,16,4096 4096,24,4096 4096,32,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 14336,8,4096 14336,12,4096 14336,16,4096 14336,24,4096 14336,32,4096 4096,1,14336 4096,2,14336 4096,4,14336 4096,8,14336 4096,16,14336 4096,32,14336 4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
CHANGED="ring_t3_fused ring_t4_fused ring_t4_tall ring_t4_long_k"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "peer build (background)"
peer_build
step "parity: the changed rings, ragged, both layouts; ring_t4_long_k past K = 8192; GGUF at 3 and 4 tokens"
timeout 120 $B parity $(repeat_flag variant $CHANGED) --shape 333,3,1280 --shape 1000,4,4352 --shape 129,4,2816 --shape 77,5,4096 --shape 8200,3,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --variant ring_t4_long_k --shape 100,3,14336 --shape 4100,4,8448 --json $OUT/parity-long-k.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for t in 3 4; do
  timeout 60 $B parity $(repeat_flag variant $CHANGED) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens $t 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: ring_t3_fused, ring_t4_tall"
  timeout 60 compute-sanitizer --tool $tool $B parity --variant ring_t3_fused --variant ring_t4_tall --shape 333,3,1280 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "waiting for the peer build"
peer_wait
step "bench: ring_t4_long_k against widen_128x16_ks4"
timeout 40 $B bench --no-cublas --variant ring_t4_long_k --variant widen_128x16_ks4 --shape 4096,3,14336 --shape 4096,4,14336 --json $OUT/long-k.jsonl > $OUT/long-k.md 2>&1; echo "bench exit $?"
step "bench: the shipped picks (cuBLAS beside)"
timeout 200 $B bench --picks --variant tma_128x128 $(repeat_flag shape $L) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "peer alone"
timeout 230 bash .device/peer/llamacpp-perf.sh $L > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT long
sed -n "/the config's pick/,\$p" $OUT/bench.md | head -50
tail -47 $OUT/llamacpp.txt
