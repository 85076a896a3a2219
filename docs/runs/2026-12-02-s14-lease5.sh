#!/bin/bash
# Session 14, lease 5 (one call): where the carveout request belongs (decode log 31). Lease 4 showed the fused rings
# at n = 3-4 about 5% slower than in lease 2, where no kernel asked for a carveout. Three binaries, two rounds each
# in turn: OLD (c484f0a: no early queue for small grids, no carveout request), ALL (HEAD: every kernel of a module
# asks for the whole carveout) and B (only the quantizer asks for it).
# (After it ran, its A/B loop and table became scripts/lease.sh's ab_rounds and scripts/ab_summary.py: the same
# runs.)
LEASE_CHANGE="+log31" source scripts/lease.sh
ALL=.device/mmqgen_all
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
P="--no-cublas $(repeat_flag variant ring_t1_fused ring_t2_fused ring_t4_fused ring_t1 ring_t2 ring_t4_long_k widen_128x16 widen_128x16_ks4 widen_64x32_ks4 tma_64x64_b2 regfold_64x32_ks2 tma_128x128) $(repeat_flag shape 4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,1,14336 4096,2,14336 4096,3,14336 4096,16,4096 4096,32,4096 4096,16,14336 14336,16,4096 4096,64,4096 4096,128,4096 4096,512,4096)"
ab_rounds 60 old=$OLD all=$ALL new=$B -- $P
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
