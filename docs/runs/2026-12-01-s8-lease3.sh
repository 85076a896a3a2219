#!/bin/bash
# Session 8 lease 3: the final binary: the two new catalogue variants by name, then the main job.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
{
step "parity: ring_t1_fused, ring_t1_tall_fused by catalogue name, ragged, both layouts"
timeout 40 $B parity --variant ring_t1_fused --variant ring_t1_tall_fused --shape 4097,1,4096 --shape 1001,3,2816 --shape 64,1,256 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "mmqgen run"
timeout 100 $B run > $OUT/run.txt 2>&1; echo "run exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -25 $OUT/run.txt
