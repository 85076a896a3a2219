#!/bin/bash
# Session 19, lease 5 (one call; four machine starts were refused before it, so no llama.cpp build and no
# same-lease table), on the committed code (1b18e67: decode log 43): the catalogue's ring_mma_128x8 on ragged shapes
# of both layouts (several token tiles, a last stage of one super-block, idle row groups) and on the GGUF tensor,
# memcheck and racecheck, the mutants, and `mmqgen run` (the main job, which prints the footprint). A second binary
# (.device/mmqgen_wk: 1b18e67 plus the warps_k field of docs/runs/2026-12-02-s19-warps-k.toml, whose ring_mma_128x8
# is the same kernel) is checked on ragged shapes and benched, two rounds, against the picks at m = 4096.
source scripts/lease.sh
T=docs/runs/2026-12-02-s19-warps-k.toml
WK=.device/mmqgen_wk
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: ring_mma_128x8, ragged, both layouts"
timeout 90 $B parity --variant ring_mma_128x8 --shape 100,3,4352 --shape 333,17,14336 --shape 77,8,512 --shape 8200,5,8192 --shape 14400,8,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
for t in 3 8; do
  timeout 40 $B parity --variant ring_mma_128x8 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens $t 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: ring_mma_128x8"
  timeout 60 compute-sanitizer --tool $tool $B parity --variant ring_mma_128x8 --shape 333,11,4352 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "parity (second binary): warps_k points, ragged, both layouts"
timeout 90 $WK --variants $T parity --variant rf_32x8_k4_s2 --variant rf_32x16_k4_s2 --variant rf_64x8_k2_s2 --variant rf_32x8_k2_s2_b2 --shape 100,5,4352 --shape 333,17,14336 --shape 77,12,512 --shape 4100,8,4096 --shape 200,3,1280 --json $OUT/parity-wk.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -20; echo "exit ${PIPESTATUS[0]}"
timeout 40 $WK --variants $T parity --variant rf_32x8_k4_s2 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 9 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 60 compute-sanitizer --tool racecheck $WK --variants $T parity --variant rf_32x8_k4_s2 --shape 77,9,4352 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
ab_rounds 60 wk=$WK -- --no-cublas --variants $T $(repeat_flag variant widen_128x16_ks4 rf_32x8_k4_s2 rf_32x16_k4_s2 rf_64x8_k2_s2 rf_32x8_k2_s2_b2) $(repeat_flag shape 4096,8,4096 4096,12,4096 4096,16,4096 4096,8,8192 4096,8,14336 4096,16,14336)
step "mmqgen run"
timeout 200 $B run > $OUT/run.txt 2>&1; echo "run exit $?"; grep -i "footprint: \|everything\|fail" $OUT/run.txt | tail -8
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-wk
