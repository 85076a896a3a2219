#!/usr/bin/env bash
# docs/PERF.md's standing tables, again, on the GPU machine: the embedded default's picks at the nine prefill shapes
# and at the decode and small-batch shapes, each bench with cuBLAS beside it and llama.cpp's perf script alone on
# the GPU after it, the same lease (scripts/device/README.md says what .device/ must hold). Outputs in $OUT:
# prefill-{bench.jsonl,bench.md,llamacpp.txt}, decode-{bench.jsonl,bench.md,llamacpp.txt}, checks.txt; the prefill
# table as PERF.md prints it comes from `python3 scripts/device/targets_table.py $OUT prefill-`.
# Usage: OUT=out bash scripts/device/standing.sh
OUT=${OUT:-device-out}
mkdir -p "$OUT"
source scripts/device/lease.sh
DECODE=""
for m in 4096 14336; do for n in 1 2 3 4 8 12 16 24 32 48 64 96 128 192 256; do DECODE="$DECODE $m,$n,4096"; done; done
for n in 1 2 3 4 8 16 32; do DECODE="$DECODE 4096,$n,14336"; done
DECODE="$DECODE 4096,4,10240"
peer_build
{
step "parity of the prefill picks"
timeout 120 $B parity --timeout 30 --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail_producer \
    --shape 333,9,4352 --shape 1000,77,14336 --shape 4096,2048,4096 2>&1 | tail -1
echo "exit ${PIPESTATUS[0]}"
peer_wait
step "bench: the nine prefill shapes, the picks, cuBLAS beside"
timeout 150 $B bench --picks --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail_producer \
    $(repeat_flag shape $NINE_PREFILL) --json "$OUT/prefill-bench.jsonl" > "$OUT/prefill-bench.md" 2>&1
echo "exit $?"
step "llama.cpp alone: the nine prefill shapes"
timeout 150 bash .device/peer/llamacpp-perf.sh $NINE_PREFILL > "$OUT/prefill-llamacpp.txt" 2>&1
echo "exit $?"
step "bench: the decode and small-batch shapes, the picks, cuBLAS beside"
timeout 300 $B bench --picks --variant ring_t1_fused $(repeat_flag shape $DECODE) \
    --json "$OUT/decode-bench.jsonl" > "$OUT/decode-bench.md" 2>&1
echo "exit $?"
step "llama.cpp alone: the decode and small-batch shapes"
timeout 150 bash .device/peer/llamacpp-perf.sh $DECODE > "$OUT/decode-llamacpp.txt" 2>&1
echo "exit $?"
step end
} > "$OUT/checks.txt" 2>&1
cat "$OUT/checks.txt"
python3 scripts/device/targets_table.py "$OUT" prefill-
