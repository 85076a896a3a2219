#!/bin/bash
# Session 35, lease 1: log 83. OLD: c2a5bc9 (.device/mmqgen_old). FA: c2a5bc9 plus the fold ahead of the window
# (each window's first chunk folded during the window before's last wgmmas, on padded blocks; .device/mmqgen_fa).
# B: FA plus the scales ahead (a producer tile reads its super-block's output scales before the drain and releases
# the stage right after it, ahead of the float epilogue; .device/mmqgen). Parity and sanitizers of both on the
# shipped int12 tiles, two A/B rounds of the three, then the nine shapes with B's picks beside llama.cpp.
gunzip -f .device/mmqgen_old.gz .device/mmqgen_fa.gz
source scripts/lease.sh
export LEASE_CHANGE="+log83"
FA=.device/mmqgen_fa
peer_build
{
for bin in $FA $B; do
step "parity ($bin: wgmma_i12_128x64_producer, wgmma_i12_128x64)"
timeout 150 $bin parity --timeout 30 --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x64 --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --shape 4096,2048,4096 --json $OUT/parity-$(basename $bin).jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 40 $bin parity --timeout 20 --variant wgmma_i12_128x64_producer --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "parity (FA: wgmma_i12_128x96_tail, which spills with it)"
timeout 60 $FA parity --timeout 30 --variant wgmma_i12_128x96_tail --shape 1000,77,2816 --shape 4096,2048,4096 --layout padded 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
step "memcheck, racecheck (B)"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 333,9,4352 --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 60 compute-sanitizer --tool racecheck --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
ab_rounds 60 old=$OLD fa=$FA new=$B -- --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail $(repeat_flag shape 4096,256,4096 4096,512,4096 4096,512,14336 4096,2048,4096 14336,2048,4096 4096,4096,4096) --no-cublas
bench_nine_beside_llama $B --picks --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail
step end
} > $OUT/checks.txt 2>&1
finish_lease
