#!/bin/bash
# Session 14, lease 3 (one call): lease 2's binary plus every kernel of a module asking for the whole carveout as
# shared memory (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 100), on the hypothesis that lease 2's capped
# early launches lost their overlap waiting for SMs to drain the quantizer and change carveout. B: capped early
# queue; F: the same with every grid queued early, uncapped. OLD: c484f0a. Two rounds each in turn.
LEASE_CHANGE="+log29" source scripts/lease.sh
F=.device/mmqgen_f
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
P="--picks --variant tma_128x128 --no-cublas $(repeat_flag shape 4096,1,4096 14336,2,4096 4096,4,4096 4096,8,4096 4096,16,4096 4096,32,4096 14336,8,4096 14336,16,4096 14336,32,4096 4096,4,14336 4096,16,14336 4096,32,14336 4096,64,4096 4096,96,4096 4096,128,4096 4096,192,4096 14336,96,4096 4096,512,4096)"
for round in 1 2; do
  for bin in old new f; do
    case $bin in old) X=$OLD;; new) X=$B;; f) X=$F;; esac
    step "round $round: $bin"
    timeout 90 $X bench $P --json $OUT/ab-$bin-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
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
tags=['old-1','new-1','f-1','old-2','new-2','f-2']
print('shape variant', *tags, 'new/old f/old')
for k,v in sorted(t.items()):
    if all(x in v for x in tags) and not k[3].startswith('ring'):
        o=v['old-1']+v['old-2']
        print(k, *['%.1f'%v[x] for x in tags], '%.3f %.3f'%((v['new-1']+v['new-2'])/o,(v['f-1']+v['f-2'])/o))
PY
