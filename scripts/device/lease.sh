# Sourced by a lease script (scripts/device/README.md): what each of them starts with. The binaries are built on
# the CPU machine and carried in .device/: B is the one under test, OLD the one before it in an A/B.
# The reports carry MMQGEN_COMMIT: .device/commit, plus LEASE_CHANGE (e.g. "+log23") when the binary holds work
# that is not committed yet. `step` prints a heading with the seconds since the lease script began.
set -u
export MMQGEN_COMMIT="$(cat .device/commit)${LEASE_CHANGE:-}"
B=.device/mmqgen
OLD=.device/mmqgen_old
LEASE_START=$SECONDS
step() { echo; echo "=== [$((SECONDS - LEASE_START)) s] $*"; }
# A parity case that hangs is killed after `parity --timeout` seconds (600 by default): pass a short one in a lease
# (`--timeout 30`), or a hang eats the call (one did on 2026-12-03, prefill log 48).
# repeat_flag FLAG VALUE...: `--FLAG VALUE` for each value (bench and parity take one --variant or --shape each).
repeat_flag() {
    local flag=$1 value
    shift
    for value in "$@"; do printf -- '--%s %s ' "$flag" "$value"; done
}
# ab_rounds SECONDS TAG=BINARY... -- BENCH_ARGS...: two rounds of `BINARY bench BENCH_ARGS` for each binary in the
# order given, into $OUT/ab-<TAG>-<round>.jsonl (at most SECONDS each), so that drift between them shows;
# scripts/device/ab_summary.py tabulates them against the tag `old`. E.g. `ab_rounds 60 old=$OLD new=$B -- $P`.
ab_rounds() {
    local limit=$1 round pair
    local -a pairs=()
    shift
    while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
        pairs+=("$1")
        shift
    done
    shift
    for round in 1 2; do
        for pair in "${pairs[@]}"; do
            step "round $round: ${pair%%=*}"
            timeout "$limit" "${pair#*=}" bench "$@" --json "$OUT/ab-${pair%%=*}-$round.jsonl" > /dev/null 2>&1
            echo "bench exit $?"
        done
    done
}
# peer_build: builds llama.cpp's perf script's ggml (.device/peer/llamacpp-perf.sh, scripts/device/README.md) in the
# background, its output in $OUT/peer-build.txt, so that the lease's other steps run meanwhile; peer_wait waits for
# it and prints its last line.
# Bench after peer_wait: the build's compilers would share the CPU with the launches being timed.
peer_build() {
    (bash .device/peer/llamacpp-perf.sh 4096,1,4096 > "$OUT/peer-build.txt" 2>&1
     echo "peer build exit $?" >> "$OUT/peer-build.txt") &
    PEER=$!
}
peer_wait() {
    wait "$PEER"
    tail -1 "$OUT/peer-build.txt"
}
# The nine prefill shapes of docs/DESIGN.md R4 (m,n,k), what issue 11's targets are measured at.
NINE_PREFILL="4096,512,4096 4096,512,14336 14336,512,4096 4096,2048,4096 4096,2048,14336 14336,2048,4096 4096,4096,4096 4096,4096,14336 14336,4096,4096"
# bench_nine_beside_llama BINARY BENCH_ARGS...: one bench of BENCH_ARGS (variants, --variants files) at the nine
# shapes with cuBLAS beside, into $OUT/bench.{jsonl,md} (its rows printed), then llama.cpp's perf script alone on
# the GPU at the same shapes into $OUT/llamacpp.txt: the same lease, as the targets ask. After peer_wait.
bench_nine_beside_llama() {
    local binary=$1
    shift
    step "bench ($(basename "$binary")): the nine prefill shapes, cuBLAS beside"
    timeout 150 "$binary" bench "$@" $(repeat_flag shape $NINE_PREFILL) --json "$OUT/bench.jsonl" > "$OUT/bench.md" 2>&1
    echo "exit $?"
    grep "^| [0-9]" "$OUT/bench.md" | grep -v "f16" | cut -d'|' -f2-5,12
    step "peer alone"
    timeout 150 bash .device/peer/llamacpp-perf.sh $NINE_PREFILL > "$OUT/llamacpp.txt" 2>&1
    echo "peer exit $?"
}
# finish_lease: prints $OUT/checks.txt, llama.cpp's table, the A/B table and issue 11's target table (the picks
# against llama.cpp and cuBLAS bf16 of this lease, scripts/device/targets_table.py) where the lease made them, then packs
# every output but checks.txt into $OUT/all.tgz (the device returns at most eight files).
finish_lease() {
    cat "$OUT/checks.txt"
    if [ -f "$OUT/llamacpp.txt" ]; then tail -11 "$OUT/llamacpp.txt"; fi
    if ls "$OUT"/ab-*.jsonl > /dev/null 2>&1; then python3 scripts/device/ab_summary.py "$OUT"; fi
    if [ -f "$OUT/llamacpp.txt" ] && [ -f "$OUT/bench.jsonl" ]; then python3 scripts/device/targets_table.py "$OUT"; fi
    (cd "$OUT" && tar czf all.tgz --exclude all.tgz --exclude checks.txt . ; find . -type f ! -name all.tgz ! -name checks.txt -delete)
}
