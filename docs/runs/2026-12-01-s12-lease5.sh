#!/bin/bash
# Session 12, lease 5 (one call), decode log 23: the plain rings load up to four 16-byte pieces of a thread's token
# records before storing any (one round trip after griddepcontrol.wait instead of one a piece). Parity first, then
# the binary before (7e932a0) and after, twice each in turn, on the shapes their picks take.
LEASE_CHANGE="+log23" source scripts/lease.sh
R=$(repeat_flag variant ring_t1 ring_t1_tall ring_t2 ring_t4 ring_t4_tall ring_t4_long_k)
D=$(repeat_flag shape 4096,3,4096 4096,4,4096 14336,2,4096 14336,3,4096 14336,4,4096 4096,1,14336 4096,2,14336 4096,4,14336)
{
step "parity: the plain rings, ragged, both layouts"
timeout 60 $B parity $R --shape 333,1,1280 --shape 1000,3,4352 --shape 129,4,2816 --shape 4100,2,4096 --shape 300,4,14336 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 30 $B parity $R --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 3 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: ring_t4, ring_t4_tall"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant ring_t4 --variant ring_t4_tall --shape 200,4,2048 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
for round in 1 2; do
  step "round $round: before"
  MMQGEN_COMMIT=7e932a0 timeout 40 $OLD bench $R $D --no-cublas --json $OUT/before-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
  step "round $round: after"
  timeout 40 $B bench $R $D --no-cublas --json $OUT/after-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
