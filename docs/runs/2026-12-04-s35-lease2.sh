#!/bin/bash
# Session 35, lease 2: log 84, behind MMQGEN_EXP=epilogue (.device/x_epi.sh runs .device/mmqgen with it; without
# it the binary renders c2a5bc9's kernels). The producer warpgroup of wgmma_i12_128x64_producer runs the float
# epilogue from the super-block sums the tile's warps leave in shared memory. Parity (ragged and large, both
# layouts; the GGUF tensor), memcheck and racecheck, then two A/B rounds.
source scripts/lease.sh
export LEASE_CHANGE="+log84"
X=.device/x_epi.sh
{
step "parity (epilogue warpgroup)"
timeout 150 $X parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 8191,200,4352 --shape 4096,512,4096 --shape 4096,2048,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 40 $X parity --timeout 20 --variant wgmma_i12_128x64_producer --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck, racecheck"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $X parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 333,9,4352 --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 60 compute-sanitizer --tool racecheck --print-limit 2 $X parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 333,9,4352 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
ab_rounds 60 old=$B epi=$X -- --variant wgmma_i12_128x64_producer $(repeat_flag shape 4096,256,4096 4096,512,4096 4096,512,14336 4096,2048,4096 14336,2048,4096 4096,4096,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
finish_lease
