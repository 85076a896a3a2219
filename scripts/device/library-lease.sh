#!/usr/bin/env bash
# The library an engine links and the ggml route, on a GPU machine without cargo: binaries built elsewhere and
# carried in .device/ (see prepare below), outputs under $OUT.
#
#   bash scripts/device/library-lease.sh prepare     # here, with cargo: build and copy what the GPU machine needs
#   bash scripts/device/library-lease.sh library     # there: the API tests, raw-rows parity and sanitizers, bench
#                                                    # of the picks per layout; starts the ggml build meanwhile
#   bash scripts/device/library-lease.sh ggml        # there, after `library` on the same machine: ggml's tests and
#                                                    # timings with the route, and the memory check
#   bash scripts/device/library-lease.sh all         # both in one call (under 10 minutes): ggml's q6_K cases only,
#                                                    # fewer perf shapes
set -u
OUT=${OUT:-device-out}
mkdir -p "$OUT"
D=.device
step() { echo; echo "=== [${SECONDS} s] $*"; }
NINE="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
shapes() { for s in "$@"; do printf -- '--shape %s ' "$s"; done; }
GGML_WORK=/tmp/mmqgen-ggml

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
    step "GPU"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    echo "commit $(cat $D/commit)"
    # ggml's build takes minutes: started with setsid, so that it goes on after this call returns.
    setsid nohup bash integrations/ggml/run.sh --lib "$PWD/$D/libmmqgen.so" --work "$GGML_WORK" --arch 90-real \
        --only build "$D/ggml.tar.gz" > /tmp/ggml-build.log 2>&1 < /dev/null &
    export MMQGEN_CACHE_DIR=/tmp/mmqgen-cache MMQGEN_REQUIRE_GPU=1
    step "API: every default rule through Q6kMatrix::matmul, both layouts; ragged raw rows; memory; graph capture"
    timeout 300 "$D/api_default_rules-test" --test-threads 1 > "$OUT/api-rules.txt" 2>&1
    echo "exit $?"; grep -E "^test |test result|ran [0-9]+ rule|borrowed 14336" "$OUT/api-rules.txt"
    step "API: two threads, bad shapes"
    timeout 120 "$D/api-test" --test-threads 1 > "$OUT/api.txt" 2>&1
    echo "exit $?"; grep -E "test result" "$OUT/api.txt"
    step "parity: the tma variants' raw_rows entry (raw layout, K a multiple of 2048) and their raw entry (ragged K)"
    timeout 240 "$D/mmqgen" parity --timeout 60 --layout raw --variant wgmma_i12_128x64_producer \
        --variant wgmma_i12_128x96 --variant wgmma_i12_128x96_tail_producer --variant tma_64x64_b2 \
        $(shapes 333,9,4096 129,300,2048 200,50,6144 1000,77,2816 4096,512,4096) \
        --json "$OUT/parity-raw.jsonl" > "$OUT/parity-raw.txt" 2>&1
    echo "exit $?"; grep -v " pass$" "$OUT/parity-raw.txt" | tail -5
    step "memcheck, racecheck: raw_rows"
    for tool in memcheck racecheck; do
        timeout 100 compute-sanitizer --tool $tool --print-limit 2 "$D/mmqgen" parity --timeout 90 --layout raw \
            --variant wgmma_i12_128x64_producer --shape 129,300,2048 2>&1 | grep -v "^\[" | tail -2
        echo "$tool exit ${PIPESTATUS[0]}"
    done
    step "bench: the default's picks per layout (cuBLAS beside)"
    for layout in raw padded; do
        timeout 150 "$D/mmqgen" bench --picks --layout $layout $(shapes $NINE) \
            $(shapes 4096,1,4096 14336,1,4096 4096,8,4096 14336,8,4096 4096,32,4096 4096,128,4096 14336,256,4096) \
            --json "$OUT/bench-$layout.jsonl" > "$OUT/bench-$layout.md" 2>&1
        echo "bench $layout exit $?"
    done
    python3 scripts/device/picks_by_layout.py "$OUT/bench-raw.jsonl" "$OUT/bench-padded.jsonl" \
        | tee "$OUT/picks-by-layout.md"
    step "ggml build so far"; tail -3 /tmp/ggml-build.log; ls "$GGML_WORK/build/bin" 2>/dev/null
    ;;
ggml)
    step "ggml: waiting for the build started by the library step"
    for _ in $(seq 1 100); do pgrep -f "run.sh --lib" > /dev/null || break; sleep 3; done
    tail -3 /tmp/ggml-build.log
    step "ggml: test-backend-ops test -o MUL_MAT (q6_K strict; every case on and off)"
    timeout 330 bash integrations/ggml/run.sh --lib "$PWD/$D/libmmqgen.so" --work "$GGML_WORK" --arch 90-real \
        --only test "$D/ggml.tar.gz"
    echo "exit $?"
    step "ggml: perf, route off and on"
    timeout 200 bash integrations/ggml/run.sh --lib "$PWD/$D/libmmqgen.so" --work "$GGML_WORK" --arch 90-real \
        --only perf "$D/ggml.tar.gz"
    echo "exit $?"
    step "ggml: memory"
    timeout 60 bash integrations/ggml/run.sh --lib "$PWD/$D/libmmqgen.so" --work "$GGML_WORK" --arch 90-real \
        --only memory "$D/ggml.tar.gz"
    cp "$GGML_WORK"/test-*.txt "$GGML_WORK"/*.md "$GGML_WORK"/perf-*.txt "$GGML_WORK"/memory.txt "$OUT/" 2>/dev/null
    ;;
all)
    # Everything in one call of under ten minutes: ggml builds meanwhile; fewer shapes everywhere.
    step "GPU"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    echo "commit $(cat $D/commit)"
    setsid nohup bash integrations/ggml/run.sh --lib "$PWD/$D/libmmqgen.so" --work "$GGML_WORK" --arch 90-real \
        --only build "$D/ggml.tar.gz" > /tmp/ggml-build.log 2>&1 < /dev/null &
    export MMQGEN_CACHE_DIR=/tmp/mmqgen-cache MMQGEN_REQUIRE_GPU=1
    step "API: every default rule through Q6kMatrix::matmul, both layouts; ragged raw rows; memory; graph capture"
    timeout 210 "$D/api_default_rules-test" --test-threads 1 > "$OUT/api-rules.txt" 2>&1
    echo "exit $?"; grep -E "^test |test result|ran [0-9]+ rule|borrowed 14336|panicked" "$OUT/api-rules.txt" | head -20
    step "parity: raw_rows and raw entries of the int12 picks"
    timeout 90 "$D/mmqgen" parity --timeout 40 --layout raw --variant wgmma_i12_128x64_producer \
        --variant wgmma_i12_128x96_tail_producer $(shapes 129,300,2048 1000,77,2816 4096,512,4096) \
        --json "$OUT/parity-raw.jsonl" > "$OUT/parity-raw.txt" 2>&1
    echo "exit $?"; grep -v " pass$" "$OUT/parity-raw.txt" | tail -3
    step "ggml: waiting for the build"
    for _ in $(seq 1 100); do pgrep -f "run.sh --lib" > /dev/null || break; sleep 3; done
    tail -2 /tmp/ggml-build.log
    tbo="$GGML_WORK/build/bin/test-backend-ops"
    step "ggml: q6_K MUL_MAT cases, route strict then off"
    GGML_CUDA_MMQGEN=2 timeout 100 "$tbo" test -o MUL_MAT -b CUDA0 -p type_a=q6_K > "$OUT/test-strict.txt" 2>&1
    echo "strict exit $?"
    GGML_CUDA_MMQGEN=0 timeout 60 "$tbo" test -o MUL_MAT -b CUDA0 -p type_a=q6_K > "$OUT/test-off.txt" 2>&1
    echo "off exit $?"
    python3 integrations/ggml/verdicts.py "$OUT/test-off.txt" "$OUT/test-strict.txt" "$OUT/test-strict.txt" \
        | tee "$OUT/test-verdicts.md" | head -8
    step "ggml: perf, route off and on"
    timeout 130 bash integrations/ggml/run.sh --lib "$PWD/$D/libmmqgen.so" --work "$GGML_WORK" --arch 90-real \
        --only perf $(shapes $NINE 4096,1,4096 4096,8,4096 4096,128,4096) "$D/ggml.tar.gz"
    echo "perf exit $?"
    step "ggml: memory"
    timeout 40 bash integrations/ggml/run.sh --lib "$PWD/$D/libmmqgen.so" --work "$GGML_WORK" --arch 90-real \
        --only memory "$D/ggml.tar.gz"
    cp "$GGML_WORK"/perf*.txt "$GGML_WORK"/perf.md "$GGML_WORK"/memory.txt /tmp/ggml-build.log "$OUT/" 2>/dev/null
    step "memcheck: raw_rows"
    timeout 60 compute-sanitizer --tool memcheck --print-limit 2 "$D/mmqgen" parity --timeout 50 --layout raw \
        --variant wgmma_i12_128x64_producer --shape 129,300,2048 2>&1 | grep -v "^\[" | tail -2
    step "bench: the default's picks per layout"
    for layout in raw padded; do
        timeout 80 "$D/mmqgen" bench --picks --no-cublas --layout $layout $(shapes $NINE 4096,1,4096 4096,8,4096) \
            --json "$OUT/bench-$layout.jsonl" > "$OUT/bench-$layout.md" 2>&1
        echo "bench $layout exit $?"
    done
    python3 scripts/device/picks_by_layout.py "$OUT/bench-raw.jsonl" "$OUT/bench-padded.jsonl" \
        | tee "$OUT/picks-by-layout.md"
    ;;
short)
    # When little device time is left: the API tests, the raw_rows parity and the picks per layout at five shapes.
    step "GPU"; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    echo "commit $(cat $D/commit)"
    export MMQGEN_CACHE_DIR=/tmp/mmqgen-cache MMQGEN_REQUIRE_GPU=1
    step "API: every default rule through Q6kMatrix::matmul, both layouts; ragged raw rows; memory; graph capture"
    timeout 200 "$D/api_default_rules-test" --test-threads 1 > "$OUT/api-rules.txt" 2>&1
    echo "exit $?"; grep -E "^test |test result|ran [0-9]+ rule|borrowed 14336|panicked" "$OUT/api-rules.txt" | head -20
    step "parity: raw_rows and raw entries of the int12 picks"
    timeout 70 "$D/mmqgen" parity --timeout 40 --layout raw --variant wgmma_i12_128x64_producer \
        --variant wgmma_i12_128x96_tail_producer $(shapes 129,300,2048 1000,77,2816 4096,512,4096) \
        --json "$OUT/parity-raw.jsonl" > "$OUT/parity-raw.txt" 2>&1
    echo "exit $?"; grep -v " pass$" "$OUT/parity-raw.txt" | tail -3
    step "bench: the default's picks per layout"
    for layout in raw padded; do
        timeout 60 "$D/mmqgen" bench --picks --no-cublas --layout $layout \
            $(shapes 4096,512,4096 14336,512,4096 4096,2048,14336 4096,1,4096 4096,8,4096) \
            --json "$OUT/bench-$layout.jsonl" > "$OUT/bench-$layout.md" 2>&1
        echo "bench $layout exit $?"
    done
    python3 scripts/device/picks_by_layout.py "$OUT/bench-raw.jsonl" "$OUT/bench-padded.jsonl" \
        | tee "$OUT/picks-by-layout.md"
    ;;
*)
    echo "usage: bash scripts/device/library-lease.sh prepare|library|ggml|all|short" >&2
    exit 2
    ;;
esac
