#!/bin/bash
# Session 21, lease 2 (one call), on c87591b plus the split ring (ksplit on a ring whose lanes take super-blocks,
# variants docs/runs/2026-12-02-s21-split-ring.toml). Lease 1's read floor: 4096 x 1..2 x 14336 streams the same bytes
# as 14336 x 1 x 4096 (17.2 us, fused, 112 rows) but takes 21.3 (ring_t1: separate quantizer, 56 records a block);
# split K gives each block the fused ring's K = 4096 geometry. Parity first (ragged, both layouts, empty splits),
# sanitizers on two, then two rounds against the picks.
source scripts/lease.sh
T=docs/runs/2026-12-02-s21-split-ring.toml
SPLIT="split_t1_64_ks2_fq split_t1_64_ks2 split_t1_128_ks4_fq split_t1_128_ks4 split_t2_64_ks2_fq split_t2_64_ks2 split_t2_128_ks4_fq split_t2_128_ks4 split_t2_64_ks2_fq_w16 split_t2_128_ks4_fq_w16"
{
step "parity: split rings, ragged, both layouts"
timeout 150 $B --variants $T parity $(repeat_flag variant $SPLIT) --shape 100,1,4352 --shape 333,2,14336 --shape 77,3,512 --shape 1000,1,2816 --shape 129,5,1024 --shape 4100,2,8192 --json $OUT/parity-split.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -20; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: split_t1_128_ks4_fq, split_t2_64_ks2"
  timeout 60 compute-sanitizer --tool $tool $B --variants $T parity --variant split_t1_128_ks4_fq --variant split_t2_64_ks2 --shape 333,3,4352 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
ab_rounds 120 new=$B -- --no-cublas --variants $T $(repeat_flag variant ring_t1 ring_t2 ring_t1_fused ring_t2_fused ring_t1_tall ring_t1_tall_fused $SPLIT) $(repeat_flag shape 4096,1,14336 4096,2,14336 4096,1,8192 4096,2,8192 4096,1,10240 14336,1,14336 4096,1,4096 4096,2,4096)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-new
