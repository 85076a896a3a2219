#!/usr/bin/env bash
# The library an engine links and the ggml route, on a GPU machine without cargo: binaries built elsewhere and
# carried in .device/ (see prepare below), outputs under $OUT.
#
#   bash scripts/device/library-lease.sh prepare   # here, with cargo: build and copy what the GPU machine needs
#   bash scripts/device/library-lease.sh library   # there: the API tests, raw-rows parity and sanitizers, the
#                                                  # picks per layout at every measured shape; ggml builds meanwhile
#   bash scripts/device/library-lease.sh ggml      # there, after `library` on the same machine: ggml's tests and
#                                                  # timings with the route, and the memory check
#   bash scripts/device/library-lease.sh all       # both in one call of under ten minutes: ggml's q6_K cases
#                                                  # only, fewer shapes
#   bash scripts/device/library-lease.sh short     # when little device time is left: API tests, parity, bench
set -u
OUT=${OUT:-device-out}
mkdir -p "$OUT"
D=.device
GGML_WORK=/tmp/mmqgen-ggml
NINE="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
export MMQGEN_CACHE_DIR=/tmp/mmqgen-cache MMQGEN_REQUIRE_GPU=1

step() { echo; echo "=== [${SECONDS} s] $*"; }
shapes() { for s in "$@"; do printf -- '--shape %s ' "$s"; done; }
# integrations/ggml/run.sh on the carried library and tarball; its step and shapes go before the tarball.
GGML_RUN=(bash integrations/ggml/run.sh --lib "$PWD/$D/libmmqgen.so" --work "$GGML_WORK" --arch 90-real)
GGML_SOURCE="$D/ggml.tar.gz"

gpu() {
    step "GPU"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    echo "commit $(cat $D/commit)"
}

# ggml's build takes minutes: started with setsid, so that it goes on after the call that started it returns.
ggml_build_in_background() {
    setsid nohup "${GGML_RUN[@]}" --only build "$GGML_SOURCE" > /tmp/ggml-build.log 2>&1 < /dev/null &
}

ggml_wait() {
    step "ggml: waiting for the build"
    for _ in $(seq 1 120); do pgrep -f "run.sh --lib" > /dev/null || break; sleep 3; done
    tail -3 /tmp/ggml-build.log
}

api_tests() {  # SECONDS_LIMIT
    step "API: every default rule through Q6kMatrix::matmul, both layouts; ragged raw rows; memory; graph capture"
    timeout "$1" "$D/api_default_rules-test" --test-threads 1 > "$OUT/api-rules.txt" 2>&1
    echo "exit $?"; grep -E "^test |test result|ran [0-9]+ rule|borrowed 14336|panicked" "$OUT/api-rules.txt" | head -20
}

parity_raw() {  # SECONDS_LIMIT VARIANT... -- SHAPE...
    local limit=$1 variants=() shape_list=()
    shift
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do variants+=(--variant "$1"); shift; done
    shift
    shape_list=("$@")
    step "parity: the raw_rows entry (K a multiple of 2048) and the raw entry (ragged K) of ${variants[*]}"
    timeout "$limit" "$D/mmqgen" parity --timeout 60 --layout raw "${variants[@]}" $(shapes "${shape_list[@]}") \
        --json "$OUT/parity-raw.jsonl" > "$OUT/parity-raw.txt" 2>&1
    echo "exit $?"; grep -v " pass$" "$OUT/parity-raw.txt" | tail -5
}

sanitizers() {  # TOOL...
    for tool in "$@"; do
        step "$tool: raw_rows"
        timeout 100 compute-sanitizer --tool "$tool" --print-limit 2 "$D/mmqgen" parity --timeout 90 --layout raw \
            --variant wgmma_i12_128x64_producer --shape 129,300,2048 2>&1 | grep -v "^\[" | tail -2
        echo "$tool exit ${PIPESTATUS[0]}"
    done
}

bench_layouts() {  # SECONDS_LIMIT BENCH_FLAGS... -- SHAPE...
    local limit=$1 flags=()
    shift
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
    shift
    step "bench: the default's picks per layout"
    for layout in raw padded; do
        timeout "$limit" "$D/mmqgen" bench --picks "${flags[@]}" --layout $layout $(shapes "$@") \
            --json "$OUT/bench-$layout.jsonl" > "$OUT/bench-$layout.md" 2>&1
        echo "bench $layout exit $?"
    done
    python3 scripts/device/picks_by_layout.py "$OUT/bench-raw.jsonl" "$OUT/bench-padded.jsonl" \
        | tee "$OUT/picks-by-layout.md"
}

ggml_q6k_tests() {
    local tbo="$GGML_WORK/build/bin/test-backend-ops"
    step "ggml: q6_K MUL_MAT cases, route strict then off"
    GGML_CUDA_MMQGEN=2 timeout 150 "$tbo" test -o MUL_MAT -b CUDA0 -p type_a=q6_K > "$OUT/test-strict.txt" 2>&1
    echo "strict exit $?"
    GGML_CUDA_MMQGEN=0 timeout 100 "$tbo" test -o MUL_MAT -b CUDA0 -p type_a=q6_K > "$OUT/test-off.txt" 2>&1
    echo "off exit $?"
    python3 integrations/ggml/verdicts.py "$OUT/test-off.txt" "$OUT/test-strict.txt" "$OUT/test-strict.txt" \
        | tee "$OUT/test-verdicts.md" | head -8
}

ggml_perf_and_memory() {  # SECONDS_LIMIT SHAPE...
    local limit=$1
    shift
    step "ggml: perf, route off and on"
    timeout "$limit" "${GGML_RUN[@]}" --only perf $(shapes "$@") "$GGML_SOURCE"
    echo "perf exit $?"
    step "ggml: memory"
    timeout 60 "${GGML_RUN[@]}" --only memory "$GGML_SOURCE"
    cp "$GGML_WORK"/test-*.txt "$GGML_WORK"/*.md "$GGML_WORK"/perf-*.txt "$GGML_WORK"/memory.txt \
        /tmp/ggml-build.log "$OUT/" 2>/dev/null
}

DECODE="4096,1,4096 14336,1,4096 4096,8,4096 14336,8,4096 4096,32,4096 4096,128,4096 14336,256,4096"
case "${1:-}" in
prepare)
    set -e
    cargo build --release --locked -p mmqgen -p mmqgen-capi
    mkdir -p "$D"
    cp target/release/mmqgen target/release/libmmqgen.so "$D/"
    for t in api api_default_rules; do
        exe=$(cargo test --release --locked -p mmqgen --test "$t" --no-run --message-format=json 2>/dev/null \
            | python3 -c 'import json,sys; print([j["executable"] for j in map(json.loads, sys.stdin) if j.get("executable")][-1])')
        cp "$exe" "$D/$t-test"
    done
    cp "${GGML_TARBALL:?set GGML_TARBALL to the ggml d99724f tarball}" "$D/ggml.tar.gz"
    git rev-parse --short HEAD > "$D/commit"
    du -sh "$D"
    ;;
library)
    gpu
    ggml_build_in_background
    api_tests 300
    step "API: two threads, bad shapes"
    timeout 120 "$D/api-test" --test-threads 1 > "$OUT/api.txt" 2>&1
    echo "exit $?"; grep -E "test result" "$OUT/api.txt"
    parity_raw 240 wgmma_i12_128x64_producer wgmma_i12_128x96 wgmma_i12_128x96_tail_producer tma_64x64_b2 -- \
        333,9,4096 129,300,2048 200,50,6144 1000,77,2816 4096,512,4096 4096,2048,14336
    sanitizers memcheck racecheck
    bench_layouts 150 -- $NINE $DECODE
    step "ggml build so far"; tail -3 /tmp/ggml-build.log
    ;;
ggml)
    ggml_wait
    step "ggml: test-backend-ops test -o MUL_MAT (q6_K strict; every case on and off)"
    timeout 330 "${GGML_RUN[@]}" --only test "$GGML_SOURCE"
    echo "exit $?"
    ggml_perf_and_memory 200 $NINE 4096,1,4096 14336,1,4096 4096,1,14336 4096,8,4096 14336,8,4096 4096,32,4096 \
        4096,128,4096 14336,256,4096
    ;;
all)
    gpu
    ggml_build_in_background
    api_tests 210
    parity_raw 90 wgmma_i12_128x64_producer wgmma_i12_128x96_tail_producer -- 129,300,2048 1000,77,2816 4096,512,4096
    ggml_wait
    ggml_q6k_tests
    ggml_perf_and_memory 130 $NINE 4096,1,4096 4096,8,4096 4096,128,4096
    sanitizers memcheck
    bench_layouts 80 --no-cublas -- $NINE 4096,1,4096 4096,8,4096
    ;;
short)
    gpu
    api_tests 200
    parity_raw 70 wgmma_i12_128x64_producer wgmma_i12_128x96_tail_producer -- 129,300,2048 1000,77,2816 4096,512,4096
    bench_layouts 60 --no-cublas -- 4096,512,4096 14336,512,4096 4096,2048,14336 4096,1,4096 4096,8,4096
    ;;
*)
    echo "usage: bash scripts/device/library-lease.sh prepare|library|ggml|all|short" >&2
    exit 2
    ;;
esac
