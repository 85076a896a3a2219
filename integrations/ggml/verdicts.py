#!/usr/bin/env python3
"""Side by side, each MUL_MAT case's verdict in three `test-backend-ops test` outputs: every case with the route off
and on, and the q6_K cases with the route strict (a refusal aborts that run).

Usage: verdicts.py TEST_OFF TEST_ON TEST_STRICT
Prints a markdown summary; exits 1 when a q6_K case does not pass with the route on or strict, or when any other
case's verdict differs between off and on."""
import re
import sys

CASE = re.compile(r"^\s*MUL_MAT\((?P<params>[^)]*(?:\)[^:]*)?)\):\s*(?P<rest>.*)$")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def verdicts(path):
    found = {}
    for line in open(path, errors="replace"):
        match = CASE.match(ANSI.sub("", line.rstrip("\n")))
        if not match:
            continue
        rest = match.group("rest")
        verdict = "OK" if rest.endswith("OK") else "FAIL" if "FAIL" in rest else "not supported" if "not supported" in rest else "?"
        found[match.group("params")] = verdict
    return found


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    off, on, strict = (verdicts(p) for p in sys.argv[1:4])
    q6k = [p for p in off if "type_a=q6_K" in p]
    other = [p for p in off if "type_a=q6_K" not in p]
    print("| run | MUL_MAT cases | q6_K cases | q6_K OK | other cases | others OK |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, run in (("route off (GGML_CUDA_MMQGEN=0)", off), ("route on (GGML_CUDA_MMQGEN=1)", on),
                      ("route strict, q6_K only (GGML_CUDA_MMQGEN=2)", strict)):
        q6 = [p for p in run if "type_a=q6_K" in p]
        others = [p for p in run if "type_a=q6_K" not in p]
        print(f"| {name} | {len(run)} | {len(q6)} | {sum(run[p] == 'OK' for p in q6)} | {len(others)} | "
              f"{sum(run[p] == 'OK' for p in others)} |")
    print()
    problems = []
    for p in q6k:
        for name, run in (("on", on), ("strict", strict)):
            if run.get(p) != "OK":
                problems.append(f"- q6_K case not passing with the route {name}: MUL_MAT({p}): "
                                f"{run.get(p, 'missing (the run stopped)')}")
    for p in other:
        if on.get(p) != off[p]:
            problems.append(f"- verdict changed: MUL_MAT({p}): off {off[p]}, on {on.get(p, 'missing')}")
    print("\n".join(problems) if problems else
          f"Every q6_K case passes through mmqgen, strict ({len(q6k)}); every other case's verdict is unchanged "
          f"({len(other)}).")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
