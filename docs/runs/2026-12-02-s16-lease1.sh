#!/bin/bash
# Session 16, lease 1 (one call): decode log 35, ring items shared by a pair of lanes (superblock_lanes = 2,
# docs/runs/2026-12-02-s16-lanes.toml): parity on ragged shapes of both layouts, then two bench rounds beside the
# ring picks at n = 1-4; then prefill log 41, the wgmma fold at 96-128 tokens a warpgroup
# (docs/runs/2026-12-02-s16-wgmma128.toml) beside tma_128x128 on two prefill shapes.
# (After it ran, its per-shape table became `scripts/ab_summary.py --shapes`: the same numbers, two decimals.)
LEASE_CHANGE="+log35" source scripts/lease.sh
L=docs/runs/2026-12-02-s16-lanes.toml
W=docs/runs/2026-12-02-s16-wgmma128.toml
NEW="r4f_sl2 r3f r3f_sl2 r2f_sl2 r1f_sl2 r1tf_sl2 r2tf_sl2 r4t_sl2 r4tf_sl2 r1_sl2 r2_sl2"
PICKS="ring_t1_fused ring_t2_fused ring_t4_fused ring_t1_tall_fused ring_t2_tall_fused ring_t4_tall ring_t1 ring_t2"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the new rings, ragged, both layouts"
timeout 150 $B --variants $L parity $(repeat_flag variant $NEW) --shape 333,3,1280 --shape 1000,2,4352 --shape 129,4,2816 --shape 8200,1,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
for round in 1 2; do
step "decode bench round $round"
timeout 200 $B --variants $L bench --no-cublas $(repeat_flag variant $PICKS $NEW) $(repeat_flag shape 4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 4096,1,14336 4096,2,14336) --json $OUT/decode-$round.jsonl > $OUT/decode-$round.log 2>&1; echo "bench exit $?"
done
step "prefill bench"
timeout 150 $B --variants $W bench --no-cublas $(repeat_flag variant tma_128x128 wg128_t96_acc1 wg128_t128_acc1 wg128_t96_acc2) $(repeat_flag shape 4096,512,4096 4096,2048,4096) --json $OUT/prefill-1.jsonl > $OUT/prefill-1.log 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT decode prefill
