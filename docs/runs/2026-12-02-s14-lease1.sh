#!/bin/bash
# Session 14, lease 1 (one call): c484f0a plus decode log 29 (a tma stage's weights copied before
# griddepcontrol.wait; tokens and scales after it). Three binaries: OLD (c484f0a), B (the change, launch rule as
# before) and C (the change, and padded tma kernels always queued as the quantizer's programmatic dependent).
#  1. parity of the eleven variants whose source changed (7 tma, 4 widen), ragged, both layouts; GGUF; memcheck
#     and racecheck on one of each;
#  2. A/B/C, two rounds, the picks on 9 decode and 5 prefill shapes.
# (After it ran, its A/B loop and table became scripts/lease.sh's ab_rounds and scripts/ab_summary.py: the same
# runs.)
LEASE_CHANGE="+log29" source scripts/lease.sh
C=.device/mmqgen_c
BB=.device/mmqgen_b
CHANGED="tma_128x128 tma_128x64 tma_64x128_b2 tma_64x64_b2 tma_64x64_w2 tma_64x96_b2 tma_64x96_w2 widen_128x16 widen_128x16_ks4 widen_112x32 widen_64x32_ks4"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the changed variants, ragged, both layouts"
timeout 150 $C parity $(repeat_flag variant $CHANGED) --shape 1000,77,2816 --shape 333,3,1280 --shape 129,17,14336 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 60 $C parity $(repeat_flag variant $CHANGED) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 32 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: widen_128x16_ks4, tma_64x64_b2"
  timeout 60 compute-sanitizer --tool $tool $C parity --variant widen_128x16_ks4 --variant tma_64x64_b2 --shape 333,17,2816 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
P="--picks --variant tma_128x128 --no-cublas $(repeat_flag shape 4096,8,4096 4096,16,4096 4096,32,4096 14336,8,4096 14336,16,4096 14336,32,4096 4096,4,14336 4096,16,14336 4096,32,14336 4096,128,4096 4096,192,4096 14336,96,4096 4096,512,4096 14336,512,4096)"
ab_rounds 80 old=$OLD b=$BB c=$C -- $P
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
