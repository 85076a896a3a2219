#!/bin/bash
# Session 23 (calls 4 and 6): ncu's stall reasons and pipe utilization for the wgmma probe loops
# (docs/runs/2026-12-03-s23-wgmma-probe.cu) named as NAME:WARPS:ROWS:SHARED (default: the two-set loop and the halves).
S=docs/runs/2026-12-03-s23-wgmma-probe.cu; P=docs/runs/2026-12-02-s22-loop-probe.py
{
for k in ${@:-wgmma2_multiples:8:128:133632 halves_multiples:8:128:133632}; do
  kernel=${k%%:*}
  echo "=== ncu: $kernel"
  timeout 150 ncu --kernel-name $kernel --launch-count 1 --section WarpStateStats --section SourceCounters \
    --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio,regex:sm__inst_executed_pipe_.*\\.avg\\.pct_of_peak_sustained_active,regex:sm__pipe_.*cycles_active\\.avg\\.pct_of_peak_sustained_active,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg,smsp__issue_active.avg.pct_of_peak_sustained_active \
    python3 $P --source $S --kernel $k 2>&1 | grep -v "^==PROF==" | awk 'NF >= 2 && $NF != "0" && $NF != "0.00"'
done
} > $OUT/ncu.txt 2>&1
wc -l $OUT/ncu.txt
