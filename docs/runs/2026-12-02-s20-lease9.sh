#!/bin/bash
# Session 20, lease 9 (one call), on 55c14ef plus `mmqgen profile` printing the generated CUDA's lines beside the
# SASS (the child writes its source where its line info points; lease 7 did it by hand): the fragment ring at
# 14336x8x4096 and the prefill default tma_128x128 at 4096x512x4096.
source scripts/lease.sh
{
step "profile ring_mma_128x8"
timeout 120 $B profile --variant ring_mma_128x8 --shape 14336,8,4096 > $OUT/profile-ring_mma_128x8.txt 2>&1; echo "exit $?"
step "profile tma_128x128"
timeout 150 $B profile --variant tma_128x128 --shape 4096,512,4096 > $OUT/profile-tma_128x128.txt 2>&1; echo "exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
cat $OUT/profile-*.txt
