#!/bin/bash
# Session 11, lease 4 (one call), log 38: the token interleave of log 35 made every ldmatrix of the B fragments
# 2-way bank conflicted (rows t and t + 8 of a 272-byte stride share banks); the new interleave keeps each matrix's
# 8 rows on 8 banks. Proof first (the seven tma variants, ragged, both layouts, GGUF, the mutants, memcheck and
# racecheck on one), then the shipped picks timed by the binary before (41e4333's kernels) and after, in turn.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
V=""; for v in tma_128x128 tma_128x64 tma_64x96_b2 tma_64x96_w2 tma_64x64_w2 tma_64x64_b2 tma_64x128_b2; do V="$V --variant $v"; done
L="4096,128,4096 4096,192,4096 4096,256,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,4096,4096 14336,4096,4096"
SH=""; for s in $L; do SH="$SH --shape $s"; done
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: ragged, both layouts"
timeout 60 $B parity $V --shape 333,17,1280 --shape 1000,100,4352 --shape 200,5,1024 --shape 129,257,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 30 $B parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 300 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 30 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: tma_64x96_w2 (both layouts)"
  timeout 20 compute-sanitizer --tool $tool $B parity --variant tma_64x96_w2 --shape 200,37,1024 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "bench before (41e4333's kernels)"
MMQGEN_COMMIT=6398349 timeout 45 .device/mmqgen_old bench --picks $SH --no-cublas --json $OUT/ab-before.jsonl > $OUT/ab-before.md 2>&1; echo "bench exit $?"
step "bench after"
timeout 45 $B bench --picks $SH --no-cublas --json $OUT/ab-after.jsonl > $OUT/ab-after.md 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|exit [0-9]|ERROR SUMMARY|RACECHECK SUMMARY|===|caught|mismatch|FAIL|H200" $OUT/checks.txt | head -40
paste <(sed -n "/the config's pick/,\$p" $OUT/ab-before.md | cut -d'|' -f2-4) <(sed -n "/the config's pick/,\$p" $OUT/ab-after.md | cut -d'|' -f3-4) | head -18
