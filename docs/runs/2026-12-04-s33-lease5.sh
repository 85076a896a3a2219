#!/bin/bash
# Session 33, lease 5. B: main (502c5e9) plus log 77 behind MMQGEN_EXP=deferred (.device/x_deferred.sh): in the
# int12 tiles with totals and segment in registers (wgmma_i12_128x64), each super-block's exact sums wait for the
# next window, whose first chunk's wgmmas are issued before that super-block's float epilogue and its stage's
# release. Parity of it (ragged, 4096x512x4096 and 4096x512x14336 sampled, both layouts; the GGUF tensor),
# memcheck; two A/B rounds against the same binary without the switch; the nine prefill shapes with cuBLAS beside.
# No llama.cpp: the lease had five minutes.
source scripts/lease.sh
export LEASE_CHANGE="+log77"
X=.device/x_deferred.sh
P="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
step "parity (deferred): ragged and large, both layouts; the GGUF tensor"
timeout 60 $X parity --timeout 30 --variant wgmma_i12_128x64 --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --shape 4096,512,14336 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 30 $X parity --timeout 20 --variant wgmma_i12_128x64 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck (deferred)"
timeout 40 compute-sanitizer --tool memcheck --print-limit 2 $X parity --timeout 30 --variant wgmma_i12_128x64 --shape 333,9,4352 --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
ab_rounds 40 old=$B new=$X -- --variant wgmma_i12_128x64 $(repeat_flag shape 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 14336,2048,4096) --no-cublas
step "bench (deferred): the nine prefill shapes, cuBLAS beside"
timeout 90 $X bench --variant wgmma_i12_128x64 --variant wgmma_i12_128x96_tail $(repeat_flag shape $P) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md | grep -v "f16" | cut -d'|' -f2-5,12
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
(cd $OUT && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
