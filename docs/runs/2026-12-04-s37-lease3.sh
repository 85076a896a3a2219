#!/bin/bash
# Session 37, lease 3: why the parts kernel (lease 2) costs 1-2% where the last wave splits. B is lease 2's build
# (the parts kernel, cut at super-blocks) with three switches: MMQGEN_EXP=parts_plain (.device/x_plain.sh: the parts
# kernel queued the ordinary way, after the whole tiles' kernel ends), parts_nowait (x_nowait.sh: no
# griddepcontrol.wait at the parts kernel's end) and parts_notrigger (x_notrigger.sh: the whole tiles' kernel lets
# its dependent launch only as its blocks end). Two A/B rounds against 4d86f15 (OLD).
export LEASE_CHANGE="+log90-parts-kernel-switches"
source scripts/lease.sh
gunzip -k .device/mmqgen_old.gz
{
step "parity (the switches)"
for x in plain nowait notrigger; do timeout 60 .device/x_$x.sh parity --timeout 30 --variant wgmma_i12_128x96_tail_producer --shape 129,300,1280 --shape 4096,2048,4096 2>&1 | tail -1; done
ab_rounds 60 old=$OLD new=$B plain=.device/x_plain.sh nowait=.device/x_nowait.sh notrigger=.device/x_notrigger.sh -- --variant wgmma_i12_128x96_tail_producer $(repeat_flag shape 4096,2048,4096 4096,2048,14336 4096,4096,4096) --no-cublas
step end
} > $OUT/checks.txt 2>&1
finish_lease
