#!/bin/bash
# Session 9 lease F: tune the refill = tma sweep (its spill-free points) on the prefill shapes and the 64-256
# token shapes, with the shipped register folds beside.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
SH=""; for s in 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096 4096,64,4096 14336,64,4096 4096,96,4096 14336,96,4096 4096,128,4096 14336,128,4096 4096,192,4096 14336,192,4096 4096,256,4096 14336,256,4096; do SH="$SH --shape $s"; done
{
step "tune"
timeout 480 $B --variants .device/tma_sweep.toml tune --sweep tma --variant regfold_128x128 --variant regfold_64x128_b2 --variant regfold_128x96 --variant regfold_64x64 --variant regfold_64x48 --variant regfold_64x64_ks2 --variant regfold_64x32_ks2 $SH --repeats 10 --output $OUT/tuned.toml --ranking $OUT/ranking 2>&1 | tail -15; echo "exit ${PIPESTATUS[0]}"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
head -40 $OUT/ranking.md
