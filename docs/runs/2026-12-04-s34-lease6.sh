#!/bin/bash
# Session 34, lease 6: log 82, 128 x 96 split in the last wave with a producer warpgroup (i12_128x96_tail_pwg,
# docs/runs/2026-12-04-s34-tail-producer.toml). Parity (ragged shapes, shapes whose last wave splits, both layouts;
# the GGUF tensor), memcheck and racecheck; two interleaved rounds against wgmma_i12_128x96_tail and
# wgmma_i12_128x64_producer at the shapes 128 x 96 split takes, cuBLAS beside in the second. No llama.cpp: the
# device time left (300 s) does not hold its build.
source scripts/lease.sh
export LEASE_CHANGE="+log82"
V=docs/runs/2026-12-04-s34-tail-producer.toml
{
step "parity (i12_128x96_tail_pwg)"
timeout 100 $B parity --timeout 30 --variants $V --variant i12_128x96_tail_pwg --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 8191,200,4352 --shape 4096,2048,4096 --shape 4096,1024,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --timeout 20 --variants $V --variant i12_128x96_tail_pwg --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck, racecheck"
timeout 50 compute-sanitizer --tool memcheck --print-limit 2 $B parity --timeout 30 --variants $V --variant i12_128x96_tail_pwg --shape 1000,77,2816 --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 40 compute-sanitizer --tool racecheck --print-limit 2 $B parity --timeout 30 --variants $V --variant i12_128x96_tail_pwg --shape 1000,77,2816 --layout padded 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
step "A/B"
for round in 1 2; do
    cublas=--no-cublas; [ $round = 2 ] && cublas=
    timeout 60 $B bench --variants $V --variant wgmma_i12_128x96_tail --variant i12_128x96_tail_pwg --variant wgmma_i12_128x64_producer $cublas $(repeat_flag shape 4096,1024,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096) --json $OUT/ab-new-$round.jsonl > $OUT/ab-$round.md 2>&1
    echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
finish_lease
