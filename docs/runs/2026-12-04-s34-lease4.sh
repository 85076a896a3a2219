#!/bin/bash
# Session 34, lease 4 (one call): what bounds the int12 tiles now that 128 x 64 has a producer warpgroup (B: the
# kernels of d474df7). Nsight Compute: the SM clock, issue slots and the integer tensor pipe's activity for the
# producer form of 128 x 64 and for 128 x 96 split at 4096x2048x4096 (the shape that still misses 0.35x cuBLAS bf16),
# then mmqgen profile (stall reasons by source line) on both there.
source scripts/lease.sh
M="sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,regex:sm__pipe_tensor_op.*cycles_active.avg.pct_of_peak_sustained_(active|elapsed),regex:sm__inst_executed_pipe_tensor_op.*\.sum$,lts__t_sectors.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed"
{
for pick in "wgmma_i12_128x64_producer 4096,2048,4096 128x64_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totreg_pwg" "wgmma_i12_128x96_tail 4096,2048,4096 128x96_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totsmem_tp3"; do
  set -- $pick
  step "ncu: $1 at $2"
  timeout 90 ncu --clock-control none --target-processes all --kernel-name "regex:^q6k_wgmma_k32_regfold_int12_per256_$3_padded$" --launch-count 1 --metrics "$M" $B parity --child $1 --shape $2 --layout padded --seed 1 2>&1 | grep -v "^\[" | tail -16
  echo "exit ${PIPESTATUS[0]}"
done
step "profile: wgmma_i12_128x64_producer at 4096x2048x4096"
timeout 150 $B profile --variant wgmma_i12_128x64_producer --shape 4096,2048,4096 > $OUT/profile-128x64-producer.txt 2>&1; echo "profile exit $?"
head -40 $OUT/profile-128x64-producer.txt
step "profile: wgmma_i12_128x96_tail at 4096x2048x4096"
timeout 150 $B profile --variant wgmma_i12_128x96_tail --shape 4096,2048,4096 > $OUT/profile-128x96-tail.txt 2>&1; echo "profile exit $?"
head -40 $OUT/profile-128x96-tail.txt
step end
} > $OUT/checks.txt 2>&1
finish_lease
