#!/usr/bin/env python3
"""q6_K MUL_MAT timings of two `test-backend-ops perf` outputs side by side: route off (ggml's kernels), route on
(mmqgen), and their ratio (off / on: above 1 means the route is faster).

Usage: perf_table.py PERF_OFF PERF_ON"""
import re
import sys

ANSI = re.compile(r"\x1b\[[0-9;]*m")
LINE = re.compile(r"MUL_MAT\(type_a=q6_K,.*?m=(\d+),n=(\d+),k=(\d+),.*?([\d.]+) us/run")


def timings(path):
    found = {}
    for line in open(path, errors="replace"):
        match = LINE.search(ANSI.sub("", line))
        if match:
            m, n, k, us = match.groups()
            found[(int(m), int(n), int(k))] = float(us)
    return found


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    off, on = timings(sys.argv[1]), timings(sys.argv[2])
    print("| m,n,k | ggml µs (off) | mmqgen µs (on) | off / on |")
    print("|---|---:|---:|---:|")
    for shape in off:
        a, b = off[shape], on.get(shape)
        ratio = f"{a / b:.2f}" if b else "-"
        print(f"| {shape[0]},{shape[1]},{shape[2]} | {a:.2f} | {b if b is not None else '-'} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
