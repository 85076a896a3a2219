#!/bin/bash
# Session 12, lease 1 (one call). Log 38 (conflict-free B-fragment ldmatrix, patch of session 11) and decode log 21
# (the fused ring loads x before its first copies): proof first (parity ragged on both layouts, GGUF, every
# mutant with its sentence, memcheck and racecheck), then the binary before (02501d2) and after on the same
# shapes, one after the other.
LEASE_CHANGE="+log38+log21" source scripts/lease.sh
T=$(repeat_flag variant tma_128x128 tma_128x64 tma_64x96_b2 tma_64x96_w2 tma_64x64_w2 tma_64x64_b2 tma_64x128_b2)
R="--variants .device/fq.toml --variant ring_t1_fused --variant ring_t1_tall_fused --variant ring_t2_fq --variant ring_t4_fq --variant ring_t4_tall_fq"
P="--variant tma_128x128 --variant tma_64x128_b2 --variant tma_64x64_b2 --variant tma_64x96_b2 --variant tma_64x96_w2"
PS=$(repeat_flag shape 4096,128,4096 4096,192,4096 4096,256,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,4096,4096 14336,2048,4096)
DS=$(repeat_flag shape 4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 14336,1,4096 14336,2,4096 14336,3,4096 14336,4,4096 4096,1,14336)
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: tma, ragged, both layouts"
timeout 60 $B parity $T --shape 333,17,1280 --shape 1000,100,4352 --shape 200,5,1024 --shape 129,257,2816 --json $OUT/parity-tma.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: fused rings, ragged, both layouts"
timeout 60 $B parity $R --shape 333,1,1280 --shape 200,2,1024 --shape 1000,3,4352 --shape 129,4,2816 --shape 4100,4,4096 --json $OUT/parity-ring.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: one-token fused rings at K = 14336 (four rounds of records)"
timeout 40 $B parity --variant ring_t1_fused --variant ring_t1_tall_fused --shape 4100,1,14336 --shape 8200,1,14336 --json $OUT/parity-ring-k.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: GGUF"
timeout 40 $B parity $T --variant ring_t1_fused --variant ring_t1_tall_fused --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 300 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 30 $B parity --variant ring_t1_fused --variant ring_t1_tall_fused --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 1 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants 2>&1 | grep -v "^\["; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: tma_64x64_b2, tma_64x96_b2, ring_t1_fused (both layouts)"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant tma_64x64_b2 --variant tma_64x96_b2 --shape 200,37,1024 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant ring_t1_fused --shape 300,1,14336 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
step "decode: before"
MMQGEN_COMMIT=02501d2 timeout 40 $OLD bench $R --variant ring_t1 --variant ring_t1_tall --variant ring_t2 --variant ring_t4 --variant ring_t4_tall $DS --no-cublas --json $OUT/decode-before.jsonl > $OUT/decode-before.md 2>&1; echo "bench exit $?"
step "decode: after"
timeout 40 $B bench $R --variant ring_t1 --variant ring_t1_tall --variant ring_t2 --variant ring_t4 --variant ring_t4_tall $DS --no-cublas --json $OUT/decode-after.jsonl > $OUT/decode-after.md 2>&1; echo "bench exit $?"
step "prefill: before"
MMQGEN_COMMIT=02501d2 timeout 75 $OLD bench $P $PS --no-cublas --repeats 10 --json $OUT/prefill-before.jsonl > $OUT/prefill-before.md 2>&1; echo "bench exit $?"
step "prefill: after"
timeout 75 $B bench $P $PS --no-cublas --repeats 10 --json $OUT/prefill-after.jsonl > $OUT/prefill-after.md 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|exit [0-9]|ERROR SUMMARY|RACECHECK SUMMARY|===|mutant|CAUGHT|FAILED|MISSED|mismatch|H200" $OUT/checks.txt | head -70
