#!/bin/bash
# Session 36, lease 3: the kernels of this session's commit (128 x 96 split's whole tiles and split parts as two
# instantiations, log 88), B, against f62cc50's (OLD); B also holds log 87's three sets behind MMQGEN_EXP=sets3
# (.device/x_sets3.sh) and log 88's super-block cut of the split parts behind MMQGEN_EXP=sbtail (.device/x_sbtail.sh; the
# split instantiation only). Parity of the variant whose source changed (ragged shapes, K = 1024, both layouts, the GGUF
# tensor on both picks), memcheck and racecheck, the mutants, two A/B rounds, then the nine prefill shapes with the
# picks beside cuBLAS and llama.cpp's perf script alone, the same lease.
export LEASE_CHANGE="+exp-switches"
source scripts/lease.sh
gunzip -k .device/mmqgen_old.gz
peer_build
{
step "parity (wgmma_i12_128x96_tail)"
timeout 150 $B parity --timeout 30 --variant wgmma_i12_128x96_tail --shape 333,9,4352 --shape 129,300,2816 --shape 200,50,1024 --shape 1000,77,2816 --shape 4096,2048,4096 --shape 4096,4096,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 20 --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 90 .device/x_sbtail.sh parity --timeout 30 --variant wgmma_i12_128x96_tail --shape 333,9,4352 --shape 129,300,2816 --shape 200,50,1024 --shape 4096,2048,4096 --json $OUT/parity-sbtail.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck, racecheck"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_128x96_tail --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 90 compute-sanitizer --tool racecheck --print-limit 2 $B parity --timeout 60 --variant wgmma_i12_128x96_tail --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 150 $B parity --timeout 30 --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
ab_rounds 60 old=$OLD new=$B sets3=.device/x_sets3.sh sbtail=.device/x_sbtail.sh -- --variant wgmma_i12_128x96_tail $(repeat_flag shape 4096,2048,4096 4096,2048,14336 4096,4096,4096 14336,2048,4096) --no-cublas
bench_nine_beside_llama $B --picks --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail
step end
} > $OUT/checks.txt 2>&1
finish_lease
