#!/bin/bash
# Session 19, lease 6 (one call, the device time left), on the committed code (e6662be): llama.cpp's peer built,
# then the shipped picks (cuBLAS beside) and llama.cpp's perf script alone on the GPU at ten decode shapes: the four
# whose picks decode log 43 changed and their neighbours. Not the 45-shape table (no time for it).
source scripts/lease.sh
L="4096,1,4096 4096,8,4096 4096,12,4096 4096,16,4096 14336,1,4096 14336,4,4096 14336,8,4096 14336,16,4096 4096,8,14336 4096,16,14336"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "peer build"
bash .device/peer/llamacpp-perf.sh 4096,1,4096 > $OUT/peer-build.txt 2>&1; echo "peer build exit $?"
step "bench: the shipped picks (cuBLAS beside)"
timeout 90 $B bench --picks --variant widen_128x16_ks4 $(repeat_flag shape $L) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "peer alone"
timeout 120 bash .device/peer/llamacpp-perf.sh $L > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
sed -n "/the config's pick/,\$p" $OUT/bench.md | head -20
tail -12 $OUT/llamacpp.txt
