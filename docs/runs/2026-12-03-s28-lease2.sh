#!/bin/bash
# Session 28, lease 2 (the branch wip/karatsuba's binary, e37fb65): where the int12 engine's warps stall, per SASS
# line (mmqgen profile: ncu's throughput and stall planes, then the stall samples by line), for the shipped
# 128 x 64 at 4096x512x4096 and the same tile with three products; then the int12 tiles at 161..224 tokens beside
# the picks there (tma_64x96_w2, tma_64x96_b2), which no session has measured.
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s27-karatsuba.toml"
{
for v in wgmma_i12_128x64 i12_128x64_p3; do
  step "profile $v at 4096,512,4096"
  timeout 200 $B $V profile --variant $v --shape 4096,512,4096 > $OUT/profile-$v.txt 2>&1; echo "profile exit $?"
done
step "bench 161..224"
timeout 90 $B bench $(repeat_flag variant tma_64x96_w2 tma_64x96_b2 wgmma_i12_128x64 wgmma_i12_128x96) $(repeat_flag shape 4096,192,4096 4096,224,4096 14336,192,4096 14336,224,4096 4096,160,4096) --no-cublas --json $OUT/bench-low.jsonl > /dev/null 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT bench
