#!/bin/bash
# Session 33, lease 6. OLD: 7db5189 (.device/mmqgen_old; its kernels are main's). B: main (1d1ce63) plus log 78: the
# separate activation quantizer's body in two functions and a loop over SPANS_PER_WARP consecutive spans a warp,
# every load issued first (1 by default; MMQGEN_EXP=spans2 / spans4 through .device/x_spans{2,4}.sh, the launcher's
# grid following it). Parity of spans2 and spans4 on a quantizer of each kind (the 12-bit planes in the copy engine's
# scale order, groups of 32 for the copy engine, groups of 256), padded; two A/B rounds of the four, the quantizer
# alone and the whole call, at four shapes.
gunzip -f .device/mmqgen_old.gz
source scripts/lease.sh
export LEASE_CHANGE="+log78"
{
for s in 2 4; do
step "parity (spans$s)"
timeout 45 .device/x_spans$s.sh parity --timeout 20 --variant wgmma_i12_128x64 --variant tma_64x64_b2 --variant dp4a_int_per256 --shape 333,9,4352 --shape 1000,77,2816 --layout padded --json $OUT/parity-spans$s.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -2; echo "exit ${PIPESTATUS[0]}"
done
ab_rounds 30 old=$OLD s1=$B s2=.device/x_spans2.sh s4=.device/x_spans4.sh -- --variant wgmma_i12_128x64 --variant wgmma_i12_128x96_tail $(repeat_flag shape 4096,512,4096 4096,512,14336 4096,2048,4096 4096,2048,14336) --no-cublas
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
python3 scripts/ab_summary.py $OUT
python3 - "$OUT" <<'PY'
import json, sys, glob
for f in sorted(glob.glob(sys.argv[1] + "/ab-*.jsonl")):
    for line in open(f):
        r = json.loads(line)
        if r.get("kind") == "variant" and r["variant"] == "wgmma_i12_128x64":
            print(f.split("/")[-1], r["m"], r["n"], r["k"], "quantizer", round(r.get("quantizer_median_us") or 0, 2))
PY
(cd $OUT && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
