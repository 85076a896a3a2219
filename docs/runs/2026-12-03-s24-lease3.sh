#!/bin/bash
# Session 24, lease 3 (one call): the int12_per256 engine staged by the copy engine (refill = tma: one box per
# 16-byte column of the window's tokens, docs/PERF.md log 46), and with the second warpgroup staggered: parity (ragged, both layouts), memcheck, then one
# bench beside the default and the cp.async form at three prefill shapes, and Nsight Compute on the first.
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s24-i12-stages.toml"
NEW="i12_128x64_tma_s3 i12_128x64_tma_s2 i12_128x96_tma i12_128x96_tma_seg i12_128x80_tma i12_128x64_tma_s3_stg4 i12_128x96_tma_stg4"
{
step "parity"
timeout 200 $B $V parity $(repeat_flag variant $NEW) --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -12; echo "exit ${PIPESTATUS[0]}"
step "memcheck"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B $V parity --variant i12_128x64_tma_s3 --shape 333,9,4352 --layout padded 2>&1 | tail -3; echo "exit ${PIPESTATUS[0]}"
step "bench"
timeout 200 $B $V bench --no-cublas $(repeat_flag variant tma_128x128 i12_128x64_s3 $NEW) $(repeat_flag shape 4096,512,4096 4096,2048,4096 14336,512,4096) --json $OUT/bench.jsonl 2>&1 | grep "^| [0-9]"; echo "exit ${PIPESTATUS[0]}"
step "profile"
timeout 120 $B $V profile --variant i12_128x64_tma_s3 --shape 4096,512,4096 > $OUT/profile-i12_128x64_tma_s3.txt 2>&1; echo "exit $?"
head -40 $OUT/profile-i12_128x64_tma_s3.txt
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
