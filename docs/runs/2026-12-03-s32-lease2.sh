#!/bin/bash
# Session 32, lease 2. OLD: 5b463e9 (.device/mmqgen_old). B: 7081a91 (log 75). The ring's fused quantizer changed
# with log 75 (a branch a value between the reciprocal and the division), inside every fused ring's matmul: parity
# of each fused ring the config picks, on the shapes it is picked for and ragged ones, both layouts; then two A/B
# rounds of each at its decode shape, one variant and one shape a bench.
gunzip -f .device/mmqgen_old.gz
source scripts/lease.sh
RINGS="ring_t1_fused ring_t1_tall_fused ring_t1_ks4_fused ring_t2_fused ring_t2_tall_fused ring_t3_fused ring_t4_fused"
PAIRS="ring_t1_fused=4096,1,4096 ring_t1_tall_fused=14336,1,4096 ring_t1_ks4_fused=4096,1,14336 ring_t2_fused=4096,2,4096 ring_t2_tall_fused=14336,2,4096 ring_t3_fused=4096,3,4096 ring_t4_fused=4096,4,4096"
{
step "parity (B): the fused rings"
timeout 200 $B parity --timeout 30 $(repeat_flag variant $RINGS) --shape 4096,1,4096 --shape 333,4,2816 --shape 1000,3,4352 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
for round in 1 2; do
    for tag in old new; do
        bin=$B; [ $tag = old ] && bin=$OLD
        step "round $round: $tag"
        : > $OUT/ab-$tag-$round.jsonl
        for pair in $PAIRS; do
            timeout 60 $bin bench --variant ${pair%%=*} --shape ${pair#*=} --no-cublas --json $OUT/one.jsonl > /dev/null 2>&1 || echo "bench ${pair} exit $?"
            cat $OUT/one.jsonl >> $OUT/ab-$tag-$round.jsonl
        done
    done
done
rm -f $OUT/one.jsonl
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
