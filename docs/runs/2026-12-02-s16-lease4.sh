#!/bin/bash
# Session 16, lease 4 (one call): decode log 37. B is 9960421 plus token_unroll = 2 (the rings' token loop two
# tokens at a time, docs/runs/2026-12-02-s16-tokens2.toml). Parity of the new points on ragged shapes of both
# layouts while llama.cpp's peer builds; then two bench rounds beside the n = 3-4 picks; then llama.cpp's perf script
# alone on the same four shapes.
# (After it ran, its per-shape table became `scripts/ab_summary.py --shapes` and its peer build scripts/lease.sh's
# peer_build / peer_wait: the same commands.)
LEASE_CHANGE="+log37" source scripts/lease.sh
T=docs/runs/2026-12-02-s16-tokens2.toml
NEW="ring_t4_fused_tu2 ring_t3_fused_tu2 ring_t4_tall_tu2"
S="4096,3,4096 4096,4,4096 14336,3,4096 14336,4,4096"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "peer build (background)"
peer_build
step "parity: the new points, ragged, both layouts"
timeout 100 $B --variants $T parity $(repeat_flag variant $NEW) --shape 333,3,1280 --shape 1000,4,4352 --shape 77,5,4096 --shape 8200,3,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "waiting for the peer build"
peer_wait
for round in 1 2; do
step "bench round $round"
timeout 60 $B --variants $T bench --no-cublas $(repeat_flag variant ring_t4_fused ring_t3_fused ring_t4_tall $NEW) $(repeat_flag shape $S) --json $OUT/bench-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step "peer alone"
timeout 60 bash .device/peer/llamacpp-perf.sh $S > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT bench
tail -6 $OUT/llamacpp.txt
