#!/bin/bash
# Session 20, lease 5 (one call): what the fragment ring's stream waits on. (a) Without its mma work (timing binary
# .device/mmqgen_hack: 4644be4 plus docs/runs/2026-12-02-s20-lease5-hack.patch, HACK_NOCOMPUTE=1: waits and refills
# only, results wrong by design), does a ring of 112 rows on 128 SMs stream faster than one of 128 rows on 112? If
# each SM's copies are what is bounded, it should (by up to 14%); if each row group's, not. (b) Which source lines
# the stall samples of the committed ring_mma_128x8 fall on (ncu's source page, CUDA lines).
source scripts/lease.sh
H=.device/mmqgen_hack
R=docs/runs/2026-12-02-s20-rf112.toml
{
step "ncu, no mma work"
for v in ring_mma_128x8 rf_112x8_s3; do
  HACK_NOCOMPUTE=1 timeout 90 $H --variants $R profile --no-source --variant $v --shape 14336,8,4096 > $OUT/profile-nocompute-$v.txt 2>&1; echo "profile exit $?"
done
step "ncu, committed kernels"
timeout 90 $H --variants $R profile --no-source --variant rf_112x8_s3 --shape 14336,8,4096 > $OUT/profile-rf_112x8_s3.txt 2>&1; echo "profile exit $?"
K=q6k_stream_ring_int_per32_128x8_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s3_totreg_lf_padded
MMQGEN_LINE_INFO=1 timeout 120 ncu --clock-control none --target-processes all --kernel-name regex:^$K\$ --launch-count 1 --section SourceCounters --page source --print-source cuda --csv $H parity --child ring_mma_128x8 --shape 14336,8,4096 --layout padded --seed 1 > $OUT/source-ring_mma_128x8.csv 2>&1; echo "ncu exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
for f in $OUT/profile-*.txt; do echo "== $f"; head -11 $f | tail -8; done
wc -l $OUT/source-ring_mma_128x8.csv; head -c 1500 $OUT/source-ring_mma_128x8.csv
