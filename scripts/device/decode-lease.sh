#!/usr/bin/env bash
# Decode against the read floor, and a whole decode step as engines run it (docs/PERF.md, "Decode against the
# read floor, and a whole step"), on a GPU machine without cargo: the binary built here and carried in .device/.
#
#   bash scripts/device/decode-lease.sh prepare   # here, with cargo: build the release mmqgen into .device/
#   bash scripts/device/decode-lease.sh run       # there: the picks beside the read floor at n = 1-8, 16, 32 of
#                                                 # the three decode shapes, then the decode step at 1, 8 and 32
#                                                 # tokens; outputs under $OUT, under 5 minutes in all
#
# NVRTC 13.0 must be findable there: carry .nvrtc/ (then this sources .ci/env.sh) or have it on the loader path.
set -u
OUT=${OUT:-device-out}
mkdir -p "$OUT"
D=.device
export MMQGEN_CACHE_DIR=${MMQGEN_CACHE_DIR:-/tmp/mmqgen-cache}

step() { echo; echo "=== [${SECONDS} s] $*"; }
shapes() { for s in "$@"; do printf -- '--shape %s ' "$s"; done; }
# n = 1-8, 16 and 32 at m x n x K.
decode_shapes() { for n in 1 2 3 4 5 6 7 8 16 32; do printf '%s,%s,%s ' "$1" "$n" "$2"; done; }

floor_bench() {  # SECONDS_LIMIT M K VARIANT (the default's pick at n = 1; --picks adds the others)
    local limit=$1 m=$2 k=$3 variant=$4 tag="$2x$3"
    step "bench --picks beside the read floor at $m x n x $k (n = 1-8, 16, 32)"
    timeout "$limit" "$D/mmqgen" bench --picks --variant "$variant" --no-cublas --floor decode \
        --cubin-cache "$MMQGEN_CACHE_DIR" $(shapes $(decode_shapes "$m" "$k")) \
        --json "$OUT/floor-$tag.jsonl" > "$OUT/floor-$tag.md" 2> "$OUT/floor-$tag.log"
    echo "exit $?"
    # The picks table, with each pick's ratio to the floor in its last column.
    sed -n '/^The pick of/,$p' "$OUT/floor-$tag.md"
    grep -E "RUN STOPPED|SUSPECT|not timed" "$OUT/floor-$tag.log" | head -5
}

case "${1:-}" in
prepare)
    set -e
    cargo build --release --locked -p mmqgen
    mkdir -p "$D"
    cp target/release/mmqgen "$D/"
    git rev-parse --short HEAD > "$D/commit"
    du -sh "$D"
    ;;
run)
    if [ -d .nvrtc ] && [ -f .ci/env.sh ]; then
        # shellcheck disable=SC1091
        source .ci/env.sh
    fi
    export MMQGEN_COMMIT="$(cat $D/commit 2>/dev/null || echo unknown)"
    step "GPU"; nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader
    echo "commit $MMQGEN_COMMIT"
    floor_bench 65 4096 4096 ring_t1_fused
    floor_bench 60 14336 4096 ring_t1_tall_fused
    floor_bench 60 4096 14336 ring_t1_ks4_fused
    step "bench --decode-step at 1, 8 and 32 tokens (padded layout)"
    timeout 100 "$D/mmqgen" bench --decode-step --tokens 1,8,32 --layout padded \
        --json "$OUT/decode-step.jsonl" > "$OUT/decode-step.md" 2> "$OUT/decode-step.log"
    echo "exit $?"
    cat "$OUT/decode-step.md"
    tail -3 "$OUT/decode-step.log"
    step "done"
    ;;
*)
    echo "usage: bash scripts/device/decode-lease.sh prepare|run" >&2
    exit 2
    ;;
esac
