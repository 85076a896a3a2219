#!/bin/bash
# Session 30, lease 4 (one call): what bounds the int12 tiles after logs 67 and 69 (B: the kernels of the commit this
# session lands). Nsight Compute: the SM clock, issue slots and the integer tensor pipe's activity for 128 x 96 at
# 4096^3 and 4096x2048x4096, 128 x 64 and the fold tile at 4096x2048x4096; then mmqgen profile (stall reasons by
# source line) on 128 x 96 at 4096^3 and 128 x 64 at 4096x2048x4096.
source scripts/lease.sh
export LEASE_CHANGE="+log67+log69"
M="sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,regex:sm__pipe_tensor_op.*cycles_active.avg.pct_of_peak_sustained_(active|elapsed),regex:sm__inst_executed_pipe_tensor_op.*\.sum$,lts__t_sectors.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__throughput.avg.pct_of_peak_sustained_elapsed"
{
for pick in "wgmma_i12_128x96 4096,4096,4096 128x96_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totsmem" "wgmma_i12_128x96 4096,2048,4096 128x96_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totsmem" "wgmma_i12_128x64 4096,2048,4096 128x64_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totreg" "wgmma_i12_64x128_fold 4096,2048,4096 64x128_w4x2_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totreg_fw4"; do
  set -- $pick
  step "ncu: $1 at $2"
  timeout 90 ncu --clock-control none --target-processes all --kernel-name "regex:^q6k_wgmma_k32_regfold_int12_per256_$3_padded$" --launch-count 1 --metrics "$M" $B parity --child $1 --shape $2 --layout padded --seed 1 2>&1 | grep -v "^\[" | tail -16
  echo "exit ${PIPESTATUS[0]}"
done
step "profile: wgmma_i12_128x96 at 4096^3"
timeout 150 $B profile --variant wgmma_i12_128x96 --shape 4096,4096,4096 > $OUT/profile-128x96.txt 2>&1; echo "profile exit $?"
head -36 $OUT/profile-128x96.txt
step "profile: wgmma_i12_128x64 at 4096x2048x4096"
timeout 150 $B profile --variant wgmma_i12_128x64 --shape 4096,2048,4096 > $OUT/profile-128x64.txt 2>&1; echo "profile exit $?"
head -36 $OUT/profile-128x64.txt
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
