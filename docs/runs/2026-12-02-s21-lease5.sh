#!/bin/bash
# Session 21, lease 5 (one call), on a23be18: the fragment ring's copy pattern alone (docs/runs/2026-12-02-s21-read-floor.*
# with `rows`: each warp 16 rows, a stage 16 row copies or one run copy of the same bytes), beside lease 1's read floor
# again and ring_mma_128x8 itself. Decode log 44 had its copies alone (mma work switched off) at 17.5 us of kernel time
# at 14336x8x4096, where lease 1's bulk ring read the same 51.4 MB in 15.2 us whole call.
source scripts/lease.sh
{
step "read floor"
timeout 60 python3 docs/runs/2026-12-02-s21-read-floor.py > $OUT/read-floor.txt 2>&1; echo "probe exit $?"
step "fragment ring copies"
timeout 60 python3 docs/runs/2026-12-02-s21-read-floor.py rows > $OUT/read-rows.txt 2>&1; echo "probe exit $?"
step "bench"
timeout 90 $B bench --no-cublas $(repeat_flag variant ring_mma_128x8 ring_t1_tall_fused) $(repeat_flag shape 14336,8,4096 14336,4,4096 14336,1,4096) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt; cat $OUT/read-rows.txt; grep -A12 "== 14336x4096 padded" $OUT/read-floor.txt; grep -E "^\| 14336" $OUT/bench.md | cut -d'|' -f2-5
