#!/bin/bash
# Session 31, lease 1 (one call). B: main (a4f1b92). Log 73: the int12 engine with one warpgroup a block and two
# blocks an SM (docs/runs/2026-12-03-s31-b2.toml). Parity of the two new variants (ragged shapes and 4096x512x4096,
# both layouts; the GGUF tensor), memcheck and racecheck on both layouts; once llama.cpp's peer is built, two
# rounds of a bench of the shipped int12 tiles and the new ones at the nine prefill shapes, then one bench of all
# four with cuBLAS beside, and llama.cpp's perf script alone, same shapes.
source scripts/lease.sh
peer_build
V="--variants docs/runs/2026-12-03-s31-b2.toml"
NEW="i12_64x64_b2 i12_64x80_b2"
I12="wgmma_i12_128x64 wgmma_i12_128x96 $NEW"
P="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
step "parity: the new variants, ragged and 4096x512x4096, both layouts; the GGUF tensor"
timeout 120 $B $V parity --timeout 30 $(repeat_flag variant $NEW) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B $V parity --timeout 30 $(repeat_flag variant $NEW) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers: the new variants, both layouts"
for v in $NEW; do
  for layout in padded raw; do
    for tool in memcheck racecheck; do
      timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B $V parity --timeout 30 --variant $v --shape 333,9,4352 --layout $layout 2>&1 | grep -v "^\[" | tail -1; echo "$v $tool $layout exit ${PIPESTATUS[0]}"
    done
  done
done
step "peer build"
peer_wait
for round in 1 2; do
  step "round $round: the int12 tiles at the nine shapes"
  timeout 90 $B $V bench $(repeat_flag variant $I12) $(repeat_flag shape $P) --no-cublas --json $OUT/ab-new-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step "bench: the nine prefill shapes, the int12 tiles, cuBLAS beside"
timeout 150 $B $V bench $(repeat_flag variant $I12) $(repeat_flag shape $P) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md | grep -v "f16" | cut -d'|' -f2-5
step "peer alone"
timeout 150 bash .device/peer/llamacpp-perf.sh $P > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -11 $OUT/llamacpp.txt
python3 scripts/ab_summary.py --shapes $OUT bench
(cd $OUT && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
