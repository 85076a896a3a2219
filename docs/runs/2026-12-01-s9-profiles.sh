#!/bin/bash
# Session 9 lease A: where the prefill default and the n = 1-2 ring spend their cycles (ncu sections + SASS lines).
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
SEC="--section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats --section ComputeWorkloadAnalysis --section Occupancy --section MemoryWorkloadAnalysis"
prof() { # variant shape file
  step "ncu sections: $1 $2"
  timeout 120 ncu --clock-control none --target-processes all --kernel-name regex:^q6k_ --launch-count 1 $SEC $B parity --child $1 --shape $2 --layout padded --seed 1 > $OUT/ncu-$3.txt 2>&1; echo "exit $?"
  grep -E "Duration|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Warp Cycles Per Issued|Stall|Executed Ipc|Registers|Achieved Occupancy|DRAM Throughput|Pipe" $OUT/ncu-$3.txt | head -40
}
{
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw --format=csv
prof regfold_128x128 4096,1024,4096 rf
step "profile (SASS lines): regfold_128x128"
timeout 120 $B profile --variant regfold_128x128 --shape 4096,1024,4096 2>&1 | tail -30
prof ring_t1_fused 4096,1,4096 r1
step "profile (SASS lines): ring_t1_fused"
timeout 90 $B profile --variant ring_t1_fused --shape 4096,1,4096 2>&1 | tail -24
prof ring_t2 4096,2,4096 r2
step "profile (SASS lines): ring_t2"
timeout 90 $B profile --variant ring_t2 --shape 4096,2,4096 2>&1 | tail -24
step end
} 2>&1 | tee $OUT/lease-a.txt
