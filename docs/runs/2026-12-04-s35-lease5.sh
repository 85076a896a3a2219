#!/bin/bash
# Session 35, lease 5 (one call): which of the SM's pipes the int12 tiles fill (the binary of this session's HEAD,
# whose kernels are c2a5bc9's). Nsight Compute at 4096x2048x4096 on the producer form of 128 x 64 and on 128 x 96
# split: every pipe's active cycles, instructions by pipe, and the warps' stall reasons per issued instruction.
source scripts/lease.sh
M="sm__cycles_elapsed.avg.per_second,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,regex:sm__pipe_.*_cycles_active.avg.pct_of_peak_sustained_active,regex:sm__inst_executed_pipe_[a-z_]*\.sum$,regex:smsp__average_warps_issue_stalled_[a-z_]*_per_issue_active\.ratio$"
{
for pick in "wgmma_i12_128x64_producer 4096,2048,4096 128x64_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totreg_pwg" "wgmma_i12_128x96_tail 4096,2048,4096 128x96_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totsmem_tp3"; do
  set -- $pick
  step "ncu: $1 at $2"
  timeout 120 ncu --clock-control none --target-processes all --kernel-name "regex:^q6k_wgmma_k32_regfold_int12_per256_$3_padded$" --launch-count 1 --metrics "$M" $B parity --child $1 --shape $2 --layout padded --seed 1 > $OUT/ncu-$1.txt 2>&1
  echo "exit $?"
  grep -v "^\[" $OUT/ncu-$1.txt | grep -E "pct|ratio|sum|second|duration" | grep -v " 0$" | awk '$NF != "0"' | head -80
done
step end
} > $OUT/checks.txt 2>&1
finish_lease
