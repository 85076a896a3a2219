#!/bin/bash
# Session 9: the mutants, the new one on tma_128x128 included.
set -u
export MMQGEN_COMMIT=$(cat .device/commit)
timeout 150 .device/mmqgen parity --mutants 2>&1 | tee $OUT/mutants.txt | tail -12; echo "exit ${PIPESTATUS[0]}"
