#!/bin/bash
# Session 15, lease 3 (one call; lease 4 ran it again on another binary): decode log 33, combine = last_block. Parity of the four split-K picks' twins
# (docs/runs/2026-12-02-s15-last-block.toml) on ragged shapes of both layouts (the matmul called twice, the second
# output compared: the tile counts must come back to zero) and on the GGUF tensor, memcheck and racecheck, then
# two rounds of the picks against their twins at the shapes they are picked for.
LEASE_CHANGE="${LEASE_CHANGE:-+log33}" source scripts/lease.sh
V=docs/runs/2026-12-02-s15-last-block.toml
LB="widen_128x16_ks4_lb widen_64x32_ks4_lb regfold_64x64_ks4_lb regfold_64x32_ks2_lb"
{
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "parity: the last-block twins, ragged, both layouts"
timeout 150 $B --variants $V parity $(repeat_flag variant $LB) --shape 1000,77,2816 --shape 333,3,1280 --shape 129,17,14336 --shape 4100,32,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$"; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B --variants $V parity $(repeat_flag variant $LB) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 32 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
for tool in memcheck racecheck; do
  step "$tool: widen_128x16_ks4_lb, regfold_64x32_ks2_lb"
  timeout 60 compute-sanitizer --tool $tool $B --variants $V parity --variant widen_128x16_ks4_lb --variant regfold_64x32_ks2_lb --shape 333,17,14336 --layout padded 2>&1 | tail -2; echo "exit ${PIPESTATUS[0]}"
done
P="--no-cublas $(repeat_flag variant $LB widen_128x16_ks4 widen_64x32_ks4 regfold_64x64_ks4 regfold_64x32_ks2) $(repeat_flag shape 4096,4,4096 4096,8,4096 4096,16,4096 4096,24,4096 4096,32,4096 4096,4,14336 4096,16,14336 4096,32,14336 4096,48,14336 4096,64,14336 4096,96,14336)"
for round in 1 2; do
  step "round $round: bench"
  timeout 100 $B --variants $V bench $P --json $OUT/bench-$round.jsonl > $OUT/bench-$round.log 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 - "$OUT" <<'PY'
import sys
sys.path.insert(0, 'scripts')
from ab_summary import by_shape
t = by_shape(sys.argv[1], 'bench')
for s,v in sorted(t.items()):
    line=[]
    for base in ('widen_128x16_ks4','widen_64x32_ks4','regfold_64x64_ks4','regfold_64x32_ks2'):
        a=v.get(base); b=v.get(base+'_lb')
        if a and b: line.append('%s %s -> %s (%.3f)'%(base,'/'.join('%.1f'%x for x in a),'/'.join('%.1f'%x for x in b),sum(b)/sum(a)))
    print(s); [print('   ',x) for x in line]
PY
