#!/bin/bash
# Session 12, lease 2 (one call). Log 38 after its fix (the scales' tensor map spans the padded row: scale_position
# puts some of a row's last quad past n, which the map used to cut off and zero): proof on n = 77 and 41 (n mod 16 =
# 13 and 9, where that happens) and on every mutant, then the tma picks timed by the binary before (02501d2) and
# after, twice each in turn; and two-token fused rings (decode log 21) beside the picks they would replace.
LEASE_CHANGE="+log38+log21" source scripts/lease.sh
T=$(repeat_flag variant tma_128x128 tma_128x64 tma_64x96_b2 tma_64x96_w2 tma_64x64_w2 tma_64x64_b2 tma_64x128_b2)
P="--variant tma_128x128 --variant tma_64x128_b2 --variant tma_64x64_b2 --variant tma_64x96_b2 --variant tma_64x96_w2"
PS=$(repeat_flag shape 4096,128,4096 4096,192,4096 4096,256,4096 14336,64,4096 14336,96,4096 14336,128,4096 14336,192,4096 14336,256,4096 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,4096,4096 14336,2048,4096)
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: tma, ragged (n = 77, 41, 17, 100, 5, 257), both layouts"
timeout 90 $B parity $T --shape 1000,77,2816 --shape 333,41,1280 --shape 333,17,1280 --shape 1000,100,4352 --shape 200,5,1024 --shape 129,257,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
step "parity: ring_t2_fused, ring_t2_tall_fq, ragged, both layouts; GGUF"
timeout 40 $B parity --variants .device/fq2.toml --variant ring_t2_fused --variant ring_t2_tall_fq --shape 333,2,1280 --shape 8200,2,4096 --shape 129,2,2816 --shape 4100,1,4096 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 30 $B parity --variant ring_t2_fused --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 2 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "mutants"
timeout 60 $B parity --mutants 2>&1 | grep -v "^\[" | cut -c1-60,250-; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "compute-sanitizer $tool: tma_128x128 at n = 77, ring_t2_fused"
  timeout 40 compute-sanitizer --tool $tool $B parity --variant tma_128x128 --variant ring_t2_fused --shape 200,77,1024 --shape 200,2,1024 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
for round in 1 2; do
  step "prefill round $round: before"
  MMQGEN_COMMIT=02501d2 timeout 60 $OLD bench $P $PS --no-cublas --json $OUT/prefill-before-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
  step "prefill round $round: after"
  timeout 60 $B bench $P $PS --no-cublas --json $OUT/prefill-after-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step "decode: two-token fused rings"
timeout 40 $B bench --variants .device/fq2.toml --variant ring_t2_fused --variant ring_t2_tall_fq --variant ring_t2 --variant ring_t4_tall --variant ring_t1_fused --variant ring_t1_tall_fused --shape 4096,2,4096 --shape 14336,2,4096 --shape 4096,2,14336 --shape 14336,1,4096 --shape 4096,1,4096 --no-cublas --json $OUT/decode.jsonl > /dev/null 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
grep -E "case\(s\)|^exit|exit [0-9]|ERROR SUMMARY|RACECHECK SUMMARY|===|mutant|CAUGHT|FAILED|MISSED|mismatch|H200" $OUT/checks.txt | head -70
