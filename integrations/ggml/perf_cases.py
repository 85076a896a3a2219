#!/usr/bin/env python3
"""Makes test-backend-ops' perf mode time q6_K MUL_MAT (f32 activations) at the given shapes and nothing else.

Usage: perf_cases.py TEST_BACKEND_OPS_CPP m,n,k [m,n,k ...]
Rewrites the body of make_test_cases_perf() in place (found by its signature and its matching closing brace)."""
import re
import sys


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    path = sys.argv[1]
    shapes = []
    for arg in sys.argv[2:]:
        if not re.fullmatch(r"\d+,\d+,\d+", arg):
            print(f"'{arg}' is not a shape: write m,n,k with three positive integers", file=sys.stderr)
            return 2
        shapes.append(tuple(int(v) for v in arg.split(",")))
    source = open(path).read()
    signature = "static std::vector<std::unique_ptr<test_case>> make_test_cases_perf() {"
    start = source.find(signature)
    if start < 0:
        print(f"{path} has no make_test_cases_perf(): is it ggml's tests/test-backend-ops.cpp?", file=sys.stderr)
        return 1
    depth, end = 0, start + len(signature) - 1
    for end in range(end, len(source)):
        depth += {"{": 1, "}": -1}.get(source[end], 0)
        if depth == 0:
            break
    cases = "\n".join(
        f"    test_cases.emplace_back(new test_mul_mat(GGML_TYPE_Q6_K, GGML_TYPE_F32, {m}, {n}, {k}, {{1, 1}}, {{1, 1}}));"
        for m, n, k in shapes
    )
    body = f"{signature}\n    std::vector<std::unique_ptr<test_case>> test_cases;\n{cases}\n    return test_cases;\n}}"
    open(path, "w").write(source[:start] + body + source[end + 1 :])
    return 0


if __name__ == "__main__":
    sys.exit(main())
