#!/bin/bash
# Session 11, lease 3 (one call), after the tma variants' description said what they do (cp_async_activations =
# off: the copy engine stages their tokens and scales; the unused cp.async helpers left their source):
#  1. parity of the seven tma variants on ragged shapes of both layouts and the GGUF tensor, and the mutants;
#  2. are the tma variants' raw entry points (log 35: tokens and scales by the copy engine, blocks by every
#     thread) now worth picking for raw registrations? The raw picks beside four tma variants, on the raw layout.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
B=.device/mmqgen
S=$SECONDS
step() { echo; echo "=== [$((SECONDS - S)) s] $*"; }
V=""; for v in tma_128x128 tma_128x64 tma_64x96_b2 tma_64x96_w2 tma_64x64_w2 tma_64x64_b2 tma_64x128_b2; do V="$V --variant $v"; done
L="4096,128,4096 14336,128,4096 4096,256,4096 14336,256,4096 4096,512,4096 14336,512,4096 4096,512,14336 4096,2048,4096 4096,4096,4096"
SH=""; for s in $L; do SH="$SH --shape $s"; done
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: ragged, both layouts"
timeout 100 $B parity $V --shape 333,17,1280 --shape 1000,100,4352 --shape 200,5,1024 --shape 129,257,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 40 $B parity $V --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 5 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 40 $B parity --mutants 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
step "bench, raw layout: the raw picks and four tma variants"
timeout 150 $B bench --layout raw --picks --variant tma_128x128 --variant tma_64x128_b2 --variant tma_64x64_b2 --variant tma_64x96_b2 $SH --no-cublas --json $OUT/raw-bench.jsonl > $OUT/raw-bench.md 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|exit [0-9]|===|caught|missed|mismatch|FAIL|H200" $OUT/checks.txt | head -40
python3 - $OUT/raw-bench.jsonl <<'PY'
import json, sys
rows = json.load(open(sys.argv[1])) if open(sys.argv[1]).read(1) == "[" else [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    if r.get("kind") == "variant" and r.get("status") == "timed":
        by.setdefault((r["m"], r["n"], r["k"]), []).append((r["median_us"], r["variant"]))
for s, v in by.items():
    print(s, "  ".join(f"{n} {t:.1f}" for t, n in sorted(v)))
PY
sed -n "/the config's pick/,\$p" $OUT/raw-bench.md | head -14
