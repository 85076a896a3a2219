#!/bin/bash
# Session 24, lease 4 (second call; the first's bench refused the variants file, which declared wgmma_i12_128x64's
# kernel a second time): the int12 engine's three tiles beside the default at the nine prefill shapes, cuBLAS bf16
# beside.
source scripts/lease.sh
V="--variants docs/runs/2026-12-03-s24-i12-stages.toml"
step "bench"
timeout 300 $B $V bench $(repeat_flag variant tma_128x128 wgmma_i12_128x64 i12_128x80_tma i12_128x96_tma) $(repeat_flag shape 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096) --json $OUT/bench.jsonl > $OUT/bench.md 2>&1; echo "exit $?"
grep "^| [0-9]" $OUT/bench.md
step end
