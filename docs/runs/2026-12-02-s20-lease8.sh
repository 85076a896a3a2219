#!/bin/bash
# Session 20, lease 8 (one call): lease 7's ncu source view put the fragment rings' largest stall on the token
# slot's wait (20% of the samples in ring_mma_128x8 at 14336x8x4096, 27% in ring_mma_32x8_k4 at 4096x8x4096, the
# rows' wait 4% / 9%): every warp reads a slot's tokens and the last one done refills it, and the copy then queues
# behind the weights'. Change (.device/mmqgen_ts: 16a3641 plus docs/runs/2026-12-02-s20-lease8-change.patch): the
# token slots become a ring of their own, twice the weight stages deep; HACK_TS overrides the depth for this A/B only
# (3 = 128x8's old depth, 2 = the k4 ring's). Parity, memcheck and racecheck of the new form first.
source scripts/lease.sh
N=.device/mmqgen_ts
S128="$(repeat_flag shape 14336,8,4096 14336,4,4096 14336,3,4096 8192,8,4096 14336,8,14336)"
SK4="$(repeat_flag shape 4096,8,4096 4096,8,14336 4096,4,14336 4096,5,4096 4096,4,10240)"
{
step "parity: the token ring, ragged, both layouts"
timeout 120 $N parity --variant ring_mma_128x8 --variant ring_mma_32x8_k4 --shape 100,5,4352 --shape 333,17,14336 --shape 77,8,512 --shape 8200,5,8192 --shape 200,3,1280 --shape 300,30,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -12; echo "exit ${PIPESTATUS[0]}"
timeout 40 $N parity --variant ring_mma_32x8_k4 --variant ring_mma_128x8 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 9 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool"
  timeout 60 compute-sanitizer --tool $tool $N parity --variant ring_mma_32x8_k4 --variant ring_mma_128x8 --shape 333,11,4352 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
for round in 1 2; do
  for ts in 3 4 6 8; do
    step "round $round, 128x8, token slots $ts"
    HACK_TS=$ts timeout 60 $N bench --no-cublas --variant ring_mma_128x8 $S128 --json $OUT/ab-a$ts-$round.jsonl > /dev/null 2>&1; echo "exit $?"
  done
  for ts in 2 3 4; do
    step "round $round, 32x8_k4, token slots $ts"
    HACK_TS=$ts timeout 60 $N bench --no-cublas --variant ring_mma_32x8_k4 $SK4 --json $OUT/ab-b$ts-$round.jsonl > /dev/null 2>&1; echo "exit $?"
  done
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt | grep -v '^$' | grep -v 'round\|^exit 0' 
for t in a3 a4 a6 a8 b2 b3 b4; do echo "== $t"; python3 scripts/ab_summary.py --shapes $OUT ab-$t; done
cd $OUT && tar czf ab.tgz ab-*.jsonl && rm ab-*.jsonl
