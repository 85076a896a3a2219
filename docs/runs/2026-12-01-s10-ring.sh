#!/bin/bash
# Session 10, lease 3: ring geometries (.device/s10-ring.toml) against the shipped rings at 4096 x 1..4 x 4096,
# the shapes still behind llama.cpp (parity first, as bench always does).
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
V=""; for v in ring_t1_fused ring_t1 ring_t2 ring_t4 r1_fq_j16_w8 r1_fq_j16_w4 r2_fq_j32_w8 r2_fq_j16_w8 r2_j16_w8 r2_j32_w8 r4_fq_j32_w8 r4_j16_w8 r3_fq_j32_w8; do V="$V --variant $v"; done
timeout 200 .device/mmqgen --variants .device/s10-ring.toml bench $V --shape 4096,1,4096 --shape 4096,2,4096 --shape 4096,3,4096 --shape 4096,4,4096 --shape 14336,2,4096 --no-cublas --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
grep -A200 "^| variant\|^| m,n,k" $OUT/bench.md | head -90
