#!/bin/bash
# Session 18, lease 4, first call (the second, right after on the same machine: docs/runs/2026-12-02-s18-lease4-b.sh),
# on the committed code (be0a354: decode logs 40-41): while llama.cpp's peer builds, the three rings whose geometry
# changed (ring_t2, ring_t4, ring_t2_tall_fused) on ragged shapes of both layouts and on the GGUF tensor, memcheck and
# racecheck on them, the mutants; then two rounds of two benches for the rules beyond the 45 shapes: one and two
# tokens at m = 14336 for K above 4096 (fused rings there?), three and four tokens at m = 4096 for K 8192-14336
# (ring_t4 to K = 14080, ring_t4_long_k beyond, against the widened engine); and an A/B of the rings of 8 or 12
# warps against a second binary (.device/mmqgen_lb: be0a354 with stream_ring's launch bounds naming blocks_per_sm
# even when it is 1, so that ptxas may give those rings more than 128 registers; decode log 42).
source scripts/lease.sh
T=docs/runs/2026-12-02-s18-lease4.toml
CHANGED="ring_t2 ring_t4 ring_t2_tall_fused"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "peer build (background)"
peer_build
step "parity: the changed rings, ragged, both layouts"
timeout 90 $B parity $(repeat_flag variant $CHANGED) --shape 333,2,1280 --shape 1000,3,4352 --shape 8200,2,4096 --shape 77,4,12544 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 30 $B parity --variant ring_t2 --shape 100,2,14336 --shape 129,1,26624 --json $OUT/parity-long-k.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for t in 2 4; do
  timeout 40 $B parity $(repeat_flag variant $CHANGED) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens $t 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "parity: the second binary's rings of 8 or 12 warps, ragged, both layouts"
timeout 60 .device/mmqgen_lb --variants $T parity $(repeat_flag variant ring_t1 ring_t1_tall ring_t1_fused ring_t1_tall_fused ring_t2 ring_t4 ring_t4_tu1 ring_t4_tall ring_t4_long_k) --shape 333,3,4352 --shape 1000,2,1280 --json $OUT/parity-lb.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: the changed rings"
  timeout 60 compute-sanitizer --tool $tool $B parity $(repeat_flag variant $CHANGED) --shape 333,3,4352 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "waiting for the peer build"
peer_wait
for round in 1 2; do
  step "bench round $round: m = 14336, n = 1-2, K above 4096"
  timeout 60 $B --variants $T bench --no-cublas $(repeat_flag variant ring_t1_tall ring_t1_tall_fused ring_t2 ring_t2_tall_fused ring_t2_tall_fused_w8s2 ring_t4_tall) $(repeat_flag shape 14336,1,6144 14336,1,8192 14336,1,12288 14336,2,6144 14336,2,8192 14336,2,12288) --json $OUT/tall-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
  step "bench round $round: m = 4096, n = 3-4, K 8192-14336"
  timeout 60 $B bench --no-cublas $(repeat_flag variant ring_t4 ring_t4_long_k widen_128x16_ks4) $(repeat_flag shape 4096,3,8192 4096,3,12288 4096,3,14080 4096,4,10240 4096,4,14080 4096,3,14336 4096,4,14336) --json $OUT/long-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
ab_rounds 60 new=$B lb=.device/mmqgen_lb -- --no-cublas --variants $T $(repeat_flag variant ring_t1 ring_t1_tall ring_t1_fused ring_t1_tall_fused ring_t2 ring_t4 ring_t4_tu1 ring_t4_tall ring_t4_long_k) $(repeat_flag shape 4096,1,4096 4096,1,8192 4096,1,14336 14336,1,4096 14336,1,8192 4096,2,8192 4096,2,14336 4096,3,6144 4096,4,8192 14336,3,4096 14336,4,4096 4096,3,14336 4096,4,14336)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT tall long
python3 scripts/ab_summary.py $OUT new
