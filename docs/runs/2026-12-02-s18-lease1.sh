#!/bin/bash
# Session 18, lease 1 (one call), on 1465430 plus decode log 40 (the rings with a separate quantizer load the
# record pieces they get at K = 12288, up to four, before storing any; and the chunk step shared by the two token
# paths, which leaves every ring's SASS as it was): the five rings whose kernels changed (ring_t1, ring_t1_tall,
# ring_t2, ring_t4, ring_t4_long_k) on ragged shapes of both layouts with several rounds of records and on the
# GGUF tensor, the mutants, memcheck and racecheck on two; the two geometry points of
# docs/runs/2026-12-02-s18-ring-geometry.toml checked too; then two rounds of one bench of each binary (OLD: 1465430)
# at those rings' pick shapes, the geometry points beside them; ncu on ring_t1 at 4096x1x14336.
source scripts/lease.sh
T=docs/runs/2026-12-02-s18-ring-geometry.toml
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: ring_t1, ring_t1_tall, ring_t2 (two to four rounds of records), ragged, both layouts"
timeout 60 $B parity --variant ring_t1 --variant ring_t1_tall --variant ring_t2 --shape 100,1,14336 --shape 333,2,14336 --shape 8200,1,4352 --shape 77,3,12544 --json $OUT/parity-t12.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: ring_t4 (four pieces a thread), ring_t4_long_k"
timeout 60 $B parity --variant ring_t4 --variant ring_t4_long_k --shape 129,3,6144 --shape 1000,4,7936 --shape 77,5,4352 --json $OUT/parity-t4.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 40 $B parity --variant ring_t4_long_k --shape 100,3,14336 --shape 4100,4,12544 --json $OUT/parity-long-k.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "parity: the geometry points"
timeout 40 $B --variants $T parity --variant ring_t1_s3 --variant ring_t2_w8s2 --shape 333,2,14336 --shape 100,1,8448 --json $OUT/parity-geometry.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF tensor, 3 tokens"
timeout 40 $B parity --variant ring_t1 --variant ring_t1_tall --variant ring_t2 --variant ring_t4 --variant ring_t4_long_k --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 3 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: ring_t1, ring_t4"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant ring_t1 --variant ring_t4 --shape 77,3,6400 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
ab_rounds 60 old=$OLD new=$B -- --no-cublas --variants $T $(repeat_flag variant ring_t1 ring_t1_tall ring_t2 ring_t4 ring_t4_long_k ring_t1_s3 ring_t2_w8s2) $(repeat_flag shape 4096,1,14336 4096,1,8192 14336,1,8192 4096,2,14336 4096,2,8192 4096,3,6144 4096,4,6144 4096,4,8192 4096,3,14336)
step "ncu: ring_t1 at 4096x1x14336"
timeout 60 $B profile --variant ring_t1 --shape 4096,1,14336 > $OUT/profile-ring_t1.txt 2>&1; echo "profile exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
grep -i 'duration\|dram\|stall' $OUT/profile-ring_t1.txt | head -20
