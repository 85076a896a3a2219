#!/bin/bash
# Session 20, lease 6, second call (right after docs/runs/2026-12-02-s20-lease6.sh on the same machine, whose peer
# build it reuses), on 41eb7b5: the shipped picks at session 18's 45 shapes plus 4096x3x14336 and 4096x4x10240 (the
# picks decode log 44 changed), cuBLAS bf16 beside; then llama.cpp's perf script alone on the GPU, same shapes.
source scripts/lease.sh
L="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,8,4096 4096,12,4096 4096,16,4096 4096,24,4096 4096,32,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 14336,8,4096 14336,12,4096 14336,16,4096 14336,24,4096 14336,32,4096 4096,1,14336 4096,2,14336 4096,3,14336 4096,4,14336 4096,8,14336 4096,16,14336 4096,32,14336 4096,4,10240 4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "bench: the shipped picks (cuBLAS beside)"
timeout 230 $B bench --picks --variant tma_128x128 $(repeat_flag shape $L) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "peer alone"
timeout 320 bash .device/peer/llamacpp-perf.sh $L > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
sed -n "/the config's pick/,\$p" $OUT/bench.md | head -52
tail -49 $OUT/llamacpp.txt
