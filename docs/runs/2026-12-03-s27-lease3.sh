#!/bin/bash
# Session 27, lease 3 (one call): a probe, not a kernel of the product. MMQGEN_EXP=nodata renders the int12 engine
# so that only its first STAGES windows are waited for and no stage is ever refilled (it computes on stale stages:
# the bench times it although its parity fails); tbox (log 55, one 3-D token box a window) in both. The difference
# is what waiting for the stages costs.
source scripts/lease.sh
export LEASE_CHANGE="+log55(env)+probe"
{
ab_rounds 40 old=.device/x_tbox.sh nodata=.device/x_nodata.sh -- $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT 2>&1 | tail -12
