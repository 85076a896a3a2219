#!/bin/bash
# Session 9, last lease: llama.cpp built first; then, alone on the GPU one after the other, the shipped picks
# (cuBLAS beside) and llama.cpp's perf run on the 21 shapes whose picks this session changed.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
L="4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
SH=""; for s in $L; do SH="$SH --shape $s"; done
{
step "peer build"
timeout 260 bash .device/peer/llamacpp-perf.sh 4096,1,4096 > $OUT/peer-build.txt 2>&1; echo "peer build exit $?"
step "bench: the shipped picks (cuBLAS beside)"
timeout 90 $B bench --picks --variant tma_128x128 $SH --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "peer alone"
timeout 150 bash .device/peer/llamacpp-perf.sh $L > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
sed -n "/the config's pick/,\$p" $OUT/bench.md | head -26
tail -23 $OUT/llamacpp.txt
