#!/bin/bash
# Session 22, lease 3 (one call): the first run of mode int_per32_multiples (docs/PERF.md log 42) in the tma
# register fold, beside its int_per32 twins: parity (ragged, both layouts), then one bench of both pairs, and
# widen_128x16's parity after the prelude's one barrier_init (its padded SASS moved, 109 -> 108 registers).
source scripts/lease.sh
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity"
timeout 150 $B parity --variant tma_128x128_multiples --variant tma_64x128_b2_multiples --variant widen_128x16 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | tail -14; echo "exit ${PIPESTATUS[0]}"
step "bench"
timeout 240 $B bench --no-cublas $(repeat_flag variant tma_128x128 tma_128x128_multiples tma_64x128_b2 tma_64x128_b2_multiples) $(repeat_flag shape 4096,512,4096 4096,2048,4096 14336,512,4096 4096,512,14336) --json $OUT/bench.jsonl 2>&1 | tail -22; echo "exit ${PIPESTATUS[0]}"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
