#!/usr/bin/env python3
"""Issue 11's target 3 from one lease's outputs, as docs/PERF.md tabulates it: for each shape of DIR/bench.jsonl
(`mmqgen bench --picks ... --json`), the config's pick (its table in DIR/bench.md, or PREFIX-picks.md), its median, llama.cpp's time
from the same lease (DIR/llamacpp.txt, scripts/device/lease.sh's bench_nine_beside_llama), the ratio to it, cuBLAS
bf16's median from the same bench run and the ratio to that; bold where the target holds (1.6x llama.cpp, 0.35x
cuBLAS bf16). `bench --picks` itself quotes llama.cpp from docs/DESIGN.md R4, not from the lease.

    python3 scripts/device/targets_table.py DIR [PREFIX]

PREFIX names the files as docs/runs keeps them (`2026-12-04-h200-prefill-ea4b338-` reads
`DIR/2026-12-04-h200-prefill-ea4b338-bench.jsonl`, with the picks' table in `...-picks.md`); a lease's $OUT has
them bare, the table in bench.md.
"""
import json
import os
import sys

LLAMA_TARGET = 1.6
CUBLAS_TARGET = 0.35


def shape_of(cell):
    return tuple(int(x) for x in cell.split(","))


def table_rows(path, *columns):
    """The cells of the markdown rows of `path` with one of `columns` cells whose first cell is a shape."""
    with open(path) as lines:
        for line in lines:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| ") and len(cells) in columns and cells[0][:1].isdigit():
                yield cells


def main():
    folder = sys.argv[1]
    prefix = sys.argv[2] if len(sys.argv) > 2 else ""

    def path(name):
        return os.path.join(folder, prefix + name)

    medians = {}
    with open(path("bench.jsonl")) as lines:
        for line in lines:
            row = json.loads(line)
            if row.get("status") == "timed":
                medians[((row["m"], row["n"], row["k"]), row["variant"])] = row["median_us"]
    # The pick table: m,n,k | pick | median | x cuBLAS bf16 | llama.cpp (quoted) | x llama.cpp (quoted), then (from
    # the read floor's commit on) read floor µs | x read floor.
    # docs/runs keeps the pick table alone (PREFIX-picks.md); a lease's $OUT has the whole report (bench.md).
    report = path("picks.md") if os.path.exists(path("picks.md")) else path("bench.md")
    picks = {shape_of(c[0]): c[1].strip("`*") for c in table_rows(report, 6, 8)}
    if not picks:
        print(f"no table of the config's picks in {report}: run the bench with --picks")
        return
    # llama.cpp's perf script: m,n,k | q6_K µs | bf16 µs | f16 µs | TFLOPS.
    llama = {shape_of(c[0]): float(c[1]) for c in table_rows(path("llamacpp.txt"), 5)}

    def bold(text, holds):
        return f"**{text}**" if holds else text

    print("| m,n,k | pick | µs | llama.cpp µs | x llama.cpp | cuBLAS bf16 µs | x cuBLAS bf16 | µs for 0.35x |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    held = 0
    for shape, pick in picks.items():
        ours = medians[(shape, pick)]
        cublas = medians[(shape, "cuBLAS bf16")]
        x_llama = llama[shape] / ours
        x_cublas = cublas / ours
        held += x_llama >= LLAMA_TARGET and x_cublas >= CUBLAS_TARGET
        print(
            "| %s | `%s` | %.1f | %.1f | %s | %.1f | %s | %.1f |"
            % (
                ",".join(map(str, shape)),
                pick,
                ours,
                llama[shape],
                bold("%.2f" % x_llama, x_llama >= LLAMA_TARGET),
                cublas,
                bold("%.3f" % x_cublas, x_cublas >= CUBLAS_TARGET),
                cublas / CUBLAS_TARGET,
            )
        )
    print(f"\ntarget 3 holds at {held} of {len(picks)} shapes")


if __name__ == "__main__":
    main()
