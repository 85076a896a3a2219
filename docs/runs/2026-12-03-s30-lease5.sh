#!/bin/bash
# Session 30, lease 5 (one call; B = 58bcb29). Log 70: with the chunk loop 3-8% shorter (logs 67, 69) and the stage
# waits 13-22% of the stall samples (lease 4), does a third stage pay now (log 50 said no for 128 x 64 before), and
# does 128 x 80 (12.6 waves at 4096^3 against 128 x 96's 10.4) with three stages? Parity and the sanitizers on the
# three session-26 variants first (docs/runs/2026-12-03-s26-stages.toml), then two benches of them beside the picks.
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s26-stages.toml"
NEW="i12_128x64_s3 i12_128x80 i12_128x80_s3"
{
step "parity: the three, ragged and 4096x512x4096, both layouts; the GGUF tensor"
timeout 120 $B parity $V --timeout 30 $(repeat_flag variant $NEW) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity $V --timeout 30 $(repeat_flag variant $NEW) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers, padded"
for v in $NEW; do
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity $V --timeout 30 --variant $v --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -1; echo "$v $tool exit ${PIPESTATUS[0]}"
  done
done
for round in 1 2; do
  step "bench round $round"
  timeout 120 $B bench $V $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 $NEW) $(repeat_flag shape 4096,512,4096 4096,512,14336 4096,2048,4096 4096,2048,14336 4096,4096,4096 4096,4096,14336 14336,2048,4096) --no-cublas --json $OUT/bench-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT bench
