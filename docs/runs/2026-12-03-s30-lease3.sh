#!/bin/bash
# Session 30, lease 3 (one call). OLD: main (32706c9). .device/mmqgen_desc: main plus log 67 (lease 2). B: that plus
# log 69 (the wgmma bodies read their warp index through a shuffle, so that ptxas keeps the descriptors in uniform
# registers). Parity of B on every variant whose SASS changed (the three int12 tiles, wgmma_64x128,
# wgmma_f16_128x64, wgmma_regfold_128x64, and ring_mma_32x8_k4, whose SASS swaps two FADD operands), the GGUF tensor,
# the mutants, memcheck and racecheck on the int12 tiles; once llama.cpp's peer is built, the A/B of the three
# binaries, the int12 tiles at the ends of their token ranges, the nine prefill shapes with cuBLAS beside (B), and
# llama.cpp's perf script alone, same shapes.
gunzip -f .device/mmqgen_desc.gz .device/mmqgen_old.gz  # carried compressed: the working tree and .device fit 64 MiB
source scripts/lease.sh
export LEASE_CHANGE="+log67+log69"
peer_build
I12="wgmma_i12_128x64 wgmma_i12_128x96 wgmma_i12_64x128_fold"
CHANGED="$I12 wgmma_64x128 wgmma_f16_128x64 wgmma_regfold_128x64 ring_mma_32x8_k4"
P="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
step "parity (B): the variants whose SASS changed, ragged and 4096x512x4096, both layouts; the GGUF tensor"
timeout 180 $B parity --timeout 30 $(repeat_flag variant $CHANGED) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
timeout 90 $B parity --timeout 30 $(repeat_flag variant $CHANGED) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants (B)"
timeout 120 $B parity --timeout 30 --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers (B): the int12 tiles, padded; the fold tile raw too"
for v in $I12; do
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity --timeout 30 --variant $v --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -1; echo "$v $tool padded exit ${PIPESTATUS[0]}"
  done
done
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_64x128_fold --shape 333,9,4352 --layout raw 2>&1 | grep -v "^\[" | tail -1; echo "fold $tool raw exit ${PIPESTATUS[0]}"
done
step "peer build"
peer_wait
ab_rounds 60 old=$OLD desc=.device/mmqgen_desc new=$B -- --variant wgmma_i12_64x128_fold --variant wgmma_i12_128x96 --variant wgmma_i12_128x64 $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096) --no-cublas
step "bench (B): the ends of the ranges"
timeout 150 $B bench $(repeat_flag variant $I12) $(repeat_flag shape 4096,256,4096 4096,384,4096 4096,448,4096 14336,448,4096 4096,640,4096 4096,768,4096 4096,1024,4096 14336,1024,4096 4096,1536,4096 14336,1536,4096) --no-cublas --json $OUT/bench-bounds.jsonl > /dev/null 2>&1; echo "bench exit $?"
step "bench (B): the nine prefill shapes, the int12 tiles, cuBLAS beside"
timeout 150 $B bench $(repeat_flag variant $I12) $(repeat_flag shape $P) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md | grep -v "f16" | cut -d'|' -f2-5
step "peer alone"
timeout 150 bash .device/peer/llamacpp-perf.sh $P > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -11 $OUT/llamacpp.txt
python3 scripts/ab_summary.py $OUT
python3 scripts/ab_summary.py --shapes $OUT bench
(cd $OUT && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
