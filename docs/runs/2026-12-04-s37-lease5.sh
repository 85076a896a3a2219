#!/bin/bash
# Session 37, lease 5: log 91, the activation quantizer fed by the copy engine (mmq_quantize_activations_i12_stream:
# each block keeps four 8 KiB stages of x in flight as bulk copies), B, against 4d86f15 (OLD). B's matmul kernels are
# OLD's instruction for instruction; the new quantizer runs under MMQGEN_EXP=qstream with MMQGEN_QBLOCKS blocks an SM
# (.device/x_qs{2,4,7}.sh). Parity (ragged shapes whose last stage is part-full, the GGUF tensor, both picks),
# memcheck and racecheck on the new quantizer, then two A/B rounds of both picks.
export LEASE_CHANGE="+log91"
source scripts/lease.sh
gunzip -k .device/mmqgen_old.gz
{
step "parity (the streaming quantizer)"
timeout 200 .device/x_qs4.sh parity --timeout 30 --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail_producer --shape 333,9,4352 --shape 129,300,2816 --shape 1000,77,2816 --shape 200,50,1024 --shape 4096,2048,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 60 .device/x_qs7.sh parity --timeout 20 --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail_producer --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck, racecheck"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 .device/x_qs2.sh parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 333,9,4352 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 90 compute-sanitizer --tool racecheck --print-limit 2 .device/x_qs2.sh parity --timeout 60 --variant wgmma_i12_128x64_producer --shape 333,9,4352 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
ab_rounds 90 old=$OLD qs2=.device/x_qs2.sh qs4=.device/x_qs4.sh qs7=.device/x_qs7.sh -- --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail_producer $(repeat_flag shape 4096,64,4096 4096,512,4096 4096,512,14336 4096,2048,4096 14336,2048,4096 4096,4096,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
finish_lease
