#!/usr/bin/env python3
"""Bench runs of a lease, read back: `medians` loads DIR/<prefix>-<run>.jsonl (bench --json) as {(m, n, k, variant):
{run: median µs}} and `by_shape` as {(m, n, k): {variant: [median µs of each run]}}, for the lease scripts' own
tables; run as a program it tabulates an A/B as scripts/device/lease.sh's
ab_rounds writes it (DIR/ab-<tag>-<round>.jsonl): one row per shape and variant, each run's median, and the mean of
every other tag over BASE's.

    python3 scripts/device/ab_summary.py DIR [BASE]        (BASE defaults to "old")

With --shapes it prints, for each PREFIX (bench runs DIR/<PREFIX>-<run>.jsonl), one line a shape: every variant,
fastest first, with its median of each run:

    python3 scripts/device/ab_summary.py --shapes DIR PREFIX...
"""
import collections
import glob
import json
import os
import sys


def medians(folder, prefix="ab"):
    """{(m, n, k, variant): {run: median_us}} of the timed variant rows of folder/<prefix>-<run>.jsonl."""
    table = collections.defaultdict(dict)
    for path in sorted(glob.glob(os.path.join(folder, prefix + "-*.jsonl"))):
        run = os.path.basename(path)[len(prefix) + 1 : -len(".jsonl")]
        with open(path) as lines:
            for line in lines:
                row = json.loads(line)
                if row.get("status") == "timed" and row.get("kind") == "variant":
                    table[(row["m"], row["n"], row["k"], row["variant"])][run] = row["median_us"]
    return table


def by_shape(folder, prefix):
    """{(m, n, k): {variant: [median_us of each run, in run order]}} of folder/<prefix>-<run>.jsonl."""
    table = collections.defaultdict(dict)
    for (m, n, k, variant), by_run in medians(folder, prefix).items():
        table[(m, n, k)][variant] = [by_run[run] for run in sorted(by_run)]
    return table


def print_shapes(folder, prefixes):
    """One line a shape of folder/<prefix>-<run>.jsonl: the variants fastest first, each run's median."""
    for prefix in prefixes:
        for shape, by_variant in sorted(by_shape(folder, prefix).items()):
            ranked = sorted(by_variant.items(), key=lambda kv: min(kv[1]))
            cells = ["%s %s" % (variant, "/".join("%.2f" % x for x in runs)) for variant, runs in ranked]
            print(shape, "  ".join(cells))


def main():
    if sys.argv[1] == "--shapes":
        print_shapes(sys.argv[2], sys.argv[3:])
        return
    folder = sys.argv[1]
    base = sys.argv[2] if len(sys.argv) > 2 else "old"
    table = medians(folder)
    # ab_rounds names its files ab-<tag>-<round>.jsonl; any other ab-*.jsonl (a stray bench output) is left out,
    # and said so, rather than mistaken for a tag.
    all_runs = {run for by_run in table.values() for run in by_run}
    strays = sorted(run for run in all_runs if "-" not in run)
    if strays:
        print("left out (not ab-<tag>-<round>.jsonl):", ", ".join(f"ab-{run}.jsonl" for run in strays))
        for by_run in table.values():
            for run in strays:
                by_run.pop(run, None)
    # Round by round, BASE first in each, as ab_rounds ran them.
    runs = sorted(
        all_runs - set(strays),
        key=lambda r: (r.rsplit("-", 1)[1], r.rsplit("-", 1)[0] != base, r),
    )
    tags = sorted({run.rsplit("-", 1)[0] for run in runs} - {base})
    print("m,n,k variant", *runs, *[f"{tag}/{base}" for tag in tags])
    for key, by_run in sorted(table.items()):

        def mean(tag):
            values = [v for run, v in by_run.items() if run.rsplit("-", 1)[0] == tag]
            return sum(values) / len(values) if values else None

        cells = ["%.1f" % by_run[run] if run in by_run else "-" for run in runs]
        ratios = ["%.3f" % (mean(tag) / mean(base)) if mean(tag) and mean(base) else "-" for tag in tags]
        print("%d,%d,%d %s" % key, *cells, *ratios)


if __name__ == "__main__":
    main()
