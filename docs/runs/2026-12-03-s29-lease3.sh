#!/bin/bash
# Session 29, lease 3 (one call; the working tree's binary): log 61, the tile's warps load their fragments from the fold
# warps' slots (two 16-byte loads a lane, the slot freed once loaded) and feed wgmma from registers, instead of
# wgmma reading both operands from shared memory (log 60); one and two fold warpgroups, and three stages. Parity, the
# sanitizers, one bench beside the shipped 128 x 64, and Nsight Compute on the two-warpgroup tile.
source scripts/lease.sh
export LEASE_CHANGE="+log61"
V="--variants docs/runs/2026-12-03-s29-fold-warps.toml"
FW="i12_fw8_128x64 i12_fw_128x64_treg"
{
step "parity"
timeout 150 $B parity $V $(repeat_flag variant $FW) --timeout 30 --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity $V $(repeat_flag variant $FW) --timeout 30 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers"
for v in $FW; do
  for layout in padded raw; do
    for tool in memcheck racecheck; do
      timeout 90 compute-sanitizer --tool $tool --print-limit 2 $B parity $V --timeout 60 --variant $v --shape 333,9,4352 --layout $layout 2>&1 | grep -v "^\[" | tail -4; echo "$v $layout $tool exit ${PIPESTATUS[0]}"
    done
  done
done
step "bench"
timeout 150 $B bench $V $(repeat_flag variant wgmma_i12_128x64 i12_fw_128x64_treg i12_fw8_128x64 i12_fw8_128x64_s3) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096) --no-cublas --json $OUT/bench.jsonl > /dev/null 2>&1; echo "bench exit $?"
step "profile"
timeout 120 $B profile $V --variant i12_fw8_128x64 --shape 4096,512,4096 > $OUT/profile-fw8.txt 2>&1; echo "profile exit $?"
head -40 $OUT/profile-fw8.txt
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 -c "
import json
for r in map(json.loads, open('$OUT/bench.jsonl')):
    if r.get('kind') == 'variant': print(r['m'], r['n'], r['k'], r['variant'], round(r.get('median_us', 0), 1), r['status'])
"
