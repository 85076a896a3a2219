#!/bin/bash
# Session 29, lease 7 (one call): the build to be committed, with wgmma_i12_64x128_fold declared (the int12 engine with
# fold warps, logs 60-63). Parity of it and of the shipped int12 tiles (ragged and 4096x512x4096, both layouts; the
# GGUF tensor), the mutants, memcheck and racecheck on the new tile; then, once llama.cpp's peer is built, the int12
# tiles at the ends of the token ranges the new tile might take (no cuBLAS), the nine prefill shapes in one bench
# (cuBLAS bf16 beside), and llama.cpp's perf script alone on the GPU, same shapes. Outputs but checks.txt in all.tgz.
source scripts/lease.sh
peer_build
P="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
I12="wgmma_i12_128x64 wgmma_i12_128x96 wgmma_i12_64x128_fold"
{
step "parity: the int12 tiles, ragged and 4096x512x4096, both layouts; the GGUF tensor"
timeout 120 $B parity --timeout 30 $(repeat_flag variant $I12) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 30 $(repeat_flag variant $I12) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 120 $B parity --timeout 30 --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers (wgmma_i12_64x128_fold)"
for tool in memcheck racecheck; do
  for layout in raw padded; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_64x128_fold --shape 333,9,4352 --layout $layout 2>&1 | grep -v "^\[" | tail -1; echo "$tool $layout exit ${PIPESTATUS[0]}"
  done
done
step "peer build"
peer_wait
step "bench: the ends of the ranges"
timeout 150 $B bench $(repeat_flag variant $I12) $(repeat_flag shape 4096,384,4096 4096,448,4096 14336,448,4096 4096,640,4096 4096,768,4096 4096,1024,4096 14336,1024,4096) --no-cublas --json $OUT/bench-bounds.jsonl > /dev/null 2>&1; echo "bench exit $?"
step "bench: the nine prefill shapes, the int12 tiles, cuBLAS beside"
timeout 150 $B bench $(repeat_flag variant $I12) $(repeat_flag shape $P) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md | grep -v "f16"
step "peer alone"
timeout 150 bash .device/peer/llamacpp-perf.sh $P > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -12 $OUT/llamacpp.txt
python3 scripts/ab_summary.py --shapes $OUT bench
(cd $OUT && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
