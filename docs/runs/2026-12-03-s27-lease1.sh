#!/bin/bash
# Session 27, lease 1 (one call): what session 26 left unrun on the committed build (1a28d16, two-chunk token boxes):
# parity of the shipped int12 tiles (ragged, both layouts, the GGUF tensor) and of one cluster variant (one-chunk
# boxes), the mutants, memcheck and racecheck on both shipped tiles; then the nine prefill shapes in one bench (the
# int12 tiles, tma_128x128, cuBLAS bf16 beside) and llama.cpp's perf script alone on the GPU, same shapes (built
# meanwhile).
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s25-cluster.toml"
peer_build
P="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
step "parity: the shipped int12 tiles and one cluster variant, ragged, both layouts"
timeout 120 $B $V parity --timeout 30 $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 i12_128x64_c2) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
for v in wgmma_i12_128x64 wgmma_i12_128x96; do
  timeout 60 $B parity --timeout 30 --variant $v --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "mutants"
timeout 120 $B parity --timeout 30 --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers"
for v in wgmma_i12_128x64 wgmma_i12_128x96; do
  for tool in memcheck racecheck; do
    for layout in raw padded; do
      echo "$v $tool $layout"
      timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity --timeout 30 --variant $v --shape 333,9,4352 --layout $layout 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
    done
  done
done
step "peer build"
peer_wait
step "bench: the int12 tiles, tma_128x128, cuBLAS beside"
timeout 150 $B bench $(repeat_flag variant tma_128x128 wgmma_i12_128x64 wgmma_i12_128x96) $(repeat_flag shape $P) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md
step "peer alone"
timeout 150 bash .device/peer/llamacpp-perf.sh $P > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -14 $OUT/llamacpp.txt
