#!/bin/bash
# Session 14, lease 3 (one call): lease 2's binary plus every kernel of a module asking for the whole carveout as
# shared memory (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 100), on the hypothesis that lease 2's capped
# early launches lost their overlap waiting for SMs to drain the quantizer and change carveout. B: capped early
# queue; F: the same with every grid queued early, uncapped. OLD: c484f0a. Two rounds each in turn.
# (After it ran, its A/B loop and table became scripts/lease.sh's ab_rounds and scripts/ab_summary.py: the same
# runs.)
LEASE_CHANGE="+log29" source scripts/lease.sh
F=.device/mmqgen_f
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
P="--picks --variant tma_128x128 --no-cublas $(repeat_flag shape 4096,1,4096 14336,2,4096 4096,4,4096 4096,8,4096 4096,16,4096 4096,32,4096 14336,8,4096 14336,16,4096 14336,32,4096 4096,4,14336 4096,16,14336 4096,32,14336 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 14336,96,4096 4096,512,4096)"
ab_rounds 90 old=$OLD new=$B f=$F -- $P
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
