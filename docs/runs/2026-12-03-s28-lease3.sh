#!/bin/bash
# Session 28, lease 3 (one call; the binary of exp/free-barrier, MMQGEN_EXP=free through .device/x_free.sh): log 58,
# the int12 engine's warps release a stage with one mbarrier arrival instead of a fence, a shared-memory atomic and
# a shuffle (lease 2's profile: 8.7% of the stall samples on that line), warp 0 polling the release between its
# chunks and issuing the refill; and log 59 (MMQGEN_EXP=prep, .device/x_prep.sh), each output's scale dw * da read and
# multiplied while the window's last wgmmas run instead of after the drain (the epilogue's loads off its path);
# both (.device/x_both.sh). Parity, sanitizers, then A/B in one run; then the picks below 225 tokens beside the
# int12 tiles (the config's 97..224 rules), and the quantizer alone under Nsight Compute at 512 tokens.
source scripts/lease.sh
export LEASE_CHANGE="+log58+log59"
I12="wgmma_i12_128x64 wgmma_i12_128x96"
{
for x in free prep both; do
  step "parity ($x)"
  timeout 150 .device/x_$x.sh parity --timeout 30 $(repeat_flag variant $I12) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity-$x.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
done
timeout 60 .device/x_both.sh parity --timeout 30 $(repeat_flag variant $I12) --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "sanitizers (both, padded)"
for v in $I12; do
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --print-limit 2 .device/x_both.sh parity --timeout 30 --variant $v --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -2; echo "$v $tool exit ${PIPESTATUS[0]}"
  done
done
ab_rounds 90 old=$B free=.device/x_free.sh prep=.device/x_prep.sh both=.device/x_both.sh -- $(repeat_flag variant $I12) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096) --no-cublas
step "bench below 225 tokens"
timeout 120 $B bench $(repeat_flag variant tma_64x64_b2 regfold_64x32_ks2 tma_64x96_w2 wgmma_i12_128x64 wgmma_i12_128x96) $(repeat_flag shape 4096,96,4096 4096,128,4096 4096,160,4096 14336,128,4096 14336,160,4096 4096,128,14336 4096,192,14336) --no-cublas --json $OUT/bench-low.jsonl > /dev/null 2>&1; echo "bench exit $?"
step "ncu: the quantizer at 4096x512x4096"
timeout 60 ncu --clock-control none --target-processes all --kernel-name regex:^mmq_quantize_activations_i12 --launch-count 1 --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats $B parity --child wgmma_i12_128x64 --shape 4096,512,4096 --layout padded --seed 1 2>&1 | grep -v "^\[" | grep -E "Duration|Throughput|Elapsed|Warp Cycles|Achieved|Registers|Grid|Block Size|Stall|Theoretical|Waves" | head -30
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
python3 scripts/ab_summary.py --shapes $OUT bench
