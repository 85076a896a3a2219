#!/bin/bash
# Session 24, lease 2 (one call): the running segments in shared memory with the staged scales read first (log 45),
# and Nsight Compute on the int12 engine's first form with a third stage: where its chunk loop's cycles go.
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s24-i12-stages.toml"
{
step "bench"
timeout 150 $B $V bench --no-cublas $(repeat_flag variant tma_128x128 i12_128x64_s3 i12_128x64_seg_s3 i12_128x96_seg) $(repeat_flag shape 4096,512,4096 14336,512,4096) --json $OUT/bench.jsonl 2>&1 | grep "^| [0-9]"; echo "exit ${PIPESTATUS[0]}"
step "profile"
timeout 240 $B $V profile --variant i12_128x64_s3 --shape 4096,512,4096 > $OUT/profile-i12_128x64_s3.txt 2>&1; echo "exit $?"
head -120 $OUT/profile-i12_128x64_s3.txt
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
