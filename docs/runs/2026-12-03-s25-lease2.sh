#!/bin/bash
# Session 25, lease 2 (one call). Lease 1 hung in every cluster variant: their token branch of
# tma_load_stage_activations left out the scales' box, so no stage's bytes were ever complete (fixed here). Now:
# parity of the cluster variants (one small case first, so that a hang costs little), racecheck's two warnings on
# wgmma_i12_128x96 raw in full, the nine prefill shapes in one bench (the default, the int12 tiles with and without
# clusters, cuBLAS bf16 beside), log 49's A/B (OLD: cd0efe4, without the half-block words), llama.cpp's perf script
# alone on the GPU, same shapes (built meanwhile).
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s25-cluster.toml"
peer_build
P="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
step "parity: one cluster case"
timeout 40 $B $V parity --variant i12_128x64_c2 --shape 333,9,4352 --layout padded 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "parity: every cluster variant, ragged, both layouts"
timeout 90 $B $V parity $(repeat_flag variant i12_128x64_c2 i12_128x96_c2 i12_128x64_c4 i12_128x64_c2_s3 i12_128x64_c2x2 i12_128x96_c2x2 i12_128x64_c1x2) --shape 333,9,4352 --shape 1000,77,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -6; echo "exit ${PIPESTATUS[0]}"
step "racecheck: wgmma_i12_128x96 raw, in full"
timeout 40 compute-sanitizer --tool racecheck --print-limit 4 $B parity --variant wgmma_i12_128x96 --shape 333,9,4352 --layout raw 2>&1 | grep -v "^\[" | head -40; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
step "bench: the default, the int12 tiles with and without clusters, cuBLAS beside"
timeout 150 $B $V bench $(repeat_flag variant tma_128x128 wgmma_i12_128x64 wgmma_i12_128x96 i12_128x64_c2 i12_128x96_c2 i12_128x64_c2x2 i12_128x96_c2x2) $(repeat_flag shape $P) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md | head -12
step "peer alone"
timeout 120 bash .device/peer/llamacpp-perf.sh $P > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step "A/B (log 49): OLD reads every chunk's words, B a half super-block's once"
ab_rounds 20 old=$OLD new=$B -- $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96) $(repeat_flag shape 4096,512,4096 4096,4096,4096)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -14 $OUT/llamacpp.txt
