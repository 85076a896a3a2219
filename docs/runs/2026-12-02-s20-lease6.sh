#!/bin/bash
# Session 20, lease 6, first call (on 41eb7b5, the committed rules; llama.cpp's peer builds meanwhile): lease 5's
# questions (docs/runs/2026-12-02-s20-lease5.sh, run here first: it could not start alone), then the proof for the
# changed picks (ring_mma_32x8_k4 at three and four tokens, ragged m, both layouts, and the GGUF tensor), the
# mutants, and `mmqgen run` (the main job: it prints the footprint of what it picks).
source scripts/lease.sh
peer_build
bash docs/runs/2026-12-02-s20-lease5.sh > $OUT/lease5.txt 2>&1
mkdir -p $OUT/l5 && mv $OUT/profile-*.txt $OUT/source-*.csv $OUT/checks.txt $OUT/l5/ 2>/dev/null; tar czf $OUT/l5.tgz -C $OUT l5 && rm -r $OUT/l5
{
step "parity: ring_mma_32x8_k4 at three and four tokens, ragged, both layouts"
timeout 120 $B parity --variant ring_mma_32x8_k4 --shape 4100,3,14336 --shape 333,4,9216 --shape 1000,4,10240 --shape 77,3,14592 --shape 129,4,14336 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -12; echo "exit ${PIPESTATUS[0]}"
for t in 3 4; do
  timeout 40 $B parity --variant ring_mma_32x8_k4 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens $t 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mmqgen run"
timeout 200 $B run > $OUT/run.txt 2>&1; echo "run exit $?"; grep -i "footprint: \|everything\|fail" $OUT/run.txt | tail -8
step "peer build"
peer_wait
step end
} > $OUT/checks.txt 2>&1
cat $OUT/lease5.txt | tail -40
cat $OUT/checks.txt
