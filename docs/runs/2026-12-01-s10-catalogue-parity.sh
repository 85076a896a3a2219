#!/bin/bash
# Session 10, lease 5: whole-catalogue parity (every declared variant, both layouts, two ragged shapes), last run
# in session 7.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
S=$SECONDS
{
timeout 280 .device/mmqgen parity --shape 333,17,1280 --shape 1000,100,4352 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]} after $((SECONDS - S)) s"
} > $OUT/checks.txt 2>&1
tail -15 $OUT/checks.txt
