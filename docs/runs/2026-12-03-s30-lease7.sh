#!/bin/bash
# Session 30, lease 7 (one call; branch wip/fold-two-sets on d621c44). Log 72: the fold tile with two sets of
# super-block sums (MMQGEN_EXP=twosets, through .device/x_twosets.sh): window w accumulates into set w % 2 and window
# w - 1 ends during w's first two chunks, so only the last window drains. Two sets of 64 tokens a warpgroup spill, so
# the experiment takes 48 (fold_64x96*, docs/runs/2026-12-03-s30-two-sets.toml), timed with and without the switch
# beside the shipped picks. Parity and the sanitizers first.
source scripts/lease.sh
export LEASE_CHANGE="+log72"
V="--variants docs/runs/2026-12-03-s30-two-sets.toml"
X=.device/x_twosets.sh
{
step "parity (twosets): fold_64x96, fold_64x96_tot, ragged and 4096x512x4096, both layouts; the GGUF tensor"
timeout 90 $X parity $V --timeout 30 --variant fold_64x96 --variant fold_64x96_tot --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 40 $X parity $V --timeout 30 --variant fold_64x96 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers (twosets): fold_64x96, padded"
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --print-limit 2 $X parity $V --timeout 30 --variant fold_64x96 --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -1; echo "$tool exit ${PIPESTATUS[0]}"
done
ab_rounds 60 one=$B two=$X -- $V $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 fold_64x96 fold_64x96_tot) $(repeat_flag shape 4096,512,14336 4096,2048,4096 4096,2048,14336 4096,4096,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT one
