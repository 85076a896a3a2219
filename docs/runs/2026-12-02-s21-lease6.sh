#!/bin/bash
# Session 21, lease 6 (one call), on 7b0bc58: the fragment ring in blocks of 32-64 rows, two to four an SM
# (docs/runs/2026-12-02-s21-fragment-blocks.toml), against ring_mma_128x8 / ring_mma_32x8_k4. Lease 5: the copies of
# ring_mma_128x8's pattern alone stream in 15.1-15.7 us, the ring takes 23.6; more warps an SM in independent blocks
# might interleave the chunk work that one block's 8 warps leave exposed. Parity first (ragged, both layouts).
source scripts/lease.sh
T=docs/runs/2026-12-02-s21-fragment-blocks.toml
FR="fr_64x8_b2_s3 fr_64x8_b2_s2 fr_48x8_b3_s2 fr_32x8_b4_s2 fr_32x8_k2_b2_s2"
{
step "parity"
timeout 120 $B --variants $T parity $(repeat_flag variant $FR) --shape 1000,8,4352 --shape 333,5,14336 --shape 77,3,512 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -12; echo "exit ${PIPESTATUS[0]}"
ab_rounds 120 new=$B -- --no-cublas --variants $T $(repeat_flag variant ring_mma_128x8 ring_mma_32x8_k4 $FR) $(repeat_flag shape 14336,8,4096 14336,4,4096 14336,3,4096 4096,8,4096 4096,8,14336 14336,8,14336)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-new
