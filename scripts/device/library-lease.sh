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
#   bash scripts/device/library-lease.sh rest      # after `all`: the int12 rings' parity and batch invariance,
#                                                  # ggml's whole MUL_MAT test on and off, racecheck, the
#                                                  # two-thread API test, ggml's decode timings
#   bash scripts/device/library-lease.sh targets   # the picks per layout at every shape of issue 51's targets,
#                                                  # llama.cpp's times at the nine prefill shapes beside
#   bash scripts/device/library-lease.sh proof     # when machines are scarce: the raw entry points' parity, the API
#                                                  # test, the GGUF tensor, the picks per layout, memcheck
#   bash scripts/device/library-lease.sh short     # when little device time is left: API tests, parity, bench
#
# Each step writes its own files under $OUT; where a lease returns only a few files, point OUT elsewhere and pack it:
#   O=$OUT; OUT=/tmp/o DEADLINE=560 bash scripts/device/library-lease.sh proof > /tmp/o.log 2>&1
#   tar -C /tmp/o -czf $O/proof.tgz . /tmp/o.log
set -u
OUT=${OUT:-device-out}
mkdir -p "$OUT"
D=.device
GGML_WORK=/tmp/mmqgen-ggml
NINE="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
export MMQGEN_CACHE_DIR=/tmp/mmqgen-cache MMQGEN_REQUIRE_GPU=1

step() { echo; echo "=== [${SECONDS} s] $*"; }
# A call may run 600 s: every step's limit is cut to what is left before DEADLINE, and a step with under 20 s left
# is skipped, saying so, so that the outputs of the steps before it still come back.
DEADLINE=${DEADLINE:-580}
within() {  # SECONDS_WANTED: prints the limit to use, or fails when too little is left
    local left=$((DEADLINE - SECONDS))
    if [ "$left" -lt 20 ]; then echo "=== skipped: ${left} s left before the ${DEADLINE} s deadline" >&2; return 1; fi
    [ "$1" -lt "$left" ] && echo "$1" || echo "$left"
}
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
    # A fresh machine (the call before this one ran elsewhere): start it now.
    [ -f /tmp/ggml-build.log ] || ggml_build_in_background
    while pgrep -f "run.sh --lib" > /dev/null && [ $((DEADLINE - SECONDS)) -gt 150 ]; do sleep 3; done
    tail -3 /tmp/ggml-build.log
}

api_tests() {  # SECONDS_LIMIT
    local limit
    limit=$(within "$1") || return 0
    step "API: every default rule through Q6kMatrix::matmul, both layouts; ragged raw rows; memory; graph capture"
    timeout "$limit" "$D/api_default_rules-test" --test-threads 1 --nocapture > "$OUT/api-rules.txt" 2>&1
    echo "exit $? after $(grep -c " rule '" "$OUT/api-rules.txt") rule shapes"
    grep -E "^test |test result|ran [0-9]+ rule|borrowed 14336|panicked" "$OUT/api-rules.txt" | head -20
}

parity_raw() {  # SECONDS_LIMIT VARIANT... -- SHAPE...
    local limit variants=() shape_list=()
    limit=$(within "$1") || return 0
    shift
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do variants+=(--variant "$1"); shift; done
    shift
    shape_list=("$@")
    PARITY_RAW_RUN=$((${PARITY_RAW_RUN:-0} + 1))
    local out="$OUT/parity-raw-$PARITY_RAW_RUN"
    step "parity: the raw_rows entry (tensor copies where the copy engine reaches the blocks) and the raw entry of ${variants[*]}"
    timeout "$limit" "$D/mmqgen" parity --timeout 60 --layout raw "${variants[@]}" $(shapes "${shape_list[@]}") \
        --json "$out.jsonl" > "$out.txt" 2>&1
    echo "exit $?"; grep -v " pass$" "$out.txt" | tail -5
}

# The variants the default names only for other architectures (sm_75's dp4a, sm_80's split, sm_100's TMA tiles),
# their source compiled for this GPU: the rules of sm_90 reach the rest through the API test.
family_parity() {  # SECONDS_LIMIT
    local limit
    limit=$(within "$1") || return 0
    step "parity: the picks of the other architectures' rules, compiled for this GPU"
    timeout "$limit" "$D/mmqgen" parity --timeout 60 --variant splitk2_per32 --variant dp4a_int_per32 \
        --variant tma_128x64 --variant tma_64x64_w2 --shape 1000,77,2816 --shape 333,9,4096 \
        --json "$OUT/parity-family.jsonl" > "$OUT/parity-family.txt" 2>&1
    echo "exit $?"; grep -v " pass$" "$OUT/parity-family.txt" | tail -5
}

sanitizers() {  # TOOL...
    local limit
    for tool in "$@"; do
        limit=$(within 100) || return 0
        step "$tool: raw_rows"
        timeout "$limit" compute-sanitizer --tool "$tool" --print-limit 2 "$D/mmqgen" parity --timeout 90 \
            --layout raw --variant wgmma_i12_128x64_producer --shape 129,300,2048 2>&1 | grep -v "^\[" | tail -2
        echo "$tool exit ${PIPESTATUS[0]}"
    done
}

gguf_parity() {  # SECONDS_LIMIT
    local limit tokens
    limit=$(within "$1") || return 0
    step "parity: a GGUF tensor of 16-byte aligned rows (21 x 2048) on raw blocks, the raw picks at 5 and 77 tokens"
    for tokens in 5 77; do
        timeout "$limit" "$D/mmqgen" parity --timeout 60 --layout raw --gguf formats/tests/fixtures/rows_q6k.gguf \
            --tensor blk.0.attn_q.weight --tokens $tokens --variant ring_t1_fused --variant ring_t4 \
            --variant ring_mma_32x8_k4 --variant ring_mma_128x8 --variant widen_128x16_ks4 --variant tma_64x64_b2 \
            --variant wgmma_i12_128x64_producer --variant wgmma_i12_128x96_tail_producer \
            --json "$OUT/parity-gguf-$tokens.jsonl" > "$OUT/parity-gguf-$tokens.txt" 2>&1
        echo "tokens $tokens exit $?"; grep -v " pass$" "$OUT/parity-gguf-$tokens.txt" | tail -4
    done
}

bench_layouts() {  # SECONDS_LIMIT BENCH_FLAGS... -- SHAPE...
    local want=$1 limit flags=()
    shift
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do flags+=("$1"); shift; done
    shift
    step "bench: the default's picks per layout"
    for layout in raw padded; do
        limit=$(within "$want") || return 0
        timeout "$limit" "$D/mmqgen" bench --picks "${flags[@]}" --layout $layout $(shapes "$@") \
            --json "$OUT/bench-$layout.jsonl" > "$OUT/bench-$layout.md" 2>&1
        echo "bench $layout exit $?"
    done
    python3 scripts/device/picks_by_layout.py "$OUT/bench-raw.jsonl" "$OUT/bench-padded.jsonl" \
        | tee "$OUT/picks-by-layout.md"
}

# The raw decode rules' contestants side by side on raw blocks: the rings and widened engines through their
# raw_rows entry point against the streaming engines the raw rules named before (their 16-bit reads), so that a
# rule whose new pick loses goes back with the figure beside it.
bench_raw_contestants() {  # SECONDS_LIMIT
    local limit
    limit=$(within "$1") || return 0
    step "bench: raw decode, the rings and widened engines by tensor copies against the 16-bit streaming engines"
    timeout "$limit" "$D/mmqgen" bench --no-cublas --layout raw --variant ring_t1_fused --variant ring_t1_tall_fused \
        --variant ring_t1 --variant ring_t1_ks4_fused --variant stream_t1 --variant ring_t2_fused --variant stream_t2 \
        --variant ring_t4_fused \
        --variant ring_t4 --variant stream_t4_wide --variant ring_mma_32x8_k4 --variant ring_mma_128x8 \
        --variant widen_128x16_ks4 --variant widen_128x16 \
        --variant stream_t4 --shape 4096,1,4096 --shape 14336,1,4096 --shape 4096,1,14336 --shape 4096,2,4096 \
        --shape 4096,4,4096 --shape 4096,8,4096 --shape 14336,8,4096 \
        --json "$OUT/bench-raw-contestants.jsonl" > "$OUT/bench-raw-contestants.md" 2>&1
    echo "exit $?"; tail -25 "$OUT/bench-raw-contestants.md"
}

ggml_q6k_tests() {
    local tbo="$GGML_WORK/build/bin/test-backend-ops" limit
    [ -x "$tbo" ] || { echo "=== skipped ggml's tests: test-backend-ops was not built"; return 0; }
    limit=$(within 150) || return 0
    step "ggml: q6_K MUL_MAT cases, route strict then off"
    GGML_CUDA_MMQGEN=2 timeout "$limit" "$tbo" test -o MUL_MAT -b CUDA0 -p type_a=q6_K > "$OUT/test-strict.txt" 2>&1
    echo "strict exit $?"
    limit=$(within 100) || return 0
    GGML_CUDA_MMQGEN=0 timeout "$limit" "$tbo" test -o MUL_MAT -b CUDA0 -p type_a=q6_K > "$OUT/test-off.txt" 2>&1
    echo "off exit $?"
    python3 integrations/ggml/verdicts.py "$OUT/test-off.txt" "$OUT/test-strict.txt" "$OUT/test-strict.txt" \
        | tee "$OUT/test-verdicts.md" | head -8
}

ggml_perf_and_memory() {  # SECONDS_LIMIT SHAPE...
    local limit
    limit=$(within "$1") && {
        shift
        step "ggml: perf, route off and on"
        timeout "$limit" "${GGML_RUN[@]}" --only perf $(shapes "$@") "$GGML_SOURCE"
        echo "perf exit $?"
    }
    limit=$(within 60) && {
        step "ggml: memory"
        timeout "$limit" "${GGML_RUN[@]}" --only memory "$GGML_SOURCE"
    }
    cp "$GGML_WORK"/test-*.txt "$GGML_WORK"/*.md "$GGML_WORK"/perf-*.txt "$GGML_WORK"/memory.txt \
        /tmp/ggml-build.log "$OUT/" 2>/dev/null
    return 0
}

DECODE="4096,1,4096 14336,1,4096 4096,8,4096 14336,8,4096 4096,32,4096 4096,128,4096 14336,256,4096"
# The rings the default gives raw blocks (1-8 tokens), through their raw_rows entry point: m and K that end a box's
# rows mid-block (1000 x 2816: 11000 blocks), ragged K (11008: the raw entry), rows past m in a box (333 x 6144), a
# split K whose splits are not whole eights of blocks and a last block of rows not whole quads (333 x 14336), the
# model sizes, tails in n.
RAW_RINGS="ring_t1_fused ring_t1_tall_fused ring_t1 ring_t1_ks4_fused ring_t1_tall ring_t2_fused ring_t2 ring_t3_fused \
ring_t4_tall ring_t4 ring_t4_fused ring_mma_128x8 ring_mma_32x8_k4"
RAW_RING_SHAPES="1000,1,2816 4096,1,4096 333,1,14336 14336,2,4096 333,3,11008 333,4,6144 333,7,6144 1000,77,2816"
case "${1:-}" in
prepare)
    set -e
    cargo build --release --locked -p mmqgen -p mmqgen-capi
    mkdir -p "$D"
    cp target/release/mmqgen target/release/libmmqgen.so "$D/"
    for t in api api_default_rules batch_invariant; do
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
    parity_raw 90 $RAW_RINGS -- $RAW_RING_SHAPES
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
    parity_raw 60 $RAW_RINGS -- $RAW_RING_SHAPES
    family_parity 80
    ggml_wait
    ggml_q6k_tests
    bench_layouts 80 --no-cublas -- $NINE 4096,1,4096 14336,1,4096 4096,2,4096 4096,4,4096 4096,8,4096
    ggml_perf_and_memory 120 $NINE 4096,1,4096 4096,8,4096 4096,128,4096
    sanitizers memcheck
    ;;
rest)  # after `all`, on the same machine or a fresh one: what `all` leaves out
    gpu
    [ -f /tmp/ggml-build.log ] || ggml_build_in_background
    bench_raw_contestants 120
    limit=$(within 100) && {
        step "parity: the int12 decode rings (runtime/batch_invariant.toml's picks), both layouts"
        timeout "$limit" "$D/mmqgen" parity --timeout 60 $(for v in t1 t1_fused t1_tall t1_ks4_fused t2 t4 t8; do
            printf -- '--variant ring_i12_%s ' $v; done) --shape 1000,7,2816 --shape 4096,1,4096 \
            --json "$OUT/parity-int12.jsonl" > "$OUT/parity-int12.txt" 2>&1
        echo "exit $?"; grep -v " pass$" "$OUT/parity-int12.txt" | tail -5
    }
    limit=$(within 100) && {
        step "API: one token's row at n = 1, 129 and 2048 under the batch-invariant selection"
        timeout "$limit" "$D/batch_invariant-test" --test-threads 1 --nocapture > "$OUT/batch-invariant.txt" 2>&1
        echo "exit $?"; grep -E "^test |test result|panicked" "$OUT/batch-invariant.txt" | head
    }
    ggml_wait
    limit=$(within 300) && {
        step "ggml: test-backend-ops test -o MUL_MAT (q6_K strict; every case on and off)"
        timeout "$limit" "${GGML_RUN[@]}" --only test "$GGML_SOURCE"
        echo "exit $?"
    }
    sanitizers racecheck
    limit=$(within 120) && {
        step "API: two threads, bad shapes"
        timeout "$limit" "$D/api-test" --test-threads 1 > "$OUT/api.txt" 2>&1
        echo "exit $?"; grep -E "test result" "$OUT/api.txt"
    }
    ggml_perf_and_memory 200 4096,1,4096 14336,1,4096 4096,1,14336 4096,2,4096 4096,4,4096 4096,8,4096 \
        14336,8,4096 4096,8,14336 4096,16,4096 4096,32,4096 14336,32,4096 4096,64,4096 4096,128,4096 \
        14336,128,4096 4096,256,4096 14336,256,4096 4096,256,14336
    ;;
targets)  # issue 51's measured targets: the picks per layout at the nine prefill shapes and at n = 1-256 of the three
           # decode shapes, llama.cpp's times at the nine beside (ggml's perf with the route off)
    gpu
    ggml_build_in_background
    gguf_parity 70
    bench_layouts 200 --no-cublas --repeats 15 -- $NINE $(for n in 1 2 4 8 16 32 64 128 256; do
        printf '4096,%s,4096 14336,%s,4096 4096,%s,14336 ' $n $n $n; done)
    ggml_wait
    ggml_perf_and_memory 150 $NINE
    ;;
proof)  # one call for the raw-blocks work when machines are scarce: the new raw entry points' parity first, every
         # default rule through the API, the GGUF tensor, the picks per layout at the targets' shapes, memcheck
         # (llama.cpp's times beside them: `targets`)
    gpu
    parity_raw 90 $RAW_RINGS -- $RAW_RING_SHAPES
    parity_raw 60 wgmma_i12_128x64_producer wgmma_i12_128x96_tail_producer tma_64x64_ks4 tma_64x32_ks2 -- \
        129,300,2048 1000,77,2816 4096,512,4096 333,40,6144 333,80,6144
    api_tests 180
    gguf_parity 40
    bench_layouts 85 --no-cublas --repeats 10 -- $NINE $(for n in 1 2 4 8 16 32 64 128 256; do
        printf '4096,%s,4096 14336,%s,4096 4096,%s,14336 ' $n $n $n; done)
    sanitizers memcheck
    ;;
short)  # the proofs first (each a few compiles), then the API test (every default pick), then timings
    gpu
    parity_raw 70 wgmma_i12_128x64_producer wgmma_i12_128x96_tail_producer -- 129,300,2048 1000,77,2816 4096,512,4096
    parity_raw 50 $RAW_RINGS -- $RAW_RING_SHAPES
    family_parity 60
    api_tests 200
    bench_layouts 60 --no-cublas -- 4096,512,4096 14336,512,4096 4096,2048,14336 4096,1,4096 14336,1,4096 \
        4096,2,4096 4096,8,4096
    ;;
*)
    echo "usage: bash scripts/device/library-lease.sh prepare|library|ggml|all|rest|targets|proof|short" >&2
    exit 2
    ;;
esac
