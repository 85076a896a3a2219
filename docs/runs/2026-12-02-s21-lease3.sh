#!/bin/bash
# Session 21, lease 3 (one call), on c87591b plus the split ring with every record of a split loaded before the first
# copies (records at once counted at K = 16384: four a warp). Lease 2: split_t1_64_ks2_fq (balanced, 28 records a
# block at K = 14336) lost 2.8 us to split_t1_128_ks4_fq (12 or 16 super-blocks a split) because its second round of
# records queued behind the block's first copies. Parity again on the fused splits, then two rounds over K.
source scripts/lease.sh
T=docs/runs/2026-12-02-s21-split-ring.toml
FUSED="split_t1_64_ks2_fq split_t1_128_ks4_fq split_t2_64_ks2_fq split_t2_128_ks4_fq split_t2_64_ks2_fq_w16 split_t2_128_ks4_fq_w16"
{
step "parity: fused split rings, ragged, both layouts"
timeout 120 $B --variants $T parity $(repeat_flag variant $FUSED) --shape 100,1,4352 --shape 333,2,14336 --shape 77,3,512 --shape 1000,1,2816 --shape 129,5,16384 --json $OUT/parity-split.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -20; echo "exit ${PIPESTATUS[0]}"
step "memcheck: split_t1_64_ks2_fq"
timeout 60 compute-sanitizer --tool memcheck $B --variants $T parity --variant split_t1_64_ks2_fq --shape 333,1,14336 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
ab_rounds 120 new=$B -- --no-cublas --variants $T $(repeat_flag variant ring_t1 ring_t1_fused ring_t2 ring_t1_tall split_t1_64_ks2_fq split_t1_128_ks4_fq split_t1_64_ks2) $(repeat_flag shape 4096,1,6144 4096,1,8192 4096,1,10240 4096,1,12288 4096,1,14336 4096,1,16384 8192,1,8192 8192,1,14336)
ab_rounds 60 two=$B -- --no-cublas --variants $T $(repeat_flag variant ring_t2 ring_t2_fused split_t2_64_ks2_fq split_t2_128_ks4_fq split_t2_64_ks2_fq_w16 split_t2_128_ks4_fq_w16) $(repeat_flag shape 4096,2,14336 4096,2,8192 4096,2,12288)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-new ab-two
