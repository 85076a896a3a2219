#!/bin/bash
# Session 22, lease 4 (one call): int_per32_multiples with its combine 64 H + L as a LEA on the integer pipe (lease 3:
# two IMADs an output on the FMA pipe's half-rate side were no faster than int_per32), parity first, then one bench.
source scripts/lease.sh
{
step "parity"
timeout 90 $B parity --variant tma_128x128_multiples --variant tma_64x128_b2_multiples --shape 1000,77,2816 --shape 129,300,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | tail -3; echo "exit ${PIPESTATUS[0]}"
step "bench"
timeout 200 $B bench --no-cublas $(repeat_flag variant tma_128x128 tma_128x128_multiples tma_64x128_b2 tma_64x128_b2_multiples) $(repeat_flag shape 4096,512,4096 4096,2048,4096 14336,512,4096) --json $OUT/bench.jsonl 2>&1 | grep "^| [0-9]" | cut -d'|' -f2-5; echo "exit ${PIPESTATUS[0]}"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
