#!/bin/bash
# Session 13, lease 5 (one call): a3a3635 plus engine mma_k16_widen and its four catalogue variants.
#  1. the four bit-exact on ragged shapes of both layouts (n = 3, 5, 8, 17, 32; K = 14336; m not a tile multiple),
#     the GGUF tensor at 5, 16 and 32 tokens; memcheck and racecheck on each;
#  2. decode log 28: 112-row blocks with K whole (128 blocks at m = 14336) against the 128-row picks;
#  3. the widen variants at n = 3-4 against the rings there.
LEASE_CHANGE="+widen3" source scripts/lease.sh
W=docs/runs/2026-12-02-s13-widen.toml
V=$(repeat_flag variant widen_128x16 widen_128x16_ks4 widen_128x32 widen_64x32_ks4)
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the four, ragged, both layouts; GGUF"
timeout 150 $B parity $V --shape 1000,77,2816 --shape 333,3,1280 --shape 8200,8,4096 --shape 129,17,14336 --shape 4100,32,4096 --shape 77,5,256 --shape 9000,16,2048 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
for t in 5 16 32; do
  timeout 60 $B parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens $t 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
for tool in memcheck racecheck; do
  step "$tool: the four"
  timeout 90 compute-sanitizer --tool $tool $B parity $V --shape 333,17,2816 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "tune: 112-row blocks against the m >= 8192 picks"
timeout 200 $B tune --variants $W --sweep w112 --variant widen_128x16 --variant widen_128x32 --variant regfold_64x16_ks4 \
  $(repeat_flag shape 14336,8,4096 14336,16,4096 14336,24,4096 14336,32,4096 14336,16,14336) \
  --output $OUT/w112-tuned.toml > $OUT/w112-tune.txt 2>&1; echo "tune exit $?"; tail -2 $OUT/w112-tune.txt
step "bench: n = 3-4, widen against the rings"
timeout 90 $B bench --variant widen_128x16 --variant widen_128x16_ks4 --variant ring_t4 --variant ring_t4_fused --variant ring_t4_tall --variant ring_t4_long_k \
  $(repeat_flag shape 4096,3,4096 4096,4,4096 14336,3,4096 14336,4,4096 4096,3,14336 4096,4,14336) --no-cublas --json $OUT/n34.jsonl > $OUT/n34.md 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
head -22 $OUT/w112-tuned.ranking.md | cut -c1-200
