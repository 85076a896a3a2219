#!/bin/bash
# Session 30, lease 1 (one call). B: the branch wip/fold-kdr4 rebased on main (the fold tile with half-super-block
# windows, kdr = 4; the fold warps keep 40 + 16 registers a fragment group); OLD: main (32706c9, the kernels of
# lease 8). Parity and the sanitizers on the kdr = 4 tiles; once llama.cpp's peer is built, main's picks at the nine
# prefill shapes with cuBLAS beside and llama.cpp's perf script alone, same shapes (does log 65 close 4096x512x4096?);
# then the kdr = 4 tiles beside the shipped ones (B), and an A/B of the shipped fold tile (its register split).
source scripts/lease.sh
export LEASE_CHANGE="+fold-kdr4"
peer_build
V="--variants docs/runs/2026-12-03-s29-fold-kdr4.toml"
K4="fold_64x128_k4 fold_64x128_k4_s3 fold_64x192_k4"
P="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
{
step "parity: the kdr = 4 tiles and the shipped fold tile (B), ragged and 4096x512x4096, both layouts; the GGUF tensor"
timeout 150 $B parity $V --timeout 30 $(repeat_flag variant $K4 wgmma_i12_64x128_fold) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity $V --timeout 30 $(repeat_flag variant $K4) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers (B, padded)"
for v in $K4; do
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B parity $V --timeout 30 --variant $v --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -1; echo "$v $tool exit ${PIPESTATUS[0]}"
  done
done
step "peer build"
peer_wait
step "bench (OLD = main): the nine prefill shapes, the int12 picks, cuBLAS beside"
timeout 150 $OLD bench $(repeat_flag variant wgmma_i12_128x96 wgmma_i12_64x128_fold) $(repeat_flag shape $P) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md | grep -v "f16"
step "peer alone"
timeout 150 bash .device/peer/llamacpp-perf.sh $P > $OUT/llamacpp.txt 2>&1; echo "peer exit $?"
step "bench (B): the kdr = 4 tiles beside the shipped ones"
timeout 200 $B bench $V $(repeat_flag variant wgmma_i12_128x96 wgmma_i12_64x128_fold $K4) $(repeat_flag shape $P 4096,1024,4096 14336,1024,4096) --no-cublas --json $OUT/bench-k4.jsonl > /dev/null 2>&1; echo "bench exit $?"
ab_rounds 60 old=$OLD new=$B -- --variant wgmma_i12_64x128_fold $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -12 $OUT/llamacpp.txt
python3 scripts/ab_summary.py $OUT
python3 scripts/ab_summary.py --shapes $OUT bench-k4
(cd $OUT && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
