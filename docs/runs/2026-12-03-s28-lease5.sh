#!/bin/bash
# Session 28, lease 5 (one call, the committed build): the config's new int12 boundaries at shapes lease 4 did not
# time (the ends of the new ranges, m = 8192, K = 8192), each beside the pick it replaced and the one that keeps the
# range below, in one bench.
source scripts/lease.sh
{
step "bench at the boundaries"
timeout 150 $B bench $(repeat_flag variant tma_64x64_b2 tma_64x96_b2 tma_64x96_w2 tma_128x128 regfold_64x32_ks2 wgmma_i12_128x64 wgmma_i12_128x96) $(repeat_flag shape 14336,81,4096 14336,88,4096 8192,96,4096 8192,112,4096 8192,160,4096 8192,224,4096 4096,97,14336 4096,112,14336 4096,112,8192 4096,128,8192 4096,129,4096 4096,129,14336 14336,129,4096 14336,129,14336) --no-cublas --json $OUT/bench-bounds.jsonl > /dev/null 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT bench
