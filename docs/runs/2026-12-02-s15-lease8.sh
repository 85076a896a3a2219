#!/bin/bash
# Session 15, lease 8 (one call): the 128 x 128 chunk loop alone, int8 as today and f16 on mma.sync
# (docs/runs/2026-12-02-s15-loop-probe.cu), for docs/PERF.md's next prefill lever. Lease 10 ran it again with a third loop,
# the f16 form with the low and high planes as two chains.
source scripts/lease.sh
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "probe: the chunk loops"
timeout 60 python3 docs/runs/2026-12-02-s15-mma-rate.py docs/runs/2026-12-02-s15-loop-probe.cu 2>&1 | tail -4
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
