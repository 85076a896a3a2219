#!/bin/bash
# Session 34, lease 5: log 81, 128 x 64 with a producer warpgroup run persistent (schedule = persistent), two and
# three stages (docs/runs/2026-12-04-s34-persistent.toml). Parity (ragged shapes, K = 256 where a tile has fewer
# windows than stages, large shapes, both layouts; the GGUF tensor), memcheck and racecheck; once llama.cpp's peer is
# built, two interleaved rounds against wgmma_i12_128x64_producer and wgmma_i12_128x96_tail, then the nine shapes with
# the picks and both persistent forms beside them.
source scripts/lease.sh
export LEASE_CHANGE="+log81"
peer_build
V=docs/runs/2026-12-04-s34-persistent.toml
{
step "parity (persistent)"
timeout 150 $B parity --timeout 30 --variants $V --variant i12_128x64_pwg_pers --variant i12_128x64_pwg_pers_s3 --shape 333,9,4352 --shape 1000,77,2816 --shape 1000,77,256 --shape 129,300,2816 --shape 4096,512,4096 --shape 4096,2048,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --timeout 20 --variants $V --variant i12_128x64_pwg_pers --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck, racecheck (persistent)"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B parity --timeout 30 --variants $V --variant i12_128x64_pwg_pers --shape 333,9,4352 --shape 1000,77,256 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 60 compute-sanitizer --tool racecheck --print-limit 2 $B parity --timeout 30 --variants $V --variant i12_128x64_pwg_pers --shape 1000,77,2816 --layout padded 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
ab_rounds 60 new=$B -- --variants $V --variant wgmma_i12_128x64_producer --variant i12_128x64_pwg_pers --variant i12_128x64_pwg_pers_s3 --variant wgmma_i12_128x96_tail $(repeat_flag shape 4096,256,4096 4096,512,4096 4096,512,14336 4096,2048,4096 14336,2048,4096 4096,4096,4096) --no-cublas
bench_nine_beside_llama $B --picks --variants $V --variant wgmma_i12_128x64_producer --variant i12_128x64_pwg_pers --variant i12_128x64_pwg_pers_s3 --variant wgmma_i12_128x96_tail
step end
} > $OUT/checks.txt 2>&1
finish_lease
