#!/bin/bash
# Session 13, lease 2 (one call), decode log 26: engine mma_k16_widen (a3a3635 plus the engine, uncommitted).
#  1. `tune` of docs/runs/2026-12-02-s13-widen.toml's points beside the picks at n = 8-32 (parity first on
#     1000x77x2816, as tune does);
#  2. the four best bit-exact on ragged shapes of both layouts (n = 3, 8, 17, 32, K = 14336 among them) and a GGUF
#     tensor;
#  3. A/B of the prefill picks, whose chunk loop now calls chunk_sums: the binary before (a3a3635) and after, twice;
#  4. ncu on the best at 14336x16x4096.
LEASE_CHANGE="+widen" source scripts/lease.sh
W=docs/runs/2026-12-02-s13-widen.toml
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "tune: widen sweeps beside the picks"
timeout 300 $B tune --variants $W --variants docs/runs/2026-12-02-s13-decode-tma.toml --sweep w32 --sweep w64 --sweep w128 \
  --variant regfold_64x16_ks4 --variant regfold_64x32_ks4 --variant dt_j64_t32_wm4_ks4_s2_b2 \
  $(repeat_flag shape 14336,8,4096 14336,16,4096 14336,24,4096 14336,32,4096 4096,8,4096 4096,16,4096 4096,24,4096 4096,32,4096 4096,8,14336 4096,16,14336 4096,32,14336) \
  --output $OUT/wd-tuned.toml > $OUT/wd-tune.txt 2>&1; echo "tune exit $?"; tail -3 $OUT/wd-tune.txt
TOP=$(sed -n 's/^| [0-9]* | \(w[0-9]*_[0-9a-z_]*\) |.*/\1/p' $OUT/wd-tuned.ranking.md | head -4)
echo "top: $TOP"
step "parity: the top four, ragged, both layouts; GGUF"
timeout 120 $B parity --variants $W $(repeat_flag variant $TOP) --shape 1000,77,2816 --shape 333,3,1280 --shape 8200,8,4096 --shape 129,17,14336 --shape 4100,32,4096 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --variants $W $(repeat_flag variant $TOP) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 17 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
P="--variant tma_64x64_b2 --variant tma_128x128 --variant tma_64x96_b2 --variant tma_64x128_b2 $(repeat_flag shape 4096,128,4096 14336,256,4096 4096,512,4096 14336,512,4096)"
for round in 1 2; do
  step "round $round: before"
  timeout 60 $OLD bench $P --no-cublas --json $OUT/ab-before-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
  step "round $round: after"
  timeout 60 $B bench $P --no-cublas --json $OUT/ab-after-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
BEST=$(echo $TOP | cut -d' ' -f1)
step "profile: $BEST at 14336x16x4096"
timeout 90 $B profile --variants $W --variant $BEST --shape 14336,16,4096 > $OUT/profile.txt 2>&1; echo "profile exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
head -40 $OUT/wd-tuned.ranking.md
head -12 $OUT/profile.txt
