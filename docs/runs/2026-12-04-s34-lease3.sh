#!/bin/bash
# Session 34, lease 3: lease 2 again after the producer's threads branch off before the tile's set-up (lease 2's
# 128 x 96 with a producer faulted: its producer threads zeroed shared totals by thread index past their region).
# Parity of wgmma_i12_128x64_producer (ragged and large, both layouts; the GGUF tensor) and of log 80's variants,
# the mutants, memcheck on 128 x 96 with a producer and on the shipped variant, racecheck; once llama.cpp's peer is
# built, two rounds of 128 x 64 against its producer form at a shape of every rule that picks it, then log 80's
# variants in a bench of their own (a fault there cannot take the first down), then the nine shapes with the picks.
source scripts/lease.sh
export LEASE_CHANGE="+producer-first"
peer_build
V=docs/runs/2026-12-04-s34-producer.toml
SHAPES="8192,96,4096 14336,112,4096 4096,128,14336 4096,160,4096 4096,192,14336 4096,256,4096 8192,224,4096 4096,448,4096 4096,512,14336 4096,2048,4096"
{
step "parity (wgmma_i12_128x64_producer)"
timeout 150 $B parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 8191,200,4352 --shape 4096,512,4096 --shape 4096,512,14336 --shape 14336,2048,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --timeout 20 --variant wgmma_i12_128x64_producer --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "parity (log 80's variants)"
timeout 60 $B parity --timeout 30 --variants $V --variant i12_128x64_pwg_s3 --variant i12_128x80_pwg --variant i12_128x96_pwg --shape 1000,77,2816 --shape 4096,512,4096 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 120 $B parity --timeout 30 --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck (128 x 96 with a producer; the shipped producer form), racecheck"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B parity --timeout 30 --variants $V --variant i12_128x96_pwg --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 333,9,4352 --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 60 compute-sanitizer --tool racecheck --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
ab_rounds 60 new=$B -- --variant wgmma_i12_128x64 --variant wgmma_i12_128x64_producer $(repeat_flag shape $SHAPES) --no-cublas
for round in 1 2; do
    step "log 80, round $round"
    timeout 60 $B bench --variants $V --variant wgmma_i12_128x64_producer --variant i12_128x64_pwg_s3 --variant i12_128x80_pwg --variant i12_128x96_pwg --variant wgmma_i12_128x96_tail --no-cublas $(repeat_flag shape 4096,512,4096 4096,512,14336 4096,2048,4096 4096,4096,4096) --json $OUT/log80-$round.jsonl > /dev/null 2>&1
    echo "bench exit $?"
done
bench_nine_beside_llama $B --picks --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail
step end
} > $OUT/checks.txt 2>&1
finish_lease
