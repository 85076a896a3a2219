#!/bin/bash
# Session 17, lease 2 (a second call on the same warm machine, right after lease 1, same binaries): three rounds of
# one bench of ring_t4 and ring_t4_fused beside their rows-per-lane copies, at ring_t4's pick range (n = 3..4, K
# from 4097 to 8191: 6144) and at the edges either side (K = 4096 and 8192).
source scripts/lease.sh
T=docs/runs/2026-12-02-s17-ring-lanes.toml
for r in 1 2 3; do
  timeout 25 $B --variants $T bench --no-cublas --variant ring_t4 --variant ring_t4_lr --variant ring_t4_fused --variant ring_t4_fused_lr --shape 4096,3,6144 --shape 4096,4,6144 --shape 4096,4,4096 --shape 4096,3,8192 --shape 4096,4,8192 --json $OUT/bench-$r.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
python3 scripts/ab_summary.py --shapes $OUT bench
