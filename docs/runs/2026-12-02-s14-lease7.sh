#!/bin/bash
# Session 14, lease 7 (one call), on 8a1e2f0: lease 6's mutant run reported one mutant failed: the template had
# lost the text `tma_weight_box_raw_stride` plants its bug in (the same code, written differently). With the text
# back: every mutant, with each one's line, and the eleven variants whose source changed this session on one
# ragged shape, both layouts.
source scripts/lease.sh
CHANGED="tma_128x128 tma_128x64 tma_64x128_b2 tma_64x64_b2 tma_64x64_w2 tma_64x96_b2 tma_64x96_w2 widen_128x16 widen_128x16_ks4 widen_112x32 widen_64x32_ks4"
{
step "mutants"
timeout 60 $B parity --mutants 2>&1 | grep -v "^\["; echo "exit ${PIPESTATUS[0]}"
step "parity: the changed variants, 1000x77x2816, both layouts"
timeout 60 $B parity $(repeat_flag variant $CHANGED) --shape 1000,77,2816 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
