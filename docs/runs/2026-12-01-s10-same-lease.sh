#!/bin/bash
# Session 10, lease 2, call 2: the shipped picks at 45 shapes from 1 to 4096 tokens (cuBLAS beside), then
# llama.cpp's perf script alone on the GPU on the same shapes.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
L="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,8,4096 4096,12,4096 4096,16,4096 4096,24,4096 4096,32,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 14336,8,4096 14336,12,4096 14336,16,4096 14336,24,4096 14336,32,4096 4096,1,14336 4096,2,14336 4096,4,14336 4096,8,14336 4096,16,14336 4096,32,14336 4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
SH=""; for s in $L; do SH="$SH --shape $s"; done
{
step "bench: the shipped picks (cuBLAS beside)"
timeout 220 .device/mmqgen bench --picks --variant tma_128x128 $SH --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "peer alone"
timeout 300 bash .device/peer/llamacpp-perf.sh $L > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
sed -n "/the config's pick/,\$p" $OUT/bench.md | head -50
tail -47 $OUT/llamacpp.txt
