#!/bin/bash
# Session 19, lease 1 (one call), on a388e71 plus decode log 43 (a ring whose warps run mma fragments,
# ring_lanes = fragments, docs/runs/2026-12-02-s19-ring-fragments.toml): parity of four of its points on ragged
# shapes of both layouts (a last stage of one super-block, a second token tile of one token, blocks with idle
# warps) and on the GGUF tensor, memcheck and racecheck on two; then two rounds of one bench of every point beside
# the picks at n = 5-16 (widen_128x16, widen_128x16_ks4, ring_t4_tall).
source scripts/lease.sh
T=docs/runs/2026-12-02-s19-ring-fragments.toml
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: fragment rings, ragged, both layouts"
timeout 90 $B --variants $T parity --variant rf_112x16_s3 --variant rf_32x16_s4 --variant rf_112x8_s3 --variant rf_32x8_s4 --shape 100,5,4352 --shape 333,17,14336 --shape 77,8,512 --shape 8200,16,4096 --shape 4100,3,6144 --json $OUT/parity-rf.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -30; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF tensor, 5 and 16 tokens"
for t in 5 16; do
timeout 40 $B --variants $T parity --variant rf_112x16_s3 --variant rf_32x8_s4 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens $t 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
for tool in memcheck racecheck; do
  step "$tool: rf_112x16_s3, rf_32x8_s4"
  timeout 60 compute-sanitizer --tool $tool $B --variants $T parity --variant rf_112x16_s3 --variant rf_32x8_s4 --shape 77,9,4352 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
ab_rounds 90 new=$B -- --no-cublas --variants $T $(repeat_flag variant widen_128x16 widen_128x16_ks4 ring_t4_tall rf_112x16_s3 rf_128x16_s3 rf_112x16_s2 rf_128x16_s2 rf_64x16_s2 rf_32x16_s4 rf_32x16_s2 rf_112x8_s3 rf_128x8_s3 rf_32x8_s4) $(repeat_flag shape 14336,5,4096 14336,8,4096 14336,16,4096 4096,8,4096 4096,16,4096 4096,8,14336 4096,16,14336)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-new
