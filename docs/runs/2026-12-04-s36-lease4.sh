#!/bin/bash
# Session 36, lease 4: log 89, the producer warpgroup on 128 x 96 with the split last wave (the variant in
# docs/runs/2026-12-04-s36-pwg.toml; the code as docs/runs/2026-12-04-s36-log89.patch on 124a351: the producer keeps
# 24 registers instead of 40, so the tile's warps get 240; producer with tail_parts allowed; a split tile's
# arrival on named barrier 1 among the tile's threads). B is 124a351 plus the patch, OLD 124a351. Parity (ragged
# shapes, K = 1024, both layouts, the GGUF tensor), memcheck and racecheck, the producer form of 128 x 64 with its
# new register split against OLD's, 128 x 96 split against the new variant in B's bench runs, then the nine prefill
# shapes with a config whose rules name the new variant where they named 128 x 96 split (.device/pwg_config.toml).
export LEASE_CHANGE="+log89"
source scripts/lease.sh
gunzip -k .device/mmqgen_old.gz
peer_build
V="--variants docs/runs/2026-12-04-s36-pwg.toml"
{
step "parity (i12_128x96_pwg_tail; 128 x 64's producer form)"
timeout 150 $B parity --timeout 30 $V --variant i12_128x96_pwg_tail --shape 333,9,4352 --shape 129,300,2816 --shape 200,50,1024 --shape 1000,77,2816 --shape 4096,2048,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 20 $V --variant i12_128x96_pwg_tail --variant wgmma_i12_128x64_producer --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 30 --variant wgmma_i12_128x64_producer --shape 333,9,4352 --shape 4096,512,4096 --json $OUT/parity-producer.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck, racecheck"
for layout in padded raw; do
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B parity --timeout 30 $V --variant i12_128x96_pwg_tail --shape 129,300,2816 --layout $layout 2>&1 | grep -v "^\[" | tail -1; echo "memcheck $layout exit ${PIPESTATUS[0]}"
timeout 90 compute-sanitizer --tool racecheck --print-limit 2 $B parity --timeout 60 $V --variant i12_128x96_pwg_tail --shape 129,300,2816 --layout $layout 2>&1 | grep -v "^\[" | tail -1; echo "racecheck $layout exit ${PIPESTATUS[0]}"
done
step "peer build"
peer_wait
ab_rounds 60 old=$OLD new=$B -- --variant wgmma_i12_128x64_producer $(repeat_flag shape 4096,256,4096 4096,512,4096 4096,512,14336 4096,2048,4096) --no-cublas
for round in 1 2; do
step "round $round: 128 x 96 split and i12_128x96_pwg_tail (B)"
timeout 60 $B bench $V --variant wgmma_i12_128x96_tail --variant i12_128x96_pwg_tail $(repeat_flag shape 4096,2048,4096 4096,2048,14336 4096,4096,4096 14336,2048,4096) --no-cublas --json $OUT/pwg-$round.jsonl > $OUT/pwg-$round.md 2>&1; echo "bench exit $?"
grep "^| [0-9]" $OUT/pwg-$round.md | cut -d'|' -f2-5
done
bench_nine_beside_llama $B --picks --config .device/pwg_config.toml $V --variant wgmma_i12_128x64_producer --variant i12_128x96_pwg_tail
step end
} > $OUT/checks.txt 2>&1
finish_lease
