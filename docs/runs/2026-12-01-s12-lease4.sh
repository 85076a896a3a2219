#!/bin/bash
# Session 12, lease 4 (one call): fused ring geometries after decode log 21 (docs/runs/2026-12-01-s12-ring-sweep.toml:
# deeper rings and 14 warps at 112 rows, 4 warps x 4 stages, 16-row blocks two an SM, 8 warps x 2 stages at four
# tokens) beside the shipped picks at n = 1-4, parity first; then where ring_t4 spends 4096x4x4096 (SASS lines).
source scripts/lease.sh
W=$(repeat_flag variant r112_t1_fq_s3 r112_t1_fq_w4_s4 r112_t1_fq_w14_s2 r112_t2_fq_s3 r32_t1_fq_w4_s4 r16_t1_fq_w4_s2_b2 r32_t4_fq_w8_s2 r16_t4_fq_w4_s2_b2)
{
step "parity: the sweep, ragged, both layouts"
timeout 60 $B parity --variants .device/sweep.toml $W --shape 333,1,1280 --shape 4100,2,4096 --shape 129,4,2816 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "bench: the sweep beside the picks"
timeout 60 $B bench --variants .device/sweep.toml $W --variant ring_t1_fused --variant ring_t1_tall_fused --variant ring_t2_fused --variant ring_t2_tall_fused --variant ring_t4 --variant ring_t4_tall --shape 4096,1,4096 --shape 4096,2,4096 --shape 4096,3,4096 --shape 4096,4,4096 --shape 14336,1,4096 --shape 14336,2,4096 --no-cublas --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "profile (SASS lines): ring_t4 at 4096x4x4096"
timeout 60 $B profile --variant ring_t4 --shape 4096,4,4096 2>&1 | tail -30
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
