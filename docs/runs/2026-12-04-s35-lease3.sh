#!/bin/bash
# Session 35, lease 3: log 85, behind MMQGEN_EXP (.device/x_reorder.sh, .device/x_split_y.sh run .device/mmqgen with
# it; without it the binary renders c2a5bc9's kernels). (a) reorder: a chunk's four wgmmas as X, Y, Z, Y instead of
# X, Y, Y, Z; (b) split_y: Y in two accumulators, X, Y1, Z, Y2. Parity of both on the shipped int12 tiles, memcheck,
# then two A/B rounds of the three.
source scripts/lease.sh
export LEASE_CHANGE="+log85"
{
for e in reorder split_y; do
step "parity ($e)"
timeout 150 .device/x_$e.sh parity --timeout 30 --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,2048,4096 --json $OUT/parity-$e.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 40 .device/x_$e.sh parity --timeout 20 --variant wgmma_i12_128x64_producer --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "memcheck (reorder)"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 .device/x_reorder.sh parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
ab_rounds 60 old=$B reorder=.device/x_reorder.sh split_y=.device/x_split_y.sh -- --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail $(repeat_flag shape 4096,256,4096 4096,512,4096 4096,512,14336 4096,2048,4096 14336,2048,4096 4096,4096,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
finish_lease
