#!/bin/bash
# Session 30, lease 2 (one call). OLD: main (32706c9). .device/mmqgen_desc: main plus log 67 (the token planes'
# descriptors made once a window, one add a plane: all three int12 tiles). B: that plus log 68 (the fold tile's tile
# warps arrive on a tokens_free mbarrier a stage, the first thread waits on it and refills, instead of an atomic
# count with a fence in every warp; and each window's first fragments load before the window end before it).
# Parity of B (the three int12 tiles, ragged and 4096x512x4096, both layouts; the GGUF tensor), the mutants,
# memcheck and racecheck on the fold tile; then two A/B rounds of the three binaries.
source scripts/lease.sh
export LEASE_CHANGE="+log67+log68"
I12="wgmma_i12_128x64 wgmma_i12_128x96 wgmma_i12_64x128_fold"
{
step "parity (B): the int12 tiles, ragged and 4096x512x4096, both layouts; the GGUF tensor"
timeout 120 $B parity --timeout 30 $(repeat_flag variant $I12) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 30 $(repeat_flag variant $I12) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants (B)"
timeout 120 $B parity --timeout 30 --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers (B, wgmma_i12_64x128_fold)"
for tool in memcheck racecheck; do
  for layout in raw padded; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity --timeout 30 --variant wgmma_i12_64x128_fold --shape 333,9,4352 --layout $layout 2>&1 | grep -v "^\[" | tail -1; echo "$tool $layout exit ${PIPESTATUS[0]}"
  done
done
ab_rounds 60 old=$OLD desc=.device/mmqgen_desc new=$B -- --variant wgmma_i12_64x128_fold --variant wgmma_i12_128x96 $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 14336,2048,4096 4096,4096,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
(cd $OUT && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
