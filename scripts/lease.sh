# Sourced by the device lease scripts (docs/runs/*-lease*.sh): what each of them starts with. The binaries are built
# here and carried in .device/ (README, "The GPU machine"): B is the one under test, OLD the one before it in an A/B.
# The reports carry MMQGEN_COMMIT: .device/commit, plus LEASE_CHANGE (e.g. "+log23") when the binary holds work
# that is not committed yet. `step` prints a heading with the seconds since the lease script began.
set -u
export MMQGEN_COMMIT="$(cat .device/commit)${LEASE_CHANGE:-}"
B=.device/mmqgen
OLD=.device/mmqgen_old
LEASE_START=$SECONDS
step() { echo; echo "=== [$((SECONDS - LEASE_START)) s] $*"; }
# repeat_flag FLAG VALUE...: `--FLAG VALUE` for each value (bench and parity take one --variant or --shape each).
repeat_flag() {
    local flag=$1 value
    shift
    for value in "$@"; do printf -- '--%s %s ' "$flag" "$value"; done
}
# ab_rounds SECONDS BENCH_ARGS...: two rounds of OLD then B, each `bench BENCH_ARGS` into $OUT/ab-<old|new>-<round>.jsonl
# (at most SECONDS each), in turn, so that drift between them shows; scripts/ab_summary.py tabulates them.
ab_rounds() {
    local limit=$1 round bin binary
    shift
    for round in 1 2; do
        for bin in old new; do
            case $bin in old) binary=$OLD ;; new) binary=$B ;; esac
            step "round $round: $bin"
            timeout "$limit" "$binary" bench "$@" --json "$OUT/ab-$bin-$round.jsonl" > /dev/null 2>&1
            echo "bench exit $?"
        done
    done
}
