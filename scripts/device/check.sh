#!/usr/bin/env bash
# The whole catalogue's proof and a first timing, in one run on a GPU machine without cargo: binaries built
# elsewhere and copied into .device/ (mmqgen, api-test = the `api` integration test, mutants-test; see
# scripts/device/README.md). Writes its reports into $OUT (default ./device-out).
# Usage: MMQGEN_COMMIT=<sha> bash scripts/device/check.sh
set -u
OUT=${OUT:-device-out}; mkdir -p "$OUT"
B=.device/mmqgen
export MMQGEN_COMMIT=${MMQGEN_COMMIT:-unknown}
log() { echo "=== [$SECONDS s] $*"; }
{
  log "GPU"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  log "parity: every variant, default shapes, both layouts"
  $B parity --json "$OUT/parity.json"
  log "parity: 4096,512,14336, sampled + every output against a proven variant"
  $B parity --shape 4096,512,14336 --layout padded
} > "$OUT/parity.txt" 2>&1
{ log "mutants"; $B parity --mutants; } > "$OUT/mutants.txt" 2>&1
{
  log "bench: the nine llama.cpp shapes and decode sizes, the selected variants and their neighbours"
  $B bench --prefill --json "$OUT/bench.jsonl" \
    --variant prefolded_spread --variant prefolded_per256_wide_n --variant wgmma_64x128 \
    --variant prefolded_per256 --variant prefolded_small_n --variant prefolded_per32 --variant llamacpp \
    --variant r56 --variant fold_per256
} > "$OUT/bench.md" 2>&1
{
  for pass in cold warm; do
    log "api test, cubin cache $pass"
    MMQGEN_CACHE_DIR=/tmp/mmqgen-cache MMQGEN_LOG=cache MMQGEN_REQUIRE_GPU=1 .device/api-test --test-threads 1
  done
  log "mutants test"; MMQGEN_REQUIRE_GPU=1 MMQGEN_PARITY_BIN=$PWD/$B .device/mutants-test
  log "mmqgen run"; $B run
} > "$OUT/run.txt" 2>&1
{
  for v in dp4a_int_per32 r56 fold_per256 prefolded_per256_wide_n prefolded_spread wgmma_64x128; do
    for tool in memcheck racecheck; do
      log "compute-sanitizer $tool: $v"
      compute-sanitizer --tool $tool --target-processes all --error-exitcode 9 \
        $B parity --variant $v --shape 200,40,1024 --layout padded 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Error|pass|MISMATCH"
      echo "exit ${PIPESTATUS[0]}"
    done
  done
} > "$OUT/sanitizer.txt" 2>&1
log "done"
