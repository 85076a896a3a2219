#!/bin/bash
# Session 33, leases 1 to 4 (the same script; each lease's binary was main (7db5189) plus log 76 in one form,
# docs/PERF.md session 33; PICKS as below in leases 2-4, and in lease 1 also a pick of every form of the separate
# quantizer, whose body that binary had moved into functions: PICKS="i12_128x64_oq wgmma_i12_128x64
# wgmma_i12_128x96_tail tma_64x64_b2 regfold_64x64_ks4 widen_128x16 ring_t1_fused splitk2_per32 dp4a_int_per256 r41").
# Lease 1, a mark a token and the refilling lane waiting; lease 2, one mark an item of a span and a tile's tokens,
# written by a block, every matmul thread waiting at its window end; lease 3, per token tile and span one 64-bit count
# (the epoch in its high word) and blocks past the first wave waiting with griddepcontrol.wait; lease 4, lease 1's
# quantizer (a warp a token) counting by red.add into two sets of counts that calls take in turn, each matmul thread
# reading its next count a window ahead (docs/runs/2026-12-04-s33-log76.patch). Parity of the new variant
# (docs/runs/2026-12-04-s33-overlap.toml) and the picks, ragged, 4096x512x4096 and 14336x512x4096, both layouts; the
# GGUF tensor; memcheck and racecheck; two bench rounds of 128 x 64 with and without the overlap; the nine prefill
# shapes with cuBLAS beside and llama.cpp alone.
# (Its last steps, the nine shapes and llama.cpp, ran written out; they are now scripts/lease.sh's
# bench_nine_beside_llama, the same commands.)
source scripts/lease.sh
export LEASE_CHANGE="+log76"
peer_build
V="--variants docs/runs/2026-12-04-s33-overlap.toml"
PICKS="i12_128x64_oq wgmma_i12_128x64"
{
step "parity (B): the overlapped quantizer and a pick of every quantizer path, ragged, both layouts"
timeout 200 $B parity --timeout 30 $V $(repeat_flag variant $PICKS) --shape 333,9,4352 --shape 1000,77,2816 --shape 129,300,2816 --json $OUT/parity.jsonl 2>&1 | grep -v "^\[" | grep -v " pass$" | tail -4; echo "exit ${PIPESTATUS[0]}"
timeout 60 $B parity --timeout 30 $V --variant i12_128x64_oq --shape 4096,512,4096 --shape 14336,512,4096 --json $OUT/parity-large.jsonl 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "parity (B): the GGUF tensor"
timeout 40 $B parity --timeout 30 $V --variant i12_128x64_oq --gguf formats/tests/fixtures/small_q6k.gguf --tensor blk.0.ffn_down.weight --tokens 77 2>&1 | tail -1; echo "exit ${PIPESTATUS[0]}"
step "memcheck, racecheck (B)"
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 $B parity --timeout 30 $V --variant i12_128x64_oq --shape 333,9,4352 --shape 129,300,2816 2>&1 | grep -v "^\[" | tail -1; echo "exit ${PIPESTATUS[0]}"
timeout 60 compute-sanitizer --tool racecheck --print-limit 2 $B parity --timeout 30 $V --variant i12_128x64_oq --shape 333,9,4352 --layout padded 2>&1 | grep -v "^\[" | tail -2; echo "exit ${PIPESTATUS[0]}"
step "peer build"
peer_wait
for round in 1 2; do
  step "round $round: 128 x 64 with and without the overlap"
  timeout 60 $B bench $V --variant wgmma_i12_128x64 --variant i12_128x64_oq $(repeat_flag shape 4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,256,4096) --no-cublas --json $OUT/ab-$round.jsonl > /dev/null 2>&1; echo "bench exit $?"
done
bench_nine_beside_llama $B $V --variant wgmma_i12_128x64 --variant i12_128x64_oq --variant wgmma_i12_128x96_tail
step end
} > $OUT/checks.txt 2>&1
cat $OUT/checks.txt
tail -11 $OUT/llamacpp.txt
python3 - "$OUT" <<'PY'
import json, sys, glob
rows = {}
for f in sorted(glob.glob(sys.argv[1] + "/ab-*.jsonl")):
    for line in open(f):
        r = json.loads(line)
        if r.get("median_us") is None or r.get("kind") not in (None, "variant", "mmq"): continue
        rows.setdefault((r["m"], r["n"], r["k"], r["variant"]), []).append(round(r["median_us"], 1))
for key, v in sorted(rows.items()): print(*key, v)
PY
(cd $OUT && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
