#!/bin/bash
# Session 25, lease 1 (one call): the 96-token int12 tile, now declared (wgmma_i12_128x96), the new fields cluster_rows and
# cluster_tokens (log 48: a cluster of blocks sharing each token box along the rows and each weight box along the
# token tiles, by TMA multicast) and the int12 fold reading a half
# super-block's words once (log 49; OLD is the binary without it): parity (ragged, odd row-tile counts, both layouts,
# the GGUF tensor), the mutants, memcheck and racecheck; then the nine prefill shapes in one bench (the default, the
# int12 tiles with and without clusters, cuBLAS bf16 beside), log 49's A/B, and llama.cpp's perf script alone on
# the GPU, same shapes (built meanwhile).
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s25-cluster.toml"
peer_build
P="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
step "parity: the cluster variants first (a hang shows here), then wgmma_i12_128x96"
timeout 150 $B $V parity $(repeat_flag variant i12_128x64_c2 i12_128x96_c2 i12_128x64_c4 i12_128x64_c2_s3 i12_128x64_c2x2 i12_128x96_c2x2 i12_128x64_c1x2) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity-cluster.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -6; echo "exit ${PIPESTATUS[0]}"
timeout 90 $B parity --variant wgmma_i12_128x96 --variant wgmma_i12_128x64 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
for v in wgmma_i12_128x96 i12_128x64_c2x2; do
  timeout 60 $B $V parity --variant $v --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "mutants"
timeout 90 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers"
for v in wgmma_i12_128x96 i12_128x64_c2x2; do
  for tool in memcheck racecheck; do
    for layout in raw padded; do
      echo "$v $tool $layout"
      timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B $V parity --variant $v --shape 333,9,4352 --layout $layout 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
    done
  done
done
step "peer build"
peer_wait
step "bench: the default, the int12 tiles with and without clusters, cuBLAS beside"
timeout 200 $B $V bench $(repeat_flag variant tma_128x128 wgmma_i12_128x64 wgmma_i12_128x96 i12_128x64_c2 i12_128x64_c4 i12_128x64_c2_s3 i12_128x96_c2 i12_128x64_c1x2 i12_128x64_c2x2 i12_128x96_c2x2) $(repeat_flag shape $P) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md
step "A/B (log 49): OLD reads every chunk's words, B a half super-block's once"
ab_rounds 60 old=$OLD new=$B -- $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,4096,4096)
step "peer alone"
timeout 200 bash .device/peer/llamacpp-perf.sh $P > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -14 $OUT/llamacpp.txt
