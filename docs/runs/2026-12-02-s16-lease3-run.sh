#!/bin/bash
# Session 16, lease 3, second call: `mmqgen run` (the main job) on the committed code.
source scripts/lease.sh
{
step "mmqgen run"
timeout 200 $B run > $OUT/run.txt 2>&1; echo "run exit $?"; grep -i "footprint: \|everything\|fail" $OUT/run.txt | tail -8
step end
} > $OUT/checks-run.txt 2>&1
cat $OUT/checks-run.txt
