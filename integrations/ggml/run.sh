#!/usr/bin/env bash
# Builds ggml's test-backend-ops with mmqgen's q6_K route and runs ggml's own tests and timings with it.
#
#   bash integrations/ggml/run.sh [options] GGML_SOURCE
#
# GGML_SOURCE: a ggml checkout or release tarball (.tar.gz, files at its root or under one folder), or a llama.cpp
# checkout (ggml/ inside it). It is never modified: it is copied into the work folder and patched there.
#
# Options:
#   --lib FILE      libmmqgen.so to link (default: target/release/libmmqgen.so, built with cargo when missing)
#   --work DIR      where the patched tree, the build and the outputs go (default /tmp/mmqgen-ggml)
#   --arch LIST     CMAKE_CUDA_ARCHITECTURES (default: native)
#   --only STEP     build, test, perf or memory (default: all but build alone)
#   --shape m,n,k   a perf shape (repeatable; default: the nine prefill shapes and n = 1..256 at 4096 x n x 4096,
#                   14336 x n x 4096 and 4096 x n x 14336)
#
# Steps:
#   test    test-backend-ops test -o MUL_MAT: the q6_K cases with the route strict (GGML_CUDA_MMQGEN=2: a refusal
#           aborts, so every q6_K case that passes went through mmqgen), then every case with the route on and off;
#           every case's verdict side by side.
#   perf    test-backend-ops perf at the shapes, route off then on (GGML_CUDA_MMQGEN=0 / 1), same binary.
#   memory  mem_check.c: cuMemGetInfo around a borrowed 14336 x 4096 matrix, its reserve and its calls.
# Outputs (in the work folder): test-strict.txt, test-on.txt, test-off.txt, test-verdicts.md, perf-off.txt, perf-on.txt,
# perf.md, memory.txt, and build logs.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
lib="$repo/target/release/libmmqgen.so"
work=/tmp/mmqgen-ggml
arch=native
only=""
shapes=()
source_arg=""

die() { echo "run.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
    case "$1" in
        --lib) lib=${2:?--lib needs a file}; shift 2 ;;
        --work) work=${2:?--work needs a folder}; shift 2 ;;
        --arch) arch=${2:?--arch needs a value}; shift 2 ;;
        --only) only=${2:?--only needs build, test, perf or memory}; shift 2 ;;
        --shape) shapes+=("${2:?--shape needs m,n,k}"); shift 2 ;;
        -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
        -*) die "unknown option '$1' (see --help)" ;;
        *) [ -z "$source_arg" ] || die "one GGML_SOURCE only (got '$source_arg' and '$1')"; source_arg=$1; shift ;;
    esac
done
[ -n "$source_arg" ] || die "name a ggml checkout, a ggml tarball or a llama.cpp checkout (see --help)"
case "$only" in ""|build|test|perf|memory) ;; *) die "--only takes build, test, perf or memory, not '$only'" ;; esac
if [ ${#shapes[@]} -eq 0 ]; then
    shapes=(4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096
            4096,4096,4096 4096,4096,14336 14336,4096,4096)
    for n in 1 2 4 8 16 32 64 128 256; do shapes+=(4096,$n,4096 14336,$n,4096 4096,$n,14336); done
fi

if [ ! -f "$lib" ]; then
    command -v cargo >/dev/null || die "$lib does not exist and there is no cargo to build it: pass --lib"
    (cd "$repo" && cargo build --release --locked -p mmqgen-capi)
fi
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
include="$repo/capi/include"

# The tree: a copy of the source, patched. ggml's layout has src/ and tests/ at its root; llama.cpp keeps ggml's
# sources under ggml/ and test-backend-ops.cpp in its own tests/.
mkdir -p "$work"
tree="$work/src"
if [ ! -f "$work/patched" ]; then
    rm -rf "$tree"
    mkdir -p "$tree"
    if [ -f "$source_arg" ]; then
        tar -xzf "$source_arg" -C "$tree"
        # A tarball with one top folder: use what is inside it.
        if [ ! -d "$tree/src" ] && [ "$(find "$tree" -mindepth 1 -maxdepth 1 | wc -l)" -eq 1 ]; then
            inner=$(find "$tree" -mindepth 1 -maxdepth 1); mv "$inner" "$tree.inner"; rmdir "$tree"; mv "$tree.inner" "$tree"
        fi
    elif [ -d "$source_arg" ]; then
        cp -a "$source_arg/." "$tree"
    else
        die "'$source_arg' is neither a folder nor a tarball"
    fi
    if [ -f "$tree/ggml/src/ggml-cuda/ggml-cuda.cu" ]; then ggml_root="$tree/ggml"; else ggml_root="$tree"; fi
    [ -f "$ggml_root/src/ggml-cuda/ggml-cuda.cu" ] || die "'$source_arg' holds no src/ggml-cuda/ggml-cuda.cu: not ggml"
    patch -p1 -d "$ggml_root" < "$here/ggml-cuda.patch" > "$work/patch.log" \
        || die "the CUDA patch does not apply (it is made for ggml d99724f; see $work/patch.log)"
    patch -p1 -d "$tree" < "$here/test-backend-ops.patch" >> "$work/patch.log" \
        || die "the test patch does not apply (see $work/patch.log)"
    cp "$tree/tests/test-backend-ops.cpp" "$work/test-backend-ops.eval.cpp"
    touch "$work/patched"
fi

build() {
    if [ ! -f "$work/build/CMakeCache.txt" ]; then
        cmake -S "$tree" -B "$work/build" -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES="$arch" -DGGML_CUDA_FA=OFF \
            -DCMAKE_BUILD_TYPE=Release -DGGML_BUILD_EXAMPLES=OFF -DLLAMA_CURL=OFF \
            -DGGML_CUDA_MMQGEN_LIB="$lib" -DGGML_CUDA_MMQGEN_INCLUDE="$include" > "$work/cmake.log" 2>&1 \
            || { tail -20 "$work/cmake.log"; die "cmake failed (see $work/cmake.log)"; }
    fi
    cmake --build "$work/build" -j "$(nproc)" --target test-backend-ops > "$work/build.log" 2>&1 \
        || { tail -30 "$work/build.log"; die "the build failed (see $work/build.log)"; }
}
tbo() { "$work/build/bin/test-backend-ops" "$@"; }

if [ "$only" = build ]; then
    build
    exit 0
fi
# The library finds NVRTC through the loader path: its folder must be on LD_LIBRARY_PATH (see the README).

if [ -z "$only" ] || [ "$only" = test ]; then
    cp "$work/test-backend-ops.eval.cpp" "$tree/tests/test-backend-ops.cpp"
    build
    # Strict on the q6_K cases alone (a refusal aborts the run), then every MUL_MAT case with the route on and off.
    GGML_CUDA_MMQGEN=2 tbo test -o MUL_MAT -b CUDA0 -p type_a=q6_K > "$work/test-strict.txt" 2>&1 || true
    GGML_CUDA_MMQGEN=1 tbo test -o MUL_MAT -b CUDA0 > "$work/test-on.txt" 2>&1 || true
    GGML_CUDA_MMQGEN=0 tbo test -o MUL_MAT -b CUDA0 > "$work/test-off.txt" 2>&1 || true
    python3 "$here/verdicts.py" "$work/test-off.txt" "$work/test-on.txt" "$work/test-strict.txt" \
        | tee "$work/test-verdicts.md"
fi

if [ -z "$only" ] || [ "$only" = perf ]; then
    cp "$work/test-backend-ops.eval.cpp" "$tree/tests/test-backend-ops.cpp"
    python3 "$here/perf_cases.py" "$tree/tests/test-backend-ops.cpp" "${shapes[@]}"
    build
    GGML_CUDA_MMQGEN=0 tbo perf -o MUL_MAT -b CUDA0 > "$work/perf-off.txt" 2>&1
    GGML_CUDA_MMQGEN=1 tbo perf -o MUL_MAT -b CUDA0 > "$work/perf-on.txt" 2>&1
    python3 "$here/perf_table.py" "$work/perf-off.txt" "$work/perf-on.txt" | tee "$work/perf.md"
    cp "$work/test-backend-ops.eval.cpp" "$tree/tests/test-backend-ops.cpp"
fi

if [ -z "$only" ] || [ "$only" = memory ]; then
    cc -O2 -I "$include" "$here/mem_check.c" -L "$(dirname "$lib")" -Wl,-rpath,"$(dirname "$lib")" -lmmqgen -lcuda \
        -o "$work/mem_check"
    "$work/mem_check" | tee "$work/memory.txt"
fi
