#!/bin/bash
# Session 22, lease 2: ncu's stall reasons and pipe utilization for the probe's chunk loops at 8 and 12 warps an SM
# (docs/runs/2026-12-02-s22-loop-probe.*): 12 warps were no faster than 8 (lease 1), so what do they share?
{
for kernel in fold_w8 fold_w12 k16_w8_global; do
  echo "=== ncu: $kernel"
  timeout 150 ncu --kernel-name $kernel --launch-count 1 \
    --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio,regex:sm__inst_executed_pipe_.*\\.avg\\.pct_of_peak_sustained_active,regex:sm__pipe_.*cycles_active\\.avg\\.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg \
    python3 docs/runs/2026-12-02-s22-loop-probe.py 2>&1 | grep -v "^==PROF==" | grep -v "^fold\|^k16" | awk 'NF >= 3 && $NF != "0" && $NF != "0.00"'
done
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt | wc -l
