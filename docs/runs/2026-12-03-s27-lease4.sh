#!/bin/bash
# Session 27, lease 4 (one call): log 56 in one binary, switched by MMQGEN_EXP (wrappers .device/x_*.sh; both with
# log 55's one token box a window). overlap: the int12 engine ends each window (S = 4096 X + 64 Y + Z combined at
# its last wgmma's end, the float epilogue, the stage's refill) while the next window's first three wgmmas run, and
# waits for the next stage and folds its first chunk while its own last wgmmas run. Parity first (one small case,
# then ragged, both layouts, a cluster variant, the GGUF tensor), then two A/B rounds (with a 3-stage 128 x 64).
source scripts/lease.sh
export LEASE_CHANGE="+log55-56(env)"
V="--variants docs/runs/2026-12-03-s26-stages.toml --variants docs/runs/2026-12-03-s25-cluster.toml"
{
step "parity: one small case"
timeout 40 .device/x_ov.sh parity --timeout 30 --variant wgmma_i12_128x64 --shape 333,9,4352 --layout padded 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "parity: ragged and 4096x512x4096, both layouts, and the GGUF tensor"
timeout 150 .device/x_ov.sh $V parity --timeout 30 $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 i12_128x64_s3 i12_128x64_c2) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
for v in wgmma_i12_128x64 wgmma_i12_128x96; do
  timeout 60 .device/x_ov.sh parity --timeout 30 --variant $v --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "racecheck and memcheck: wgmma_i12_128x64 padded"
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --print-limit 2 .device/x_ov.sh parity --timeout 30 --variant wgmma_i12_128x64 --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "A/B"
ab_rounds 40 old=.device/x_tbox.sh ov=.device/x_ov.sh -- $V $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 i12_128x64_s3) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT 2>&1 | tail -14
