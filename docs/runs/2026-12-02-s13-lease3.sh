#!/bin/bash
# Session 13, lease 3 (one call): a3a3635 plus engine mma_k16_widen (the fold's chunk loop back to its old
# instruction order: chunk_mmas / chunk_sum), its two catalogue picks, and profile's --variants fix.
#  1. widen_128x32_ks4 and widen_64x32_ks4_b4: ragged shapes on both layouts (n = 3, 8, 17, 32; K = 14336), the
#     GGUF tensor at 17 and 32 tokens, memcheck and racecheck;
#  2. A/B of tma_64x64_b2 (lease 2: -1.1-1.5% with the first form of the refactor): before (a3a3635) and after;
#  3. ncu: where the widen engine's time goes at n = 16 (K split in four at m = 14336, unsplit at m = 4096).
LEASE_CHANGE="+widen" source scripts/lease.sh
W=docs/runs/2026-12-02-s13-widen.toml
V="--variant widen_128x32_ks4 --variant widen_64x32_ks4_b4"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the two picks, ragged, both layouts; GGUF"
timeout 120 $B parity $V --shape 1000,77,2816 --shape 333,3,1280 --shape 8200,8,4096 --shape 129,17,14336 --shape 4100,32,4096 --shape 77,32,256 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
for t in 17 32; do
  timeout 60 $B parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens $t 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
for tool in memcheck racecheck; do
  step "$tool: the two picks"
  timeout 60 compute-sanitizer --tool $tool $B parity $V --shape 333,17,2816 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
P="--variant tma_64x64_b2 $(repeat_flag shape 4096,128,4096 14336,256,4096 4096,512,4096)"
for round in 1 2; do
  step "round $round: before"
  timeout 60 $OLD bench $P --no-cublas --json $OUT/ab-before-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
  step "round $round: after"
  timeout 60 $B bench $P --no-cublas --json $OUT/ab-after-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step "profile: w128_t16_ks4_s2_b2 at 14336x16x4096"
timeout 90 $B profile --variants $W --variant w128_t16_ks4_s2_b2 --shape 14336,16,4096 > $OUT/profile-ks4.txt 2>&1; echo "profile exit $?"
step "profile: w128_t16_ks1_s4_b1 at 4096x16x4096"
timeout 90 $B profile --variants $W --variant w128_t16_ks1_s4_b1 --shape 4096,16,4096 > $OUT/profile-ks1.txt 2>&1; echo "profile exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
head -30 $OUT/profile-ks4.txt; head -30 $OUT/profile-ks1.txt
