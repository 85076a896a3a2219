#!/bin/bash
# Session 15, lease 6 (one call): decode log 34. OLD is HEAD (ee540ec); B loads each fused-ring record's x for the
# next round while it quantizes this round's (the rounds past K = 4096 overlap their DRAM round trips). Parity of
# the fused rings at K = 14336 on ragged shapes of both layouts, then two rounds of each binary in turn. (After it
# ran, its A/B loop and table became scripts/lease.sh's ab_rounds and scripts/ab_summary.py: the same commands.)
LEASE_CHANGE="+log34" source scripts/lease.sh
F="ring_t1_fused ring_t1_tall_fused ring_t2_fused ring_t2_tall_fused ring_t4_fused"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the fused rings at K = 14336 and 4096, ragged, both layouts"
timeout 150 $B parity $(repeat_flag variant $F) --shape 129,1,14336 --shape 1000,2,14336 --shape 333,3,4352 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
P="--no-cublas $(repeat_flag variant $F ring_t1 ring_t2 ring_t4_long_k) $(repeat_flag shape 4096,1,14336 4096,2,14336 4096,3,14336 14336,1,14336 4096,1,4096 4096,2,4096 4096,4,4096 14336,1,4096 14336,2,4096)"
ab_rounds 60 old=$OLD new=$B -- $P
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
