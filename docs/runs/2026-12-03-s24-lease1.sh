#!/bin/bash
# Session 24, lease 1 (one call): the int12_per256 engine with a third stage, with its running segments in shared
# memory and its totals in the output (totals = output, segment = shared), and at 96 tokens (docs/PERF.md log 45):
# parity (ragged, both layouts) and one bench beside the default at three prefill shapes.
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s24-i12-stages.toml"
NEW="i12_128x64_s3 i12_128x64_seg_s3 i12_128x96_seg"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity"
timeout 150 $B $V parity $(repeat_flag variant $NEW) --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | tail -8; echo "exit ${PIPESTATUS[0]}"
step "bench"
timeout 200 $B $V bench --no-cublas $(repeat_flag variant tma_128x128 wgmma_i12_128x64 $NEW) $(repeat_flag shape 4096,512,4096 4096,2048,4096 14336,512,4096) --json $OUT/bench.jsonl 2>&1 | tail -22; echo "exit ${PIPESTATUS[0]}"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
