#!/bin/bash
# Session 14, lease 4 (one call): 3419de3 plus `combine = cluster` (decode log 30): the four split-K picks as
# cluster twins (docs/runs/2026-12-02-s14-cluster.toml) against the catalogue's, in one bench run, two rounds;
# and the plain rings against the fused ones at n = 1-4 now that the rings find the SMs configured (log 29).
#  1. parity of the cluster twins, ragged (several segments a split at K = 14336), both layouts; GGUF; memcheck,
#     racecheck;
#  2. bench.
LEASE_CHANGE="+log30" source scripts/lease.sh
V=docs/runs/2026-12-02-s14-cluster.toml
CL="widen_128x16_ks4_cl widen_64x32_ks4_cl regfold_64x64_ks4_cl regfold_64x32_ks2_cl"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the cluster twins, ragged, both layouts"
timeout 120 $B --variants $V parity $(repeat_flag variant $CL) --shape 1000,77,2816 --shape 333,3,1280 --shape 129,17,14336 --shape 4100,32,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B --variants $V parity $(repeat_flag variant $CL) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 32 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: widen_128x16_ks4_cl, regfold_64x32_ks2_cl"
  timeout 60 compute-sanitizer --tool $tool $B --variants $V parity --variant widen_128x16_ks4_cl --variant regfold_64x32_ks2_cl --shape 333,17,14336 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
P="--no-cublas $(repeat_flag variant $CL widen_128x16_ks4 widen_64x32_ks4 regfold_64x64_ks4 regfold_64x32_ks2 widen_128x16 tma_64x64_b2) $(repeat_flag shape 4096,8,4096 4096,16,4096 4096,32,4096 4096,4,14336 4096,16,14336 4096,32,14336 4096,48,4096 4096,64,14336 4096,96,14336 14336,16,4096)"
R="--no-cublas $(repeat_flag variant ring_t1 ring_t1_fused ring_t2 ring_t2_fused ring_t4 ring_t4_fused ring_t4_long_k) $(repeat_flag shape 4096,1,4096 4096,2,4096 4096,3,4096 4096,4,4096 4096,1,14336 4096,2,14336 4096,3,14336)"
for round in 1 2; do
  step "round $round: split-K"
  timeout 90 $B --variants $V bench $P --json $OUT/bench-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
  step "round $round: rings"
  timeout 60 $B bench $R --json $OUT/rings-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 - "$OUT" <<'PY'
import json,sys,glob,collections
out=sys.argv[1]; t=collections.defaultdict(dict)
for f in sorted(glob.glob(out+'/bench-*.jsonl')+glob.glob(out+'/rings-*.jsonl')):
    tag=f.rsplit('-',1)[1].split('.')[0]
    for l in open(f):
        r=json.loads(l)
        if r.get('status')=='timed' and r.get('kind')=='variant':
            t[(r['m'],r['n'],r['k'])][r['variant']+'#'+tag]=r['median_us']
for k in sorted(t):
    v=t[k]; names=sorted({x.split('#')[0] for x in v})
    print(k, '  '.join('%s %.1f/%.1f'%(nm, v.get(nm+'#1',0), v.get(nm+'#2',0)) for nm in names))
PY
