#!/bin/bash
# Session 16, lease 5 (one call, the device time's last minutes), on 809ea62: where the rolled four-token fused ring
# spends its time at 4096x4x4096 (ncu), and `ring_t4` with its tokens one at a time
# (docs/runs/2026-12-02-s16-ring-t4-rolled.toml): parity on ragged shapes of both layouts, then one bench beside
# `ring_t4` at its pick shapes (K = 8192) and at 4096 x 3 / 4 x 4096.
# (After it ran, its per-shape table became `scripts/ab_summary.py --shapes`: the same numbers, two decimals.)
source scripts/lease.sh
T=docs/runs/2026-12-02-s16-ring-t4-rolled.toml
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: ring_t4_tu1, ragged, both layouts"
timeout 40 $B --variants $T parity --variant ring_t4_tu1 --shape 333,3,1280 --shape 1000,4,4352 --shape 77,5,8192 --json $OUT/parity.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "bench"
timeout 40 $B --variants $T bench --no-cublas --variant ring_t4 --variant ring_t4_tu1 --shape 4096,3,8192 --shape 4096,4,8192 --shape 4096,3,4096 --shape 4096,4,4096 --json $OUT/bench-1.jsonl > /dev/null 2>&1; echo "bench exit $?"
step "profile: ring_t4_fused at 4096x4x4096"
timeout 70 $B profile --variant ring_t4_fused --shape 4096,4,4096 > $OUT/profile.txt 2>&1; echo "profile exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT bench
head -60 $OUT/profile.txt
