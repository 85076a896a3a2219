#!/bin/bash
# Session 12, lease 6 (one call), decode log 24: a fused ring's warp loads all the records it gets at K = 4096 (up
# to four) from x before it quantizes any (ring_fused_records_at_once; only ring_t2_tall_fused among the picks
# changes: 2 -> 4). Parity first, then the binary before (86fc598's kernels) and after, twice each in turn.
LEASE_CHANGE="+log24" source scripts/lease.sh
R="--variants .device/fq.toml --variant ring_t2_tall_fused --variant ring_t4_fq --variant ring_t4_tall_fq"
C="--variant ring_t4 --variant ring_t4_tall"
D=$(repeat_flag shape 14336,2,4096 14336,3,4096 14336,4,4096 4096,3,4096 4096,4,4096)
{
step "parity: ragged, both layouts; GGUF"
timeout 60 $B parity $R --shape 333,2,1280 --shape 8200,3,4096 --shape 129,4,2816 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 30 $B parity $R --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 4 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "racecheck: ring_t2_tall_fused"
timeout 30 compute-sanitizer --tool racecheck $B parity --variant ring_t2_tall_fused --shape 200,2,2048 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
for round in 1 2; do
  step "round $round: before"
  timeout 30 $OLD bench $R $C $D --no-cublas --json $OUT/before-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
  step "round $round: after"
  timeout 30 $B bench $R $C $D --no-cublas --json $OUT/after-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
