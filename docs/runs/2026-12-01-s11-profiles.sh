#!/bin/bash
# Session 11, lease 3: where the new default spends its cycles (ncu sections + SASS lines): tma_128x128 at
# 4096x1024x4096 after log 35 (session 10 profiled it there before) and tma_64x128_b2 at 14336x2048x4096.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
SEC="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis --section Occupancy --section MemoryWorkloadAnalysis"
prof() { # variant shape file
  step "ncu sections: $1 $2"
  timeout 90 ncu --clock-control none --target-processes all --kernel-name regex:^q6k_ --launch-count 1 $SEC $B parity --child $1 --shape $2 --layout padded --seed 1 > $OUT/ncu-$3.txt 2>&1; echo "exit $?"
  grep -E "Duration|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Executed Ipc|Registers|Achieved Occupancy|DRAM Throughput|Pipe" $OUT/ncu-$3.txt | head -30
}
{
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv
prof tma_128x128 4096,1024,4096 t128
step "profile (SASS lines): tma_128x128"
timeout 90 $B profile --variant tma_128x128 --shape 4096,1024,4096 2>&1 | tail -40
prof tma_64x128_b2 14336,2048,4096 b2
step "profile (SASS lines): tma_64x128_b2"
timeout 90 $B profile --variant tma_64x128_b2 --shape 14336,2048,4096 2>&1 | tail -30
step end
} 2>&1 | tee $OUT/profiles.txt
