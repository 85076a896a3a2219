#!/bin/bash
# Session 23, lease 1 (one call): the first run of mode int12_per256 (docs/PERF.md log 43) in the wgmma register fold,
# wgmma_i12_128x64: parity (ragged, both layouts), one bench beside the shipped int_per32 picks at three prefill shapes, then
# the mutants, a GGUF tensor, memcheck and racecheck.
source scripts/lease.sh
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity"
timeout 100 $B parity --variant wgmma_i12_128x64 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | tail -8; echo "exit ${PIPESTATUS[0]}"
step "bench"
timeout 120 $B bench --no-cublas $(repeat_flag variant tma_128x128 tma_64x128_b2 wgmma_i12_128x64) $(repeat_flag shape 4096,512,4096 4096,2048,4096 14336,512,4096) --json $OUT/bench.jsonl 2>&1 | tail -16; echo "exit ${PIPESTATUS[0]}"
step "mutants, GGUF"
timeout 70 $B parity --mutants 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --variant wgmma_i12_128x64 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers"
for tool in memcheck racecheck; do
  timeout 50 compute-sanitizer --tool $tool --print-limit 2 $B parity --variant wgmma_i12_128x64 --shape 333,9,4352 --layout padded 2>&1 | tail -3; echo "exit ${PIPESTATUS[0]}"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
