#!/usr/bin/env bash
# Profile-guided optimisation (PGO) of the simulator's release builds (issue 22).
#
#   scripts/pgo.sh exec CMD...   runs CMD (a cargo or maturin build) as the product build: with
#                                CARGO_TARGET_DIR=$CARGO_TARGET_DIR/pgo/build (default target/),
#                                RUSTFLAGS=-Cprofile-use=PROFILE, fat LTO and one codegen unit,
#                                making the profile first if needed. Without a profile (no
#                                rustup to install llvm-tools, offline, or MPSCHED_PGO=0) CMD runs
#                                in the same directory without them, and says so on stderr.
#   scripts/pgo.sh profile       prints the path of the profile for the current sources, making
#                                it if missing (exit 1: none can be made here)
#
# Making a profile: the `pgo_train` example of mpsched-sim is built with
# `-Cprofile-generate` (in $CARGO_TARGET_DIR/pgo/gen, same LTO and codegen units as the product
# build), runs the training scenarios below, and the raw counts are merged with LLVM's
# `llvm-profdata` (rustup component `llvm-tools`, installed here if missing). The profile is
# named after a hash of everything it depends on (the three simulator crates' sources,
# Cargo.toml/Cargo.lock, the training scenarios, the shipped policies, this script, rustc's
# version), so an edit makes a new one and an unchanged tree reuses it (~1.5 min to make).
#
# The training set is fixed here, before measuring: every shipped scenario except the ones the
# benchmarks run (single-newreno is newreno-10m, edar-handoff is edar-handoff), so the
# benchmarks measure a profile they did not train on. PGO changes code layout and inlining only,
# never results: outputs are byte-identical (the digest test holds with and without it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="$(realpath -m "${CARGO_TARGET_DIR:-$root/target}")"
cd "$root"
dir="$target/pgo"

profdata() {
    local host sysroot
    host="$(rustc -vV | sed -n 's/^host: //p')"
    sysroot="$(rustc --print sysroot)"
    echo "$sysroot/lib/rustlib/$host/bin/llvm-profdata"
}

ensure_profdata() {
    local p
    p="$(profdata)"
    if [ ! -x "$p" ] && command -v rustup >/dev/null; then
        echo "pgo: installing the rustup component llvm-tools (llvm-profdata)" >&2
        rustup component add llvm-tools >&2 || true
    fi
    [ -x "$p" ]
}

training_set() {
    ls scenarios/*.toml | grep -v -e '/single-newreno\.toml$' -e '/edar-handoff\.toml$'
}

# The product build's settings, shared by the instrumented build (the profile's counters must
# match the code they are applied to).
build_settings=(CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1)

# Prints the profile's path, making it if missing; fails when none can be made.
make_profile() {
    if ! ensure_profdata; then
        echo "pgo: no llvm-profdata (rustup component llvm-tools)" >&2
        return 1
    fi
    local key out
    key="$({
        rustc -vV
        cat scripts/pgo.sh Cargo.toml Cargo.lock
        # shellcheck disable=SC2046
        find crates/mpsched-transport crates/mpsched-sim crates/mpsched-policy \
            python/mpsched/agents/checkpoints $(training_set) -type f -print0 | sort -z | xargs -0 sha256sum
    } | sha256sum | cut -c1-16)"
    out="$dir/$key.profdata"
    if [ -f "$out" ]; then
        echo "$out"
        return 0
    fi
    echo "pgo: making the profile $out (instrumented build, training run, merge)" >&2
    rm -rf "$dir/raw"
    mkdir -p "$dir/raw"
    env "${build_settings[@]}" CARGO_TARGET_DIR="$dir/gen" RUSTFLAGS="-Cprofile-generate=$dir/raw" \
        cargo build --release -q -p mpsched-sim --example pgo_train >&2 || return 1
    # shellcheck disable=SC2046
    if ! "$dir/gen/release/examples/pgo_train" $(training_set) >"$dir/train.log" 2>&1; then
        cat "$dir/train.log" >&2
        return 1
    fi
    "$(profdata)" merge -o "$out.tmp" "$dir/raw" >&2 || return 1
    mv "$out.tmp" "$out"
    rm -rf "$dir/raw"
    # Profiles of earlier sources are not used again.
    find "$dir" -maxdepth 1 -name '*.profdata' ! -name "$key.profdata" -delete
    echo "$out"
}

case "${1:-}" in
    profile)
        make_profile
        ;;
    exec)
        shift
        [ $# -gt 0 ] || { echo "usage: scripts/pgo.sh exec CMD..." >&2; exit 2; }
        export CARGO_TARGET_DIR="$dir/build"
        if [ "${MPSCHED_PGO:-1}" != 0 ] && profile="$(make_profile)"; then
            echo "pgo: building with the profile $profile" >&2
            exec env "${build_settings[@]}" RUSTFLAGS="-Cprofile-use=$profile" "$@"
        fi
        echo "pgo: building without a profile" >&2
        exec "$@"
        ;;
    *)
        echo "usage: scripts/pgo.sh exec CMD... | scripts/pgo.sh profile" >&2
        exit 2
        ;;
esac
