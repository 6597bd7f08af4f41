#!/usr/bin/env bash
# Does this checkout simulate exactly what another build did? Runs `stridelab sim KERNEL k=v…
# --json` for every distinct point of a suite with both binaries and compares the outputs byte
# for byte, once with the analytic copy schedules (`--wisdom off`) and once with a wisdom file
# the other build prefilled (`stridelab wisdom`, into a temporary file; the user's own wisdom
# file is never read or written). For changes that must not change behaviour.
#
# The comparison is the ignored integration test tests/integration/sim_against_build.rs; this
# script builds and runs it. It prints the number of points and runs, and every differing point.
#
# Usage: scripts/sim-identical.sh OTHER_BINARY [SUITE]   (SUITE: quick (default), full, gate
# or a TOML file; e.g. build the other commit in a `git worktree` and pass its
# target/release/stridelab)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 OTHER_BINARY [SUITE]" >&2; exit 2; }
other=$(realpath -e "$1" 2>/dev/null) || { echo "no binary at $1" >&2; exit 2; }
[ -x "$other" ] || { echo "$1 is not executable" >&2; exit 2; }

cd "$root"
STRIDELAB_COMPARE_BIN=$other STRIDELAB_COMPARE_SUITE=${2:-quick} \
    cargo test --release --test integration sim_against_build -- --ignored --nocapture
