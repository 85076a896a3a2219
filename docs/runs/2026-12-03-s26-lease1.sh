#!/bin/bash
# Session 26, lease 1 (one call): what session 25 left unrun on the shipped int12 picks. Nsight Compute on
# wgmma_i12_128x96 at 4096^3 and wgmma_i12_128x64 at 4096x512x4096 (what the warps wait on now, after log 49);
# memcheck and racecheck on wgmma_i12_128x64 (both layouts) after log 49's fold change; `mmqgen run` with the
# embedded config (its footprint and accuracy lines); one bench at the token counts around the rules' boundaries
# (385 and 1537 tokens) that session 25 interpolated.
source scripts/lease.sh
{
step "sanitizers: wgmma_i12_128x64"
for tool in memcheck racecheck; do
  for layout in raw padded; do
    echo "wgmma_i12_128x64 $tool $layout"
    timeout 60 compute-sanitizer --tool $tool --print-limit 4 $B parity --variant wgmma_i12_128x64 --shape 333,9,4352 --layout $layout --timeout 30 2>&1 | grep -v "^\[" | tail -3; echo "exit ${PIPESTATUS[0]}"
  done
done
step "profile: wgmma_i12_128x96 at 4096,4096,4096"
timeout 200 $B profile --variant wgmma_i12_128x96 --shape 4096,4096,4096 > $OUT/profile-i12_128x96.txt 2>&1; echo "exit $?"
step "profile: wgmma_i12_128x64 at 4096,512,4096"
timeout 150 $B profile --variant wgmma_i12_128x64 --shape 4096,512,4096 > $OUT/profile-i12_128x64.txt 2>&1; echo "exit $?"
step "mmqgen run (embedded config)"
timeout 150 $B run > $OUT/run.txt 2>&1; echo "exit $?"
tail -30 $OUT/run.txt
step "bench: the rules' boundaries"
timeout 150 $B bench $(repeat_flag variant tma_64x64_b2 tma_128x128 wgmma_i12_128x64 wgmma_i12_128x96) $(repeat_flag shape 4096,320,4096 4096,384,4096 4096,448,4096 4096,1024,4096 4096,1536,4096 4096,1664,4096 14336,384,4096 14336,1536,4096) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
