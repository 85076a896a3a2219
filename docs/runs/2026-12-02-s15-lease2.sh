#!/bin/bash
# Session 15, lease 2 (one call): decode log 32. The widened engine in 32- and 64-row blocks with K whole, several
# blocks an SM (docs/runs/2026-12-02-s15-widen-rows.toml), against the picks at n = 8-32 and m = 14336 (bench
# checks each contestant against the CPU reference before it times it). Then what each kernel of a K-split call
# takes alone (ncu, widen_128x16_ks4 at 4096x16x4096: quantizer, matmul, combine), and where ring_t4_fused spends
# its stalls at 4096x4x4096 (mmqgen profile).
source scripts/lease.sh
V=docs/runs/2026-12-02-s15-widen-rows.toml
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for round in 1 2; do
  step "round $round: bench"
  timeout 120 $B bench --variants $V --no-cublas $(repeat_flag variant widen_128x16 widen_112x32 w64k1_s2_b2 w64k1_s2_b3 w64k1_s3_b2 w64k1_s3_b3 w64k1_s4_b2 w32k1_s2_b4 w32k1_s2_b6 w32k1_s4_b4) $(repeat_flag shape 14336,8,4096 14336,12,4096 14336,16,4096 14336,32,4096) --json $OUT/bench-$round.jsonl > $OUT/bench-$round.log 2>&1; echo "bench exit $?"
done
step "ncu: kernel durations of widen_128x16_ks4 at 4096x16x4096"
timeout 90 ncu --clock-control none --target-processes all --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed $B parity --child widen_128x16_ks4 --shape 4096,16,4096 --layout padded --seed 1 2>&1 | grep -E "q6k_|mmq_|gpu__time|dram__" | head -20
step "profile: ring_t4_fused at 4096x4x4096"
timeout 90 $B profile --variant ring_t4_fused --shape 4096,4,4096 2>&1 | tail -32
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 - "$OUT" <<'PY'
import sys
sys.path.insert(0, 'scripts')
from ab_summary import by_shape
t = by_shape(sys.argv[1], 'bench')
for s,v in sorted(t.items()):
    print(s, '  '.join('%s %s'%(k,'/'.join('%.1f'%x for x in xs)) for k,xs in sorted(v.items(), key=lambda kv:min(kv[1]))))
PY
