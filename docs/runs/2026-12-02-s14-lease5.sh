#!/bin/bash
# Session 14, lease 5 (one call): where the carveout request belongs (decode log 31). Lease 4 showed the fused rings
# at n = 3-4 about 5% slower than in lease 2, where no kernel asked for a carveout. Three binaries, two rounds each
# in turn: OLD (c484f0a: no early queue for small grids, no carveout request), ALL (HEAD: every kernel of a module
# asks for the whole carveout) and B (only the quantizer asks for it).
LEASE_CHANGE="+log31" source scripts/lease.sh
ALL=.device/mmqgen_all
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
P="--no-cublas $(repeat_flag variant ring_t1_fused ring_t2_fused ring_t4_fused ring_t1 ring_t2 ring_t4_long_k widen_128x16 widen_128x16_ks4 widen_64x32_ks4 tma_64x64_b2 regfold_64x32_ks2 tma_128x128) $(repeat_flag shape 4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,1,14336 4096,2,14336 4096,3,14336 4096,16,4096 4096,32,4096 4096,16,14336 14336,16,4096 4096,64,4096 4096,128,4096 4096,512,4096)"
for round in 1 2; do
  for bin in old all new; do
    case $bin in old) X=$OLD;; all) X=$ALL;; new) X=$B;; esac
    step "round $round: $bin"
    timeout 60 $X bench $P --json $OUT/ab-$bin-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
  done
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 - "$OUT" <<'PY'
import json,sys,glob,collections
out=sys.argv[1]; t=collections.defaultdict(dict)
for f in sorted(glob.glob(out+'/ab-*.jsonl')):
    tag=f.split('ab-')[1].rsplit('.',1)[0]
    for l in open(f):
        r=json.loads(l)
        if r.get('status')=='timed' and r.get('kind')=='variant':
            t[(r['m'],r['n'],r['k'],r['variant'])][tag]=r['median_us']
tags=['old-1','all-1','new-1','old-2','all-2','new-2']
print('shape variant', *tags, 'all/old new/old')
for k,v in sorted(t.items()):
    if all(x in v for x in tags):
        o=v['old-1']+v['old-2']
        print(k, *['%.1f'%v[x] for x in tags], '%.3f %.3f'%((v['all-1']+v['all-2'])/o,(v['new-1']+v['new-2'])/o))
PY
