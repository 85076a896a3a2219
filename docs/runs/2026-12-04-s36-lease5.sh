#!/bin/bash
# Session 36, lease 5: the kernels of this session's second commit (B: wgmma_i12_128x96_tail_producer declared and
# picked from 513 tokens; the producer keeps 24 registers) against the session's start, f62cc50 (OLD), whose pick
# there was wgmma_i12_128x96_tail. Parity of the new variant by its declared name (its SASS is lease 4's
# i12_128x96_pwg_tail's, instruction for instruction), the mutants, two A/B rounds of the two picks (each binary
# times its own: .device/x_{old,new}.sh add the variant), then the nine prefill shapes with the embedded config's
# picks beside cuBLAS and llama.cpp's perf script alone, the same lease. The wrappers (built beside the binaries, not
# kept): .device/x_old.sh is `exec .device/mmqgen_old "$@" --variant wgmma_i12_128x96_tail`, .device/x_new.sh
# `exec .device/mmqgen "$@" --variant wgmma_i12_128x96_tail_producer`.
source scripts/lease.sh
gunzip -k .device/mmqgen_old.gz
peer_build
{
step "parity (wgmma_i12_128x96_tail_producer)"
timeout 90 $B parity --timeout 30 --variant wgmma_i12_128x96_tail_producer --shape 333,9,4352 --shape 200,50,1024 --shape 4096,1024,4096 --json $OUT/parity.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --timeout 20 --variant wgmma_i12_128x96_tail_producer --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 120 $B parity --timeout 30 --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
ab_rounds 60 old=.device/x_old.sh new=.device/x_new.sh -- $(repeat_flag shape 4096,640,4096 4096,1024,4096 4096,2048,4096 4096,2048,14336 4096,4096,4096 14336,2048,4096) --no-cublas
bench_nine_beside_llama $B --picks --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail_producer
step end
} > $OUT/checks.txt 2>&1
finish_lease
