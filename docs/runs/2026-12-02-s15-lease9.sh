#!/bin/bash
# Session 15, lease 9 (one call): prefill log 40, more warps an SM for the fold's loop
# (docs/runs/2026-12-02-s15-occupancy.toml) against the picks on four prefill shapes (bench checks each first).
source scripts/lease.sh
V=docs/runs/2026-12-02-s15-occupancy.toml
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "bench"
timeout 120 $B --variants $V bench --no-cublas $(repeat_flag variant tma_128x128 tma_64x128_b2 tma_64x64_b2 occ128_u1 occ128_u2 occ64_b3_u1 occ64_b3_u4) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 14336,2048,4096) --json $OUT/bench-1.jsonl > $OUT/bench-1.log 2>&1; echo "bench exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 - "$OUT" <<'PY'
import sys
sys.path.insert(0, 'scripts')
from ab_summary import by_shape
for s, v in sorted(by_shape(sys.argv[1], 'bench').items()):
    base = v['tma_128x128'][0]
    print(s, '  '.join('%s %.1f (%.3f)' % (k, x[0], x[0] / base) for k, x in sorted(v.items(), key=lambda kv: kv[1])))
PY
