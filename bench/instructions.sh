#!/usr/bin/env bash
# Deterministic cost of the simulator: instructions counted by callgrind inside the event loop
# (`mpsched_sim::bench::event_loop`: scenario parsing and output excluded), per event, per packet
# and per delivered data packet (goodput bytes / MSS), for the built-in benchmarks of issue 22.
#
#   bench/instructions.sh [NAME...]     default: the issue's scenarios
#   TRACE_PACKETS=1 bench/instructions.sh NAME...   the same with every flow's packet trace on
#
# Builds the `bench` example as the product is built (scripts/pgo.sh: profile-guided, in
# $CARGO_TARGET_DIR/pgo/build; PGO=0: the plain release build in $CARGO_TARGET_DIR, default
# target/), installs valgrind from the distribution's packages if it is missing, and prints
# which build it measured, then one row per scenario
# plus the scaling ratios (subflows-8 / subflows-1, flows-1000 / flows-1) when both ran and the
# in-memory sizes of the per-connection structures. The digest column identifies the run's
# outputs: equal digests = byte-identical outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    names=(newreno-10m lia-2path edar-handoff subflows-1 subflows-8 flows-1 flows-1000)
fi
if ! command -v valgrind >/dev/null; then
    echo "installing valgrind" >&2
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && $sudo apt-get install -y -qq valgrind >&2
fi
if [ "${PGO:-1}" = 0 ]; then
    cargo build --release -q -p mpsched-sim --example bench >&2
    bin="${CARGO_TARGET_DIR:-target}/release/examples/bench"
    echo "build: plain release (PGO=0)"
else
    # The product build prints its binary's directory (pgo.sh says on stderr whether a
    # profile was used).
    dir="$(scripts/pgo.sh exec bash -c \
        'cargo build --release -q -p mpsched-sim --example bench >&2 && echo "$CARGO_TARGET_DIR"')"
    bin="$dir/release/examples/bench"
    echo "build: scripts/pgo.sh (profile-guided when a profile could be made; see stderr)"
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
printf '%-13s %14s %10s %10s %10s %10s %10s %11s  %s\n' \
    scenario instructions events packets delivered "ins/event" "ins/pkt" "ins/deliv" digest
declare -A per_pkt
for n in "${names[@]}"; do
    out="$tmp/$n.cg"
    counters="$(valgrind --tool=callgrind --callgrind-out-file="$out" --collect-atstart=no \
        --toggle-collect='*bench::event_loop*' "$bin" --count "$n" ${TRACE_PACKETS:+--trace-packets} 2>/dev/null)"
    ins="$(awk '/^summary:/ {print $2}' "$out")"
    read -r _ ev _ pk _ dl _ dg <<<"$counters"
    per_pkt[$n]="$(awk -v i="$ins" -v p="$pk" 'BEGIN {printf "%.1f", i / p}')"
    awk -v n="$n" -v i="$ins" -v e="$ev" -v p="$pk" -v d="$dl" -v g="$dg" 'BEGIN {
        printf "%-13s %14d %10d %10d %10d %10.0f %10.0f %11.0f  %s\n", n, i, e, p, d, i / e, i / p, i / d, g }'
done
ratio() {
    if [ -n "${per_pkt[$1]:-}" ] && [ -n "${per_pkt[$2]:-}" ]; then
        awk -v a="${per_pkt[$1]}" -v b="${per_pkt[$2]}" -v x="$1" -v y="$2" \
            'BEGIN {printf "%s / %s: %.2fx the instructions per packet\n", x, y, a / b}'
    fi
}
ratio subflows-8 subflows-1
ratio flows-1000 flows-1
echo "sizes (std::mem::size_of, inline part only):"
"$bin" --sizes | sed 's/^/  /'
