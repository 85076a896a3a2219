#!/bin/bash
# Session 37, lease 7: the kernels of this session's commit (log 92), B, against 4d86f15 (OLD). Parity of the pick
# from 513 tokens and the GGUF tensor, then (after llama.cpp's peer is built) two A/B rounds where the last wave
# splits and where it does not, then the nine prefill shapes with the picks beside cuBLAS and llama.cpp's perf script
# alone, the same lease.
source scripts/lease.sh
gunzip -k .device/mmqgen_old.gz
peer_build
{
step "parity (wgmma_i12_128x96_tail_producer)"
timeout 90 $B parity --timeout 30 --variant wgmma_i12_128x96_tail_producer --shape 333,9,4352 --shape 1000,77,14336 --shape 4096,2048,4096 --json $OUT/parity.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --timeout 20 --variant wgmma_i12_128x96_tail_producer --variant wgmma_i12_128x64_producer --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
ab_rounds 60 old=$OLD new=$B -- --variant wgmma_i12_128x96_tail_producer $(repeat_flag shape 4096,2048,4096 4096,2048,14336 14336,2048,4096) --no-cublas
bench_nine_beside_llama $B --picks --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail_producer
step end
} > $OUT/checks.txt 2>&1
finish_lease
