#!/bin/bash
# Session 29, lease 1 (one call; the binary of the working tree: the new field fold_warps, its variants in
# docs/runs/2026-12-03-s29-fold-warps.toml): log 60, a fold warpgroup feeding wgmmas that read both operands from
# shared memory. Parity (ragged, both layouts, the GGUF tensor), the sanitizers, then one bench beside the shipped
# int12 tiles, then Nsight Compute's stall lines on the new tile.
source scripts/lease.sh
export LEASE_CHANGE="+log60"
V="--variants docs/runs/2026-12-03-s29-fold-warps.toml"
FW="i12_fw_128x64"
{
step "parity"
timeout 150 $B parity $V $(repeat_flag variant $FW) --timeout 30 --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity $V --variant $FW --timeout 30 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers"
for layout in padded raw; do
  for tool in memcheck racecheck; do
    timeout 90 compute-sanitizer --tool $tool --print-limit 2 $B parity $V --timeout 60 --variant $FW --shape 333,9,4352 --layout $layout 2>&1 | grep -v "^\[" | tail -2; echo "$layout $tool exit ${PIPESTATUS[0]}"
  done
done
step "bench"
timeout 150 $B bench $V $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 i12_fw_128x64 i12_fw_128x64_treg) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096) --no-cublas --json $OUT/bench.jsonl > /dev/null 2>&1; echo "bench exit $?"
step "profile"
timeout 120 $B profile $V --variant $FW --shape 4096,512,4096 > $OUT/profile-fw.txt 2>&1; echo "profile exit $?"
head -40 $OUT/profile-fw.txt
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT bench
