#!/bin/bash
# Session 10, lease 1, call 2: the shipped picks timed by the binary before the fold change and by the one after
# (same shapes, one after the other, cuBLAS beside), then llama.cpp's perf script alone on the GPU.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
L="4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
SH=""; for s in $L; do SH="$SH --shape $s"; done
{
step "bench before (17a137c): the shipped picks"
MMQGEN_COMMIT=17a137c timeout 150 .device/mmqgen_old bench --picks --variant tma_128x128 $SH --no-cublas --json $OUT/bench-before.jsonl > $OUT/bench-before.md 2>&1; echo "bench exit $?"
step "bench after: the shipped picks (cuBLAS beside)"
timeout 170 .device/mmqgen bench --picks --variant tma_128x128 $SH --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "peer alone"
timeout 200 bash .device/peer/llamacpp-perf.sh $L > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
sed -n "/the config's pick/,\$p" $OUT/bench-before.md | head -26
sed -n "/the config's pick/,\$p" $OUT/bench.md | head -26
tail -23 $OUT/llamacpp.txt
