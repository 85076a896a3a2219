#!/bin/bash
# Prepared in session 33, not run (its device time was spent): log 79, a producer warpgroup for the int12 tiles.
# Build main plus docs/runs/2026-12-04-s33-log79.patch into .device/mmqgen (the patch changes nothing unless
# MMQGEN_EXP=producer is set), and write .device/x_producer.sh:
#   #!/bin/bash
#   MMQGEN_EXP=producer exec "$(dirname "$0")/mmqgen" "$@"
# then copy ../shared/peer to .device/peer and run this with carry [".device"]. Parity of the producer form of
# wgmma_i12_128x64 (ragged, 4096x512x4096 and 4096x512x14336 sampled, both layouts; the GGUF tensor), memcheck and
# racecheck; two A/B rounds against the same binary without the switch; the nine shapes beside llama.cpp.
source scripts/lease.sh
export LEASE_CHANGE="+log79"
peer_build
X=.device/x_producer.sh
{
step "parity (producer)"
timeout 90 $X parity --timeout 30 --variant wgmma_i12_128x64 --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --shape 4096,512,14336 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -3; echo "exit ${PIPESTATUS[0]}"
timeout 40 $X parity --timeout 20 --variant wgmma_i12_128x64 --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck, racecheck (producer)"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $X parity --timeout 30 --variant wgmma_i12_128x64 --shape 333,9,4352 --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 60 compute-sanitizer --tool racecheck --print-limit 2 $X parity --timeout 30 --variant wgmma_i12_128x64 --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
ab_rounds 40 old=$B new=$X -- --variant wgmma_i12_128x64 $(repeat_flag shape 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 14336,2048,4096) --no-cublas
bench_nine_beside_llama $X --variant wgmma_i12_128x64 --variant wgmma_i12_128x96_tail
step end
} > $OUT/checks.txt 2>&1
finish_lease
