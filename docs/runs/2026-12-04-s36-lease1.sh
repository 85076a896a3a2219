#!/bin/bash
# Session 36, lease 1: log 88 (the last wave's split tiles cut at super-blocks, MMQGEN_EXP=sbtail) and log 87 (three
# fragment sets, MMQGEN_EXP=sets3), alone and together (.device/x_{sbtail,sets3,both}.sh run .device/mmqgen with
# them; without, it renders f62cc50's kernels). Parity (splits with parts that start mid-segment, a part of
# continuations only at K = 1024, the GGUF tensor), memcheck, two A/B rounds of 128 x 96 split, then the nine
# prefill shapes with the picks rendered with both, cuBLAS beside, and llama.cpp's perf script alone.
source scripts/lease.sh
export LEASE_CHANGE="+log88+log87"
peer_build
SHAPES="--shape 333,9,4352 --shape 129,300,2816 --shape 200,50,1024 --shape 1000,77,2816 --shape 4096,2048,4096"
{
for x in sbtail both; do
step "parity ($x)"
timeout 150 .device/x_$x.sh parity --timeout 30 --variant wgmma_i12_128x96_tail $SHAPES --json $OUT/parity-$x.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 40 .device/x_$x.sh parity --timeout 20 --variant wgmma_i12_128x96_tail --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
timeout 60 .device/x_both.sh parity --timeout 20 --variant wgmma_i12_128x64_producer --shape 333,9,4352 --shape 129,300,2816 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck (both)"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 .device/x_both.sh parity --timeout 30 --variant wgmma_i12_128x96_tail --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
ab_rounds 60 old=$B sbtail=.device/x_sbtail.sh sets3=.device/x_sets3.sh both=.device/x_both.sh -- --variant wgmma_i12_128x96_tail $(repeat_flag shape 4096,2048,4096 4096,2048,14336 4096,4096,4096 14336,2048,4096) --no-cublas
bench_nine_beside_llama .device/x_both.sh --picks --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail
step end
} > $OUT/checks.txt 2>&1
finish_lease
