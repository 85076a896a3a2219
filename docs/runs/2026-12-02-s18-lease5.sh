#!/bin/bash
# Session 18, lease 5 (one call), on ec531bd (decode log 42: stream_ring's launch bounds name blocks_per_sm, ring_t4
# one token at a time, ring_t2_tall_fused for two tokens from m = 8192 past ring_t4_tall's K): the kernels whose SASS
# changed and that lease 4 did not prove (ring_t3_fused, ring_t4_fused) and the new rule's (ring_t2_tall_fused at
# K = 8192-14336) on ragged shapes of both layouts and the GGUF tensor, memcheck and racecheck on ring_t4 and
# ring_t4_fused; then two rounds of one bench of be0a354 (OLD, lease 4's 45-shape table) and ec531bd at the shapes
# whose picks changed.
source scripts/lease.sh
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: ring_t3_fused, ring_t4_fused, ring_t4 ragged, both layouts; ring_t2_tall_fused past K = 4096"
timeout 60 $B parity --variant ring_t3_fused --variant ring_t4_fused --variant ring_t4 --shape 333,3,1280 --shape 1000,4,4352 --shape 77,5,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --variant ring_t2_tall_fused --shape 8200,2,8192 --shape 333,3,14336 --json $OUT/parity-tall.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --variant ring_t3_fused --variant ring_t4_fused --variant ring_t4 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 4 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: ring_t4, ring_t4_fused"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant ring_t4 --variant ring_t4_fused --shape 333,4,4352 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
ab_rounds 40 old=$OLD new=$B -- --no-cublas $(repeat_flag variant ring_t1_fused ring_t2_fused ring_t3_fused ring_t4_fused ring_t1_tall_fused ring_t2_tall_fused ring_t4_tall ring_t1 ring_t2 ring_t4 ring_t4_long_k) $(repeat_flag shape 4096,1,4096 4096,3,4096 4096,4,4096 14336,1,4096 14336,3,4096 14336,4,4096 4096,1,14336 4096,2,14336 4096,4,14336 4096,3,8192 4096,4,8192 14336,2,8192)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
