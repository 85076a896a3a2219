#!/usr/bin/env python3
"""The default's picks per layout side by side, from two `mmqgen bench --picks --json` runs of the same shapes:
raw weights, then padded. With --picks and no --variant, a shape's variant row is its pick.

Usage: picks_by_layout.py BENCH_RAW_JSONL BENCH_PADDED_JSONL"""
import json
import sys


def picks(path):
    out = {}
    for line in open(path):
        r = json.loads(line)
        if r.get("kind") == "variant" and r.get("status") == "timed":
            out[(r["m"], r["n"], r["k"])] = (r.get("variant"), r.get("median_us"))
    return out


raw, padded = picks(sys.argv[1]), picks(sys.argv[2])
print("| m,n,k | raw pick | µs | padded pick | µs | raw / padded speed |")
print("|---|---|---:|---|---:|---:|")
for s in padded:
    (rv, rt), (pv, pt) = raw.get(s, (None, None)), padded[s]
    ratio = f"{pt / rt:.3f}" if rt and pt else "-"
    print(f"| {s[0]},{s[1]},{s[2]} | {rv} | {rt} | {pv} | {pt} | {ratio} |")
