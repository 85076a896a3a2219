#!/bin/bash
# Session 36, lease 2: log 88 again, with whole tiles and split parts instantiated apart (MMQGEN_EXP=split_path:
# mmq_main<Layout, SPLIT_PART>, so that a whole tile's code has no split branch), alone on the segment-cut tail (sp),
# with the super-block cut (sbsp), and with log 87's three sets too (sbsp3). Parity, memcheck, two A/B rounds.
source scripts/lease.sh
export LEASE_CHANGE="+log88+log87"
SHAPES="--shape 333,9,4352 --shape 129,300,2816 --shape 200,50,1024 --shape 1000,77,2816 --shape 4096,2048,4096"
{
for x in sp sbsp sbsp3; do
step "parity ($x)"
timeout 150 .device/x_$x.sh parity --timeout 30 --variant wgmma_i12_128x96_tail $SHAPES --json $OUT/parity-$x.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
done
timeout 40 .device/x_sbsp3.sh parity --timeout 20 --variant wgmma_i12_128x96_tail --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck (sbsp3)"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 .device/x_sbsp3.sh parity --timeout 30 --variant wgmma_i12_128x96_tail --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
ab_rounds 60 old=$B sp=.device/x_sp.sh sbsp=.device/x_sbsp.sh sbsp3=.device/x_sbsp3.sh -- --variant wgmma_i12_128x96_tail $(repeat_flag shape 4096,2048,4096 4096,2048,14336 4096,4096,4096 14336,2048,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
finish_lease
