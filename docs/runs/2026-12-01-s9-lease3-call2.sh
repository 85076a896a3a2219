#!/bin/bash
# Session 9 final lease, call 2: llama.cpp alone on the GPU on the same 45 shapes (built by call 1), then the
# main job.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
SHAPES="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,8,4096 4096,12,4096 4096,16,4096 4096,24,4096 4096,32,4096 4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 14336,8,4096 14336,12,4096 14336,16,4096 14336,24,4096 14336,32,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,1,14336 4096,2,14336 4096,4,14336 4096,8,14336 4096,16,14336 4096,32,14336 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
step "peer alone"
timeout 400 bash .device/peer/llamacpp-perf.sh $SHAPES > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step "mmqgen run"
timeout 150 .device/mmqgen run > $OUT/run.txt 2>&1; echo "run exit $?"
step end
} > $OUT/checks2.txt 2>&1
cat $OUT/checks2.txt
cat $OUT/llamacpp.txt | tail -48
grep -iE "footprint|parity|case\(s\)|x GGUF" $OUT/run.txt | head -20
