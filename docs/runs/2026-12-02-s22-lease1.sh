#!/bin/bash
# Session 22, lease 1 (one call): the chunk loop alone in the fold and k16 forms, 8 and 12 warps an SM
# (docs/runs/2026-12-02-s22-loop-probe.*), then ncu's pipe and stall view of the two 8-warp forms.
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
echo "=== probe: the chunk loops"
timeout 120 python3 docs/runs/2026-12-02-s22-loop-probe.py 2>&1 | tail -8
echo "=== ncu: fold_w8 and k16_w8"
for kernel in fold_w8 k16_w8; do
  timeout 200 ncu --kernel-name $kernel --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats \
    python3 docs/runs/2026-12-02-s22-loop-probe.py 2>&1 | grep -v "^==PROF==" | grep -v "^fold\|^k16" | tail -75
done
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt | head -40
