#!/bin/bash
# Session 35, lease 7: the kernels of 4ed7e2e (the offsets after the stages as prelude constants; SASS byte-identical
# to c2a5bc9's but for ptxas's run-to-run FADD operand order in ring_mma_32x8_k4). Parity of every variant whose
# generated source changed (ragged shapes, both layouts), the GGUF tensor on the picks, the mutants, then the nine
# prefill shapes with the picks beside cuBLAS and llama.cpp's perf script alone, the same lease.
source scripts/lease.sh
peer_build
CHANGED="regfold_128x128 regfold_128x96 ring_mma_128x8 ring_mma_32x8_k4 tma_128x128 tma_128x64 tma_64x128_b2 tma_64x64_b2 tma_64x64_w2 tma_64x96_b2 tma_64x96_w2 wgmma_f16_128x64 wgmma_i12_128x64 wgmma_i12_128x64_producer wgmma_i12_128x96 wgmma_i12_128x96_tail wgmma_i12_64x128_fold wgmma_regfold_128x64 widen_112x32 widen_128x16 widen_128x16_ks4 widen_64x32_ks4"
{
step "parity (every variant whose source changed)"
timeout 240 $B parity --timeout 30 $(repeat_flag variant $CHANGED) --shape 333,9,4352 --shape 129,300,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 20 --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 150 $B parity --timeout 30 --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
bench_nine_beside_llama $B --picks --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail
step end
} > $OUT/checks.txt 2>&1
finish_lease
