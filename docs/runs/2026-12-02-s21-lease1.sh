#!/bin/bash
# Session 21, lease 1 (one call), on c87591b: the read floor of issue 12's shapes (docs/runs/2026-12-02-s21-read-floor.*:
# pure streaming kernels timed as bench times a call), beside the n = 1 picks in the same lease, and `mmqgen profile`'s
# CUDA-line table on the real ncu (session 20 left it unrun).
source scripts/lease.sh
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "read floor"
timeout 120 python3 docs/runs/2026-12-02-s21-read-floor.py > $OUT/read-floor.txt 2>&1; echo "probe exit $?"
step "bench n = 1, 2"
timeout 150 $B bench --no-cublas --picks $(repeat_flag variant ring_t1 ring_t1_fused ring_t1_tall ring_t1_tall_fused) $(repeat_flag shape 4096,1,4096 14336,1,4096 4096,1,14336 4096,2,14336) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "profile"
timeout 120 $B profile --variant ring_t1_tall_fused --shape 14336,1,4096 > $OUT/profile.txt 2>&1; echo "profile exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt; cat $OUT/read-floor.txt; tail -30 $OUT/bench.md; head -60 $OUT/profile.txt
