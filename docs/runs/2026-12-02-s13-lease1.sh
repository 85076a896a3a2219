#!/bin/bash
# Session 13, lease 1 (one call), on the committed code (a3a3635's kernels):
#  1. memcheck and racecheck on ring_t4_fused (session 12's pick with parity proof only);
#  2. decode log 25: the copy-engine-fed register fold (refill = tma) with 16/32-token tiles and K split, a `tune`
#     of docs/runs/2026-12-02-s13-decode-tma.toml's points beside the shipped picks at n = 8, 16, 32;
#  3. ncu on the n = 16 pick at 14336x16x4096 (where the time goes before the next engine);
#  4. `mmqgen run` with room to finish (its footprint line).
source scripts/lease.sh
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for tool in memcheck racecheck; do
  step "$tool: ring_t4_fused"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant ring_t4_fused --shape 200,4,2048 --shape 129,3,2816 --layout padded 2>&1 | tail -3; echo "exit ${PIPESTATUS[0]}"
done
step "tune: decode-tma sweep beside the picks"
timeout 240 $B tune --variants docs/runs/2026-12-02-s13-decode-tma.toml --sweep dt --variant regfold_64x16_ks4 --variant regfold_64x32_ks4 \
  $(repeat_flag shape 14336,8,4096 14336,16,4096 14336,32,4096 4096,8,4096 4096,16,4096 4096,32,4096 4096,8,14336 4096,16,14336 4096,32,14336) \
  --output $OUT/dt-tuned.toml > $OUT/dt-tune.txt 2>&1; echo "tune exit $?"; tail -4 $OUT/dt-tune.txt
step "profile: regfold_64x16_ks4 at 14336x16x4096"
timeout 90 $B profile --variant regfold_64x16_ks4 --shape 14336,16,4096 > $OUT/profile.txt 2>&1; echo "profile exit $?"
step "mmqgen run"
timeout 200 $B run > $OUT/run.txt 2>&1; echo "run exit $?"; grep -i "footprint\|GGUF\|pass\|fail" $OUT/run.txt | tail -6
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
head -60 $OUT/dt-tuned.ranking.md 2>/dev/null
