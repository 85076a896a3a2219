#!/bin/bash
# Session 9 final lease: the five tma_* catalogue variants by name (parity on ragged shapes of both layouts and
# a GGUF tensor, the mutants, memcheck and racecheck), the shipped picks from 33 tokens and at the nine prefill
# shapes beside cuBLAS, then the main job.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
T="--variant tma_128x128 --variant tma_128x64 --variant tma_64x96 --variant tma_64x96_w2 --variant tma_64x64_w2"
SH=""; for s in 4096,48,4096 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,48,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096; do SH="$SH --shape $s"; done
{
step "parity: ragged, both layouts"
timeout 120 $B parity $T --shape 333,17,1280 --shape 1000,100,4352 --shape 4097,130,4096 --shape 200,5,1024 --shape 129,257,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 40 $B parity $T --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 5 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants $T 2>&1 | tail -8; echo "exit ${PIPESTATUS[0]}"
for v in tma_128x64 tma_64x96_w2; do for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: $v"
  timeout 30 compute-sanitizer --tool $tool $B parity --variant $v --shape 200,5,1024 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done; done
step "bench: the shipped picks from 33 tokens (cuBLAS beside)"
timeout 200 $B bench --picks --variant tma_128x128 $SH --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "bench exit $?"
step "mmqgen run"
timeout 150 $B run > $OUT/run.txt 2>&1; echo "run exit $?"
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|ERROR SUMMARY|RACECHECK SUMMARY|===|bench exit|run exit|caught|missed|mismatch|FAIL" $OUT/checks.txt | head -50
sed -n "/the config's pick/,\$p" $OUT/bench.md | head -30
grep -iE "case\(s\)|footprint: tma" $OUT/run.txt | head
