#!/usr/bin/env bash
# The time model's agreement over the quick suite: runs `stridelab run --suite quick` with the
# model on (the default model file, probed first if missing) and summarises the results file
# with scripts/model-agreement.py. Given a results file, summarises that one instead.
#
# usage: scripts/model-agreement.sh [RESULTS.json]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ $# -ge 1 ]]; then
    exec python3 scripts/model-agreement.py "$1"
fi
cargo build --release --quiet
out=$(mktemp --suffix=.json)
trap 'rm -f "$out"' EXIT
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
target/release/stridelab run --suite quick --quiet --no-compare --out "$out" >/dev/null
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 scripts/model-agreement.py "$out"
