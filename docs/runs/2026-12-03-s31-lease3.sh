#!/bin/bash
# Session 31, lease 3 (one call). B: a4f1b92 plus tail_parts with the split tiles' segment sums stored after the
# epilogue's loop (log 74, second form: lease 2's stores inside the loop cost whole tiles 3-4%). Parity of the
# tail_parts variants (every tile split, whole and split tiles mixed; both layouts; the GGUF tensor), memcheck, and
# racecheck on 128 x 96 raw with and without tail_parts (lease 2 saw two warnings there: the details kept); once
# llama.cpp's peer is built, a bench round without cuBLAS, one with cuBLAS beside, and llama.cpp's perf script alone.
source scripts/lease.sh
peer_build
V="--variants docs/runs/2026-12-03-s31-b2.toml --variants docs/runs/2026-12-03-s31-tail.toml"
NEW="i12_128x96_tp3 i12_128x64_tp3 i12_64x80_b2_tp3"
I12="wgmma_i12_128x64 wgmma_i12_128x96 i12_128x96_tp3 i12_64x80_b2"
P="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
step "parity: the tail_parts variants; 333x9x4352 (every tile split), 2000x950x2816 and 4096x2048x4096 (whole and split tiles), both layouts; the GGUF tensor"
timeout 200 $B $V parity --timeout 60 $(repeat_flag variant $NEW) --shape 333,9,4352 --shape 2000,950,2816 --shape 4096,2048,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B $V parity --timeout 30 $(repeat_flag variant $NEW) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B $V parity --timeout 30 --variant i12_128x96_tp3 --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -1; echo "memcheck exit ${PIPESTATUS[0]}"
for v in wgmma_i12_128x96 i12_128x96_tp3; do
  timeout 60 compute-sanitizer --tool racecheck --print-limit 4 $B $V parity --timeout 30 --variant $v --shape 333,9,4352 --layout raw > $OUT/racecheck-$v-raw.txt 2>&1; echo "$v racecheck raw exit $?"; grep -v "^\[" $OUT/racecheck-$v-raw.txt | tail -1
done
step "peer build"
peer_wait
step "round 1: the int12 tiles at the nine shapes"
timeout 90 $B $V bench $(repeat_flag variant $I12) $(repeat_flag shape $P) --no-cublas --json $OUT/ab-new-1.jsonl > /dev/null 2>&1; echo "bench exit $?"
step "bench: the nine prefill shapes, the int12 tiles, cuBLAS beside"
timeout 150 $B $V bench $(repeat_flag variant $I12) $(repeat_flag shape $P) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md | grep -v "f16" | cut -d'|' -f2-5
step "peer alone"
timeout 150 bash .device/peer/llamacpp-perf.sh $P > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -11 $OUT/llamacpp.txt
(cd $OUT && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
