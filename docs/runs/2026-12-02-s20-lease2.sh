#!/bin/bash
# Session 20, lease 2 (one call): is the fragment ring's stream held by the shape of its copies? Lease 1's ncu had
# ring_mma_128x8 at 14336x8x4096 with DRAM 52% busy and 52% of the stall samples on the row copies' wait. A
# timing-only binary (.device/mmqgen_hack: 4644be4 plus two switches, its results wrong by design) reads the same
# bytes as if the weights were tiled: HACK_CONTIG makes each row group's stage one contiguous 7168-byte box (the
# bytes of a row group's 16 rows, in another order); HACK_NOCOMPUTE skips the mma work (waits and refills only).
source scripts/lease.sh
H=.device/mmqgen_hack
P="--no-cublas --variant ring_mma_128x8 $(repeat_flag shape 14336,8,4096 14336,4,4096 8192,8,4096 14336,8,14336)"
{
for round in 1 2; do
  step "round $round"
  timeout 60 $H bench $P --json $OUT/ab-base-$round.jsonl > /dev/null 2>&1; echo "exit $?"
  HACK_CONTIG=1 timeout 60 $H bench $P --json $OUT/ab-contig-$round.jsonl > /dev/null 2>&1; echo "exit $?"
  HACK_NOCOMPUTE=1 timeout 60 $H bench $P --json $OUT/ab-nocompute-$round.jsonl > /dev/null 2>&1; echo "exit $?"
  HACK_CONTIG=1 HACK_NOCOMPUTE=1 timeout 60 $H bench $P --json $OUT/ab-contignocompute-$round.jsonl > /dev/null 2>&1; echo "exit $?"
done
timeout 60 $H bench --no-cublas --variant ring_t1_tall_fused --shape 14336,1,4096 --json $OUT/ab-t1-1.jsonl > /dev/null 2>&1
step "ncu"
HACK_CONTIG=1 timeout 90 $H profile --no-source --variant ring_mma_128x8 --shape 14336,8,4096 > $OUT/profile-contig.txt 2>&1; echo "profile exit $?"
HACK_CONTIG=1 HACK_NOCOMPUTE=1 timeout 90 $H profile --no-source --variant ring_mma_128x8 --shape 14336,8,4096 > $OUT/profile-contignocompute.txt 2>&1; echo "profile exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
for t in base contig nocompute contignocompute; do echo "== $t"; python3 scripts/ab_summary.py --shapes $OUT ab-$t; done
for f in $OUT/profile-*.txt; do echo "== $f"; head -12 $f; done
