#!/bin/bash
# Session 20, lease 7 (one call), on 16a3641 (the kernels of 41eb7b5): which CUDA lines of the fragment rings the
# stall samples fall on. ncu's source page needs the generated source as a file named as its line info says (the
# canonical name, in the working folder), so `mmqgen emit` writes it there first; then ncu's SourceCounters with
# CUDA lines, for ring_mma_128x8 at 14336x8x4096 and ring_mma_32x8_k4 at 4096x8x4096.
source scripts/lease.sh
{
for pair in ring_mma_128x8:14336,8,4096 ring_mma_32x8_k4:4096,8,4096; do
  v=${pair%%:*}; shape=${pair#*:}
  canonical=$($B list 2>/dev/null | awk -v v=$v '$1 == v {print $NF; exit}')
  $B emit $v > $canonical.cu
  step "$v ($canonical) at $shape"
  MMQGEN_LINE_INFO=1 timeout 120 ncu --clock-control none --target-processes all --kernel-name regex:^${canonical}_padded\$ --launch-count 1 --section SourceCounters --section WarpStateStats --page source --print-source cuda,sass --csv $B parity --child $v --shape $shape --layout padded --seed 1 > $OUT/source-$v.csv 2>&1; echo "ncu exit $?"
  wc -l $OUT/source-$v.csv
done
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
for f in $OUT/source-*.csv; do head -c 800 $f; echo; done
