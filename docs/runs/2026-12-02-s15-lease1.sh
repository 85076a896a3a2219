#!/bin/bash
# Session 15, lease 1 (one call): prefill log 39. OLD is HEAD before the session (ee540ec); B adds the
# branch-free quarter in the fold (every regfold and widen variant) and the fold_ahead field. Parity of the
# changed and new variants on ragged shapes of both layouts first, then two rounds of each binary in turn on four
# prefill shapes.
LEASE_CHANGE="+log39" source scripts/lease.sh
NEW_V=docs/runs/2026-12-02-s15-lease1-new.toml
OLD_V=docs/runs/2026-12-02-s15-lease1-old.toml
SHAPES="$(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,14336)"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity (B)"
timeout 150 $B parity --variants $NEW_V $(repeat_flag variant tma_128x128 t128_ts t128_fa t128_ts_fa tma_64x128_b2 b2_fa widen_128x16) --shape 1000,77,2816 --shape 129,300,2816 --layout both --json $OUT/parity.jsonl 2>&1 | tail -8
for round in 1 2; do
  step "round $round: old"
  timeout 100 $OLD bench --variants $OLD_V --no-cublas $(repeat_flag variant tma_128x128 t128_ts tma_64x128_b2) $SHAPES --json $OUT/ab-old-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
  step "round $round: new"
  timeout 100 $B bench --variants $NEW_V --no-cublas $(repeat_flag variant tma_128x128 t128_ts t128_fa t128_ts_fa tma_64x128_b2 b2_fa) $SHAPES --json $OUT/ab-new-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 - "$OUT" <<'PY'
import sys
sys.path.insert(0, 'scripts')
from ab_summary import medians
t = medians(sys.argv[1])
base={k[:3]:(v['old-1']+v['old-2'])/2 for k,v in t.items() if k[3]=='tma_128x128' and 'old-1' in v and 'old-2' in v}
print('shape variant old-1 old-2 new-1 new-2 new/old x(old tma_128x128)')
for k,v in sorted(t.items()):
    o=[v.get(x) for x in ('old-1','old-2','new-1','new-2')]
    f=lambda x:'%.1f'%x if x else '-'
    no='%.3f'%((o[2]+o[3])/(o[0]+o[1])) if all(o) else '-'
    nb='%.3f'%(((o[2]+o[3])/2)/base[k[:3]]) if o[2] and o[3] and k[:3] in base else '-'
    print(k, *map(f,o), no, nb)
PY
