#!/bin/bash
# Session 19, lease 4 (one call), on a388e71 plus decode log 43 with tensor copies and the chunk-major scales read
# at the token's own place (lease 3 mismatched at the second tile of 8 tokens: scale_position swaps by a token's
# place in its 16, and the kernel used the place in its tile). Parity of the 8-token points (ragged, several token
# tiles, both layouts, GGUF tensor), memcheck and racecheck; two rounds of one bench at m = 8192-14336, n = 3-8.
source scripts/lease.sh
T=docs/runs/2026-12-02-s19-ring-fragments.toml
{
step "parity: 8-token fragment rings, ragged, both layouts"
timeout 120 $B --variants $T parity --variant rf_112x8_s3 --variant rf_112x8_s4 --variant rf_128x8_s3 --variant rf_32x8_s4 --variant rf_112x16_s2 --shape 100,5,4352 --shape 333,17,14336 --shape 77,12,512 --shape 8200,16,4096 --shape 300,30,4096 --json $OUT/parity-rf8.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -30; echo "exit ${PIPESTATUS[0]}"
for t in 3 13; do
timeout 40 $B --variants $T parity --variant rf_112x8_s4 --variant rf_32x8_s4 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens $t 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
for tool in memcheck racecheck; do
  step "$tool: rf_112x8_s4, rf_32x8_s4"
  timeout 60 compute-sanitizer --tool $tool $B --variants $T parity --variant rf_112x8_s4 --variant rf_32x8_s4 --shape 77,11,4352 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
ab_rounds 90 new=$B -- --no-cublas --variants $T $(repeat_flag variant widen_128x16 ring_t4_tall rf_112x8_s3 rf_112x8_s4 rf_128x8_s3 rf_32x8_s4) $(repeat_flag shape 14336,3,4096 14336,4,4096 14336,5,4096 14336,8,4096 14336,4,8192 14336,8,8192 14336,8,14336 8192,8,4096 8192,4,4096)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-new
