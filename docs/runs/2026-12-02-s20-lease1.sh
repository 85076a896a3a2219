#!/bin/bash
# Session 20, lease 1 (one call), on 4644be4 (session 19's last commit): what bounds the fragment rings (ncu on
# ring_mma_128x8 at 14336x8x4096 and ring_mma_32x8_k4 at 4096x8x4096), and the four-group fragment ring at three
# and four tokens below m = 8192, where the dp4a rings take them today (two rounds of one bench).
source scripts/lease.sh
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "ncu"
timeout 90 $B profile --variant ring_mma_128x8 --shape 14336,8,4096 > $OUT/profile-ring_mma_128x8.txt 2>&1; echo "profile exit $?"
timeout 90 $B profile --variant ring_mma_32x8_k4 --shape 4096,8,4096 > $OUT/profile-ring_mma_32x8_k4.txt 2>&1; echo "profile exit $?"
ab_rounds 60 new=$B -- --no-cublas $(repeat_flag variant ring_t3_fused ring_t4_fused ring_t4 ring_t4_long_k ring_mma_32x8_k4 widen_128x16_ks4) $(repeat_flag shape 4096,3,4096 4096,4,4096 4096,3,8192 4096,4,8192 4096,3,14336 4096,4,14336 4096,6,4096)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-new
for f in $OUT/profile-*.txt; do echo "== $f"; head -40 $f; done
