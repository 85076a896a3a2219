#!/bin/bash
# Session 35, lease 6: log 87, behind MMQGEN_EXP=sets3 (.device/x_sets3.sh runs .device/mmqgen with it; without it
# the binary renders c2a5bc9's kernels): three fragment sets in the int12 register fold, the fold of chunk c + 1
# after waiting for chunk c - 2 only. Parity on the int12 tiles, memcheck, then two A/B rounds.
source scripts/lease.sh
export LEASE_CHANGE="+log87"
X=.device/x_sets3.sh
{
step "parity (sets3)"
timeout 150 $X parity --timeout 30 --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail --variant wgmma_i12_128x64 --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,2048,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 40 $X parity --timeout 20 --variant wgmma_i12_128x64_producer --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $X parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
ab_rounds 60 old=$B sets3=$X -- --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail $(repeat_flag shape 4096,256,4096 4096,512,4096 4096,512,14336 4096,2048,4096 14336,2048,4096 4096,4096,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
finish_lease
