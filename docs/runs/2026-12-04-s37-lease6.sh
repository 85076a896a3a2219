#!/bin/bash
# Session 37, lease 6: log 92, the last wave cut at super-blocks without a replay: a part takes its super-blocks out
# of K order (the head of a segment it begins first, published for the part after it; the super-blocks that continue
# the part before it's segment last, from that published sum), B, against 4d86f15 (OLD). Parity on shapes whose
# cuts fall inside a segment (K = 2816, 4352, 14336) and 4096x2048x4096, both layouts, both split variants, the GGUF
# tensor, memcheck and racecheck, the mutants, then two A/B rounds of the pick from 513 tokens.
export LEASE_CHANGE="+log92"
source scripts/lease.sh
gunzip -k .device/mmqgen_old.gz
{
step "parity (both 128 x 96 split variants)"
timeout 200 $B parity --timeout 30 --variant wgmma_i12_128x96_tail_producer --variant wgmma_i12_128x96_tail --shape 333,9,4352 --shape 129,300,2816 --shape 1000,77,2816 --shape 1000,77,14336 --shape 200,50,1024 --shape 4096,2048,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 20 --variant wgmma_i12_128x96_tail_producer --variant wgmma_i12_128x96_tail --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck, racecheck"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_128x96_tail_producer --shape 333,9,4352 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 90 compute-sanitizer --tool racecheck --print-limit 2 $B parity --timeout 60 --variant wgmma_i12_128x96_tail_producer --shape 333,9,4352 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 150 $B parity --timeout 30 --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
ab_rounds 60 old=$OLD new=$B -- --variant wgmma_i12_128x96_tail_producer $(repeat_flag shape 4096,2048,4096 4096,2048,14336 4096,4096,4096 14336,2048,4096 4096,4096,14336) --no-cublas
step end
} > $OUT/checks.txt 2>&1
finish_lease
