#!/bin/bash
# Session 15, lease 7 (one call), on the commit whose template helper fragment_bytes changed the generated source of
# every fold and widen variant (SASS identical on all but wgmma_regfold_128x64): the mma.sync rate probe (f16 with
# f32 accumulation against int8, for PERF.md's next prefill lever), the whole catalogue on two ragged shapes of both
# layouts, the changed picks on the GGUF tensor, every mutant, memcheck and racecheck, where the n = 1 picks spend
# their stalls (the profiles lease 5 was to take), and `mmqgen run` last.
source scripts/lease.sh
CHANGED="tma_128x128 tma_64x128_b2 tma_64x64_b2 tma_64x96_b2 tma_64x96_w2 widen_128x16 widen_128x16_ks4 widen_112x32 widen_64x32_ks4 regfold_64x64_ks4 regfold_64x32_ks2 wgmma_regfold_128x64"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "probe: mma.sync rates"
timeout 60 python3 docs/runs/2026-12-02-s15-mma-rate.py 2>&1 | tail -6
step "parity: the whole catalogue, 333x17x1280 and 1000x100x4352, both layouts"
timeout 260 $B parity --shape 333,17,1280 --shape 1000,100,4352 --json $OUT/catalogue-parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: the changed picks on the GGUF tensor, 32 tokens"
timeout 60 $B parity $(repeat_flag variant $CHANGED) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 32 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants 2>&1 | grep -v "^\["; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: tma_128x128, widen_128x16_ks4"
  timeout 60 compute-sanitizer --tool $tool $B parity --variant tma_128x128 --variant widen_128x16_ks4 --shape 333,17,2816 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
for vs in ring_t1_tall_fused:14336,1,4096 ring_t1_fused:4096,1,4096 ring_t1:4096,1,14336; do
  step "profile: ${vs%%:*} at ${vs##*:}"
  timeout 60 $B profile --variant ${vs%%:*} --shape ${vs##*:} 2>&1 | tail -22
done
step "mmqgen run"
timeout 150 $B run > $OUT/run.txt 2>&1; echo "run exit $?"; grep -i "footprint: \|everything\|fail" $OUT/run.txt | tail -8
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
