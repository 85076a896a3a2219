#!/bin/bash
# Session 26, lease 3 (one call): log 52's probe (the tensor floor of each tile width), then log 51, the second warpgroup started 2, 4 or 6 chunks behind the first (the
# binary reads MMQGEN_STAGGER: an experiment, .device/stg{2,4,6}.sh set it). Parity of the staggered kernels first
# (ragged, padded: the raw layout's window barrier undoes the stagger each window), then two rounds at four shapes;
# then Nsight Compute's full set on wgmma_i12_128x64 (pipe and memory planes the profile command does not print).
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s26-stages.toml"
{
step "probe: the int12 chunk's four wgmmas alone at N = 64, 80, 96, 128 (log 52)"
timeout 60 python3 docs/runs/2026-12-02-s22-loop-probe.py --source docs/runs/2026-12-03-s26-n-probe.cu $(for n in 64 80 96 128; do printf -- '--kernel tensor_n%s:8:128:65536 --kernel tensor_n%s_nowait:8:128:65536 ' $n $n; done) 2>&1; echo "exit $?"
for s in 2 4 6; do
step "parity: stagger $s"
timeout 60 .device/stg$s.sh parity $V $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 i12_128x64_s3) --shape 333,9,4352 --shape 1000,77,2816 --shape 4096,512,4096 --timeout 30 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
done
ab_rounds 60 old=$B s2=.device/stg2.sh s4=.device/stg4.sh s6=.device/stg6.sh -- $V $(repeat_flag variant wgmma_i12_128x64 wgmma_i12_128x96 i12_128x64_s3 i12_128x80_s3) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096) --no-cublas
step "ncu --set full: wgmma_i12_128x64 at 4096,512,4096 (no stagger)"
timeout 150 ncu --clock-control none --target-processes all --kernel-name 'regex:.*int12.*128x64.*padded$' --launch-count 1 --set full $B parity --child wgmma_i12_128x64 --shape 4096,512,4096 --layout padded --seed 1 > $OUT/ncu-full-i12_128x64.txt 2>&1; echo "exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT old 2>&1 | tail -40
