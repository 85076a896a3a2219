#!/bin/bash
# Session 10, lease 2, call 1: llama.cpp's build in the background while tma_128x128 (now two stages) is proven:
# parity on ragged shapes of both layouts and a GGUF tensor, the mutants (one plants in it), compute-sanitizer;
# then the main job.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
( timeout 280 bash .device/peer/llamacpp-perf.sh 4096,1,4096 > $OUT/peer-build.txt 2>&1; echo "peer build exit $?" >> $OUT/peer-build.txt ) &
step "parity: ragged, both layouts"
timeout 100 $B parity --variant tma_128x128 --shape 333,17,1280 --shape 1000,100,4352 --shape 4097,130,4096 --shape 200,5,1024 --shape 129,257,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 40 $B parity --variant tma_128x128 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 5 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: tma_128x128"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant tma_128x128 --shape 200,5,1024 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "mmqgen run"
timeout 200 $B run > $OUT/run.txt 2>&1; echo "run exit $?"
step "wait for the peer build"
wait
tail -2 $OUT/peer-build.txt
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|ERROR SUMMARY|RACECHECK SUMMARY|===|caught|missed|mismatch|FAIL|peer build|run exit|H200" $OUT/checks.txt | head -40
grep -iE "case\(s\)|footprint: tma|could not" $OUT/run.txt | head
