#!/bin/bash
# Session 20, lease 3 (one call). (a) Fragment rings with one super-block a stage instead of two, more stages in
# the same shared memory (.device/mmqgen_sb1: 4644be4 plus docs/runs/2026-12-02-s20-lease3-hack.patch, RING_FRAGMENT_SUPERBLOCKS = 1 and stages up to 6,
# variants docs/runs/2026-12-02-s20-stage-superblocks.toml): lease 2's timing-only switches had the ring at 18.0 us
# without its mma work and 21.3 with it (ncu, 14336x8x4096), so the refills wait on the compute; a finer ring
# refills a row group's slot after every super-block. Parity first (ragged, both layouts), then two rounds against
# the catalogue's rings in the committed binary. (b) Where the four-group fragment ring overtakes the dp4a rings at
# three and four tokens below m = 8192 (lease 1: behind at K = 4096, even at 8192, ahead at 14336).
source scripts/lease.sh
S=.device/mmqgen_sb1
T=docs/runs/2026-12-02-s20-stage-superblocks.toml
SHAPES="$(repeat_flag shape 14336,8,4096 14336,4,4096 8192,8,4096 14336,8,14336 4096,8,4096 4096,8,14336 4096,4,14336)"
{
step "parity: one super-block a stage, ragged, both layouts"
timeout 120 $S --variants $T parity --variant sb1_128x8_s6 --variant sb1_112x8_s6 --variant sb1_32x8_k4_s4 --shape 100,5,4352 --shape 333,17,14336 --shape 77,8,512 --shape 8200,5,8192 --shape 200,3,1280 --json $OUT/parity-sb1.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -20; echo "exit ${PIPESTATUS[0]}"
for round in 1 2; do
  step "round $round"
  timeout 60 $B bench --no-cublas $(repeat_flag variant ring_mma_128x8 ring_mma_32x8_k4) $SHAPES --json $OUT/ab-old-$round.jsonl > /dev/null 2>&1; echo "exit $?"
  timeout 90 $S bench --no-cublas --variants $T $(repeat_flag variant sb1_128x8_s4 sb1_128x8_s5 sb1_128x8_s6 sb1_112x8_s6 sb1_32x8_k4_s3 sb1_32x8_k4_s4) $SHAPES --json $OUT/ab-sb1-$round.jsonl > /dev/null 2>&1; echo "exit $?"
done
ab_rounds 60 cross=$B -- --no-cublas $(repeat_flag variant ring_t4 ring_t4_long_k ring_mma_32x8_k4) $(repeat_flag shape 4096,3,10240 4096,4,10240 4096,3,12288 4096,4,12288 4096,3,8192)
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT ab-old ab-sb1 ab-cross
