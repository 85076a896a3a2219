#!/bin/bash
# Session 11, lease 1 (two calls: `bash ... proof`, then `bash ... tune`): log 35 (chunk-major activation scales, one 16-byte load per four tokens, the raw
# entry point fed by the copy engine) proven before any timing, then timed against the binary before it, then the
# tma sweep tuned on the new code.
#  1. parity of the seven catalogue tma variants on ragged shapes of both layouts and a GGUF tensor, the mutants,
#     compute-sanitizer memcheck and racecheck on three of them (both layouts);
#  2. the shipped picks of 19 prefill shapes timed by the binary of 1774454 and by this one, one after the other;
#  3. `tune` over the 91 spill-free points of examples/sweeps/regfold_tma.toml on the same 19 shapes.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
V=""; for v in tma_128x128 tma_128x64 tma_64x96_b2 tma_64x96_w2 tma_64x64_w2 tma_64x64_b2 tma_64x128_b2; do V="$V --variant $v"; done
L="4096,96,4096 4096,128,4096 4096,192,4096 4096,256,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096 14336,1024,4096"
SH=""; for s in $L; do SH="$SH --shape $s"; done
if [ "$1" = proof ]; then {
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: ragged, both layouts"
timeout 150 $B parity $V --shape 333,17,1280 --shape 1000,100,4352 --shape 200,5,1024 --shape 129,257,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 40 $B parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 5 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 40 $B parity --mutants 2>&1 | tail -9; echo "exit ${PIPESTATUS[0]}"
for v in tma_128x128 tma_64x96_w2 tma_64x128_b2; do for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: $v (both layouts)"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant $v --shape 200,5,1024 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done; done
step "bench before (1774454): the shipped picks"
MMQGEN_COMMIT=1774454 timeout 100 .device/mmqgen_old bench --picks --variant tma_128x128 $SH --no-cublas --json $OUT/ab-before.jsonl > $OUT/ab-before.md 2>&1; echo "bench exit $?"
step "bench after: the shipped picks"
timeout 100 $B bench --picks --variant tma_128x128 $SH --no-cublas --json $OUT/ab-after.jsonl > $OUT/ab-after.md 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
else {
step "tune"
timeout 300 $B --variants examples/sweeps/regfold_tma.toml tune --sweep tma $SH --output $OUT/tune.toml --ranking $OUT/tune.ranking > $OUT/tune.log 2>&1; echo "tune exit $?"
step end
} > $OUT/tune-checks.txt 2>&1; fi
cat $OUT/tune-checks.txt 2>/dev/null
[ -f $OUT/checks.txt ] && grep -E "case\(s\)|^exit|exit [0-9]|ERROR SUMMARY|RACECHECK SUMMARY|===|caught|missed|mismatch|FAIL|H200" $OUT/checks.txt | head -60
[ -f $OUT/ab-after.md ] && sed -n "/the config's pick/,\$p" $OUT/ab-before.md | head -24
[ -f $OUT/ab-after.md ] && sed -n "/the config's pick/,\$p" $OUT/ab-after.md | head -24
[ -f $OUT/tune.log ] && tail -3 $OUT/tune.log && head -30 $OUT/tune.ranking.md
