#!/bin/bash
# Session 28, lease 1 (one call; prepared in session 27): log 57, the int12 engine's three products (int12_products =
# 3: X = sum h vh, Z = sum l vl, P = sum (h + l)(vh + vl), S = 4032 X + 64 P - 63 Z, the same integer; the warps stage
# each window's token sums vh + vl, one block barrier a window). The binary is built from the branch wip/karatsuba
# (e37fb65; its code as docs/runs/2026-12-03-s28-karatsuba.patch on cb79f1b), which alone reads the variant file's
# int12_products. Parity first (one small case, then ragged and 4096x512x4096 on both layouts, the GGUF tensor,
# memcheck and racecheck), Nsight Compute's SM clock and tensor-pipe activity, then A/B in one bench run: 128 x 64
# with three products against the shipped 128 x 64, and 128 x 80 (whose two stages fit with the sums; 128 x 96's do
# not) with three and four products against the shipped 128 x 96. Prediction: a quarter less tensor work, 10-20% if
# the chunk loop's wgmmas bound it; less the pass and its barrier. Outputs: docs/runs/2026-12-03-s28-lease1-*.
source scripts/lease.sh
export LEASE_CHANGE="+log57"
V="--variants docs/runs/2026-12-03-s27-karatsuba.toml"
P3="i12_128x64_p3 i12_128x80_p3"
{
step "parity: one small case"
timeout 40 $B $V parity --timeout 30 --variant i12_128x64_p3 --shape 333,9,4352 --layout padded 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "parity: ragged and 4096x512x4096, both layouts; the GGUF tensor"
timeout 120 $B $V parity --timeout 30 $(repeat_flag variant $P3) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --shape 4096,512,4096 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
for v in $P3; do
  timeout 60 $B $V parity --timeout 30 --variant $v --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
done
step "sanitizers"
for v in $P3; do
  for tool in memcheck racecheck; do
    for layout in raw padded; do
      timeout 60 compute-sanitizer --tool $tool --print-limit 2 $B $V parity --timeout 30 --variant $v --shape 333,9,4352 --layout $layout 2>&1 | grep -v "^\[" | tail -2; echo "$v $tool $layout exit ${PIPESTATUS[0]}"
    done
  done
done
step "ncu: the SM clock, the kernel's cycles and the tensor pipes' activity (shipped 128 x 96 at 4096^3, 128 x 64 with three and four products at 4096x512x4096)"
M="sm__cycles_elapsed.avg.per_second,sm__cycles_elapsed.max,gpu__time_duration.sum,smsp__issue_active.avg.pct_of_peak_sustained_active,regex:sm__pipe_tensor_op.*cycles_active.avg.pct_of_peak_sustained_(active|elapsed),regex:sm__inst_executed_pipe_tensor_op.*\.sum$"
for pick in "wgmma_i12_128x96 4096,4096,4096 128x96_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totsmem" "wgmma_i12_128x64 4096,512,4096 128x64_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totreg" "i12_128x64_p3 4096,512,4096 128x64_w8x1_kdr8_ks1_narrow_uint4_cpa0_cpp0_s2_acc1_totreg_p3"; do
  set -- $pick
  echo "--- $1 at $2"
  timeout 60 ncu --clock-control none --target-processes all --kernel-name "regex:^q6k_wgmma_k32_regfold_int12_per256_$3_padded$" --launch-count 1 --metrics "$M" $B $V parity --child $1 --shape $2 --layout padded --seed 1 2>&1 | grep -v "^\[" | tail -14
  echo "exit ${PIPESTATUS[0]}"
done
step "bench: two rounds"
for round in 1 2; do
  timeout 90 $B $V bench $(repeat_flag variant wgmma_i12_128x64 i12_128x64_p3 wgmma_i12_128x96 i12_128x80 i12_128x80_p3) $(repeat_flag shape 4096,512,4096 14336,512,4096 4096,2048,4096 4096,4096,4096) --no-cublas --json $OUT/bench-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py --shapes $OUT bench
