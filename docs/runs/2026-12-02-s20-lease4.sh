#!/bin/bash
# Session 20, lease 4 (one call): twice the warps an SM in the fragment ring. Lease 3 says the ring waits on its
# warps' compute (one super-block a stage changed nothing) and lease 1's ncu has issue slots at 44% with 8 warps an
# SM. warps_k = 2 on 128-row blocks (16 warps) fits in shared memory only with one super-block a stage, hence a
# timing binary (.device/mmqgen_hack: 4644be4 plus docs/runs/2026-12-02-s20-lease4-hack.patch; HACK_SB1=1 gives
# one super-block a stage, and it lets warps_m x warps_k pass 15 with warps_n = 1 and allows warps_k = 8).
# Parity of the new points first (ragged, both layouts), then two rounds against the catalogue's rings (same binary,
# no switch: the committed kernels).
source scripts/lease.sh
H=.device/mmqgen_hack
T=docs/runs/2026-12-02-s20-warps-sm.toml
SHAPES="$(repeat_flag shape 14336,8,4096 14336,4,4096 14336,3,4096 8192,8,4096 14336,8,8192 4096,8,8192 4096,8,14336 4096,4,14336)"
{
step "parity: the new points, ragged, both layouts"
HACK_SB1=1 timeout 120 $H --variants $T parity --variant w_128x8_k2_s3 --variant w_128x8_k2_s2 --variant w_112x8_k2_s3 --variant w_32x8_k8_s2 --shape 100,5,4352 --shape 333,17,14336 --shape 77,8,512 --shape 8200,5,8192 --shape 200,3,1280 --json $OUT/parity-w.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -20; echo "exit ${PIPESTATUS[0]}"
for round in 1 2; do
  step "round $round"
  timeout 60 $H bench --no-cublas $(repeat_flag variant ring_mma_128x8 ring_mma_32x8_k4 ring_t4_tall) $SHAPES --json $OUT/ab-old-$round.jsonl > /dev/null 2>&1; echo "exit $?"
  HACK_SB1=1 timeout 90 $H bench --no-cublas --variants $T $(repeat_flag variant w_128x8_k2_s3 w_128x8_k2_s2 w_112x8_k2_s3 w_32x8_k8_s2) $SHAPES --json $OUT/ab-w-$round.jsonl > /dev/null 2>&1; echo "exit $?"
done
step "ncu"
HACK_SB1=1 timeout 90 $H --variants $T profile --no-source --variant w_128x8_k2_s3 --shape 14336,8,4096 > $OUT/profile-w_128x8_k2_s3.txt 2>&1; echo "profile exit $?"
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-old ab-w
for f in $OUT/profile-*.txt; do echo "== $f"; head -12 $f; done
