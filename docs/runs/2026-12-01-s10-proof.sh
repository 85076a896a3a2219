#!/bin/bash
# Session 10, lease 1, call 1: llama.cpp's build in the background (CPU only) while the new fold is proven on the
# GPU: parity of every variant whose source changed (ragged shapes, both layouts, a GGUF tensor), the mutants,
# compute-sanitizer on three of them.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
V=""; for v in prefolded_per256 prefolded_per256_wide_n prefolded_per32 prefolded_small_n prefolded_spread regfold_128x64 regfold_64x64 regfold_64x128 regfold_16x128_warps regfold_128x128 regfold_64x128_b2 regfold_128x96 regfold_64x48 tma_128x128 tma_128x64 tma_64x96 tma_64x96_w2 tma_64x64_w2 regfold_64x16_ks4 regfold_64x32_ks4 regfold_64x64_ks4 regfold_64x32_ks2 regfold_64x64_ks2 wgmma_regfold_128x64; do V="$V --variant $v"; done
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
( timeout 280 bash .device/peer/llamacpp-perf.sh 4096,1,4096 > $OUT/peer-build.txt 2>&1; echo "peer build exit $?" >> $OUT/peer-build.txt ) &
step "parity: ragged, both layouts"
timeout 240 $B parity $V --shape 333,17,1280 --shape 1000,100,4352 --shape 200,5,1024 --shape 129,257,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 60 $B parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 5 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -9; echo "exit ${PIPESTATUS[0]}"
for v in tma_128x128 tma_64x96 regfold_64x16_ks4; do for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: $v"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant $v --shape 200,5,1024 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done; done
step "wait for the peer build"
wait
tail -3 $OUT/peer-build.txt
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|ERROR SUMMARY|RACECHECK SUMMARY|===|caught|missed|mismatch|FAIL|peer build|H200" $OUT/checks.txt | head -60
