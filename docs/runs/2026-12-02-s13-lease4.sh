#!/bin/bash
# Session 13, lease 4 (one call), decode log 27: engine mma_k16_widen's second form (q6 as uint8, the -32 from an
# mma of a constant tile into the accumulator), its chunk loop unrolled by 1, 4 or fully: `tune` of
# docs/runs/2026-12-02-s13-widen.toml beside the picks at n = 8-32, then ncu on the best at 14336x16x4096.
LEASE_CHANGE="+widen2" source scripts/lease.sh
W=docs/runs/2026-12-02-s13-widen.toml
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "tune: widen sweeps beside the picks"
timeout 400 $B tune --variants $W --sweep w32 --sweep w64 --sweep w128 \
  --variant regfold_64x16_ks4 --variant regfold_64x32_ks4 --variant widen_128x32_ks4 --variant widen_64x32_ks4_b4 \
  $(repeat_flag shape 14336,8,4096 14336,16,4096 14336,24,4096 14336,32,4096 4096,8,4096 4096,16,4096 4096,24,4096 4096,32,4096 4096,8,14336 4096,16,14336 4096,32,14336) \
  --output $OUT/wd-tuned.toml > $OUT/wd-tune.txt 2>&1; echo "tune exit $?"; tail -3 $OUT/wd-tune.txt
BEST=$(sed -n 's/^| 1 | \([a-z0-9_]*\) |.*/\1/p' $OUT/wd-tuned.ranking.md)
step "profile: $BEST at 14336x16x4096"
timeout 90 $B profile --variants $W --variant $BEST --shape 14336,16,4096 > $OUT/profile.txt 2>&1; echo "profile exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
head -50 $OUT/wd-tuned.ranking.md | cut -c1-250
head -30 $OUT/profile.txt
