#!/bin/bash
# Session 19, lease 2 (one call), on a388e71 plus decode log 43 with warps_n = 2 (two warps share a row group's
# slots, 8 tokens each): parity of the two-warp points and of a one-warp point again (the template changed under
# it) on ragged shapes of both layouts and on the GGUF tensor, memcheck and racecheck on one; two rounds of one
# bench at m = 14336; ncu on rf_112x16_s3 and rf_112x16_n2_s3 at 14336x16x4096.
source scripts/lease.sh
T=docs/runs/2026-12-02-s19-ring-fragments.toml
{
step "parity: fragment rings with two token groups, ragged, both layouts"
timeout 90 $B --variants $T parity --variant rf_112x16_n2_s3 --variant rf_32x16_n2_s4 --variant rf_112x8_s3 --shape 100,5,4352 --shape 333,17,14336 --shape 77,12,512 --shape 8200,16,4096 --json $OUT/parity-rf-n2.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -30; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B --variants $T parity --variant rf_112x16_n2_s3 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 13 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: rf_112x16_n2_s3"
  timeout 60 compute-sanitizer --tool $tool $B --variants $T parity --variant rf_112x16_n2_s3 --shape 77,9,4352 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
ab_rounds 90 new=$B -- --no-cublas --variants $T $(repeat_flag variant widen_128x16 rf_112x16_s3 rf_128x8_s3 rf_112x16_n2_s3 rf_128x16_n2_s3 rf_32x16_n2_s4) $(repeat_flag shape 14336,5,4096 14336,8,4096 14336,12,4096 14336,16,4096 4096,16,4096)
step "ncu"
timeout 90 $B --variants $T profile --variant rf_112x16_s3 --shape 14336,16,4096 > $OUT/profile-rf_112x16_s3.txt 2>&1; echo "profile exit $?"
timeout 90 $B --variants $T profile --variant rf_112x16_n2_s3 --shape 14336,16,4096 > $OUT/profile-rf_112x16_n2_s3.txt 2>&1; echo "profile exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-new
for f in $OUT/profile-*.txt; do echo "== $f"; head -60 $f; done
