#!/bin/bash
# Session 26, lease 4 (one call): log 53, token boxes two chunks wide. Every int12 tile moves about 3 TB/s from L2
# into its SM whatever its shape (logs 50-52), as if the copy engine's requests, not the tensor pipe, set the pace: a
# box of 128-byte token rows (two chunks, 128-byte swizzle) halves the token requests for the same bytes. The
# binary reads MMQGEN_PAIR_BOXES (an experiment: .device/pair.sh sets it). Parity first (ragged, both layouts,
# 4096x512x4096), then two rounds at four shapes; then one bench at the token counts around the config's rules.
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s26-stages.toml"
{
step "parity: two-chunk token boxes"
timeout 90 .device/pair.sh parity $V $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 i12_128x64_s3 i12_128x80_s3) --shape 333,9,4352 --shape 1000,77,2816 --shape 4096,512,4096 --timeout 30 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
ab_rounds 60 old=$B pair=.device/pair.sh -- $V $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 i12_128x64_s3 i12_128x80_s3) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096) --no-cublas
step "bench: the rules' token boundaries (b2, 128 x 64, 128 x 96), m = 4096 and 14336"
timeout 200 $B bench $(repeat_flag variant tma_64x64_b2 wgmma_i12_128x64 wgmma_i12_128x96) $(for m in 4096 14336; do for n in 192 256 288 320 576 640 768 1024; do printf -- '--shape %s,%s,4096 ' $m $n; done; done) --no-cublas --json $OUT/bounds-1.jsonl > /dev/null 2>&1; echo "exit $?"
python3 scripts/ab_summary.py --shapes $OUT bounds 2>&1 | tail -20
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT old 2>&1 | tail -20
