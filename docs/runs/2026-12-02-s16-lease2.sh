#!/bin/bash
# Session 16, lease 2 (one call): decode log 36. B skips the records of a partial token tile's missing tokens (they
# are never read) and can roll the ring's token loop (token_unroll = 1, docs/runs/2026-12-02-s16-tokens.toml).
# Parity of the changed ring picks and the new points on ragged shapes of both layouts (partial token tiles
# included), then two rounds of OLD and B in turn on the ring picks, then two bench rounds of the new points.
# (After it ran, its per-shape table became `scripts/ab_summary.py --shapes`: the same numbers, two decimals.)
LEASE_CHANGE="+log36" source scripts/lease.sh
T=docs/runs/2026-12-02-s16-tokens.toml
NEW="ring_t4_fused_tu1 ring_t3_fused ring_t3_fused_tu1 ring_t2_fused_tu1 ring_t2_tall_fused_tu1 ring_t4_tall_tu1 ring_t4_tall_fused_tu1 ring_t2_tu1 ring_t4_long_k_tu1"
PICKS="ring_t1_fused ring_t2_fused ring_t4_fused ring_t1_tall_fused ring_t2_tall_fused ring_t4_tall ring_t1 ring_t2 ring_t4_long_k"
SHAPES="4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 4096,1,14336 4096,2,14336 4096,4,14336"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the ring picks (changed) and the new points, ragged, both layouts"
timeout 200 $B --variants $T parity $(repeat_flag variant $PICKS ring_t4 ring_t1_tall $NEW) --shape 333,3,1280 --shape 1000,2,4352 --shape 129,4,2816 --shape 77,5,4096 --shape 8200,1,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
ab_rounds 60 old=$OLD new=$B -- --no-cublas $(repeat_flag variant $PICKS) $(repeat_flag shape $SHAPES)
for round in 1 2; do
step "new points round $round"
timeout 100 $B --variants $T bench --no-cublas $(repeat_flag variant $NEW ring_t4_fused ring_t4_tall) $(repeat_flag shape $SHAPES) --json $OUT/points-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
python3 scripts/ab_summary.py --shapes $OUT points
