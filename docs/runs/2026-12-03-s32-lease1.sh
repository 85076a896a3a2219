#!/bin/bash
# Session 32, lease 1. OLD: main (5b463e9, .device/mmqgen_old). B: log 75 (the activation quantizer's eight
# divisions by one reciprocal and __fdiv_rn's own fmas, straight-line, for scales in [2^-90, 2^90]; parity's seeded
# activations with rounding ties planted, scales 2^-110..2^60; the mutant quotient_uncorrected). Parity of B on a pick
# of every quantizer path (groups of 32 and 256, int8 and the 12-bit planes, the tma scale order, f32_per16, the
# ring's fused quantizer), ragged and 4096x512x4096, both layouts; the GGUF tensor; the nine mutants; memcheck; two
# A/B rounds at the three shapes short of 0.35x cuBLAS bf16 and two more; the nine prefill shapes with cuBLAS beside
# and llama.cpp's perf script alone, same lease.
gunzip -f .device/mmqgen_old.gz
source scripts/lease.sh
export LEASE_CHANGE="+log75"
peer_build
PICKS="wgmma_i12_128x64 wgmma_i12_128x96_tail tma_64x64_b2 regfold_64x64_ks4 widen_128x16 ring_t4 ring_t1_fused splitk2_per32 dp4a_int_per256 r41"
P="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
step "parity (B): a pick of every quantizer path, ragged and 4096x512x4096, both layouts"
timeout 240 $B parity --timeout 30 $(repeat_flag variant $PICKS) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 30 --variant wgmma_i12_128x64 --variant wgmma_i12_128x96_tail --variant splitk2_per32 --shape 4096,512,4096 --json $OUT/parity-large.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "parity (B): the GGUF tensor"
timeout 90 $B parity --timeout 30 $(repeat_flag variant $PICKS) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants (B)"
timeout 150 $B parity --timeout 30 --mutants 2>&1 | tail -4; echo "exit ${PIPESTATUS[0]}"
step "memcheck (B)"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_128x96_tail --variant ring_t1_fused --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
ab_rounds 60 old=$OLD new=$B -- --variant wgmma_i12_128x64 --variant wgmma_i12_128x96_tail $(repeat_flag shape 4096,512,4096 4096,512,14336 4096,2048,4096 4096,64,4096 4096,2048,14336) --no-cublas
step "bench (B): the nine prefill shapes, the picks, cuBLAS beside"
timeout 150 $B bench --variant wgmma_i12_128x64 --variant wgmma_i12_128x96_tail $(repeat_flag shape $P) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md | grep -v "f16" | cut -d'|' -f2-5,12
step "peer alone"
timeout 150 bash .device/peer/llamacpp-perf.sh $P > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -11 $OUT/llamacpp.txt
python3 scripts/ab_summary.py $OUT
(cd $OUT && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
