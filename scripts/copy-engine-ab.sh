#!/usr/bin/env bash
# Interleaved A/B runs of copy-engine variants (docs/copy-engine.md): on our shared VMs, batches of runs
# minutes apart differ by more than most tuning effects, so variants are only compared run by
# run, alternating, and summarised by median and range.
#
#   scripts/copy-engine-ab.sh save NAME          # build this tree's copy_engine bench, keep it as NAME
#   scripts/copy-engine-ab.sh run [-n RUNS] [-s SIZES] [-2] NAME...
#
# `save` copies the bench executable to target/copy-ab/NAME (edit, save A; edit, save B; ...).
# `run` alternates the saved variants RUNS times (default 6) over SIZES (default
# 1024,2048,4096,4097,8192; also `perm` and `tiles`, as COPY_ENGINE_SIZES takes them), on one
# thread, or on one and two threads with -2, and prints each case's median ratio to the same-run
# best copy (timed), with its range, per variant. Other COPY_ENGINE_* variables pass through.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
store="$root/target/copy-ab"

usage() {
    sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

save() {
    local name=$1
    [[ $name =~ ^[A-Za-z0-9._-]+$ ]] || { echo "copy-engine-ab: bad variant name '$name'" >&2; exit 2; }
    local exe
    exe=$(cd "$root" && cargo bench --bench copy_engine --no-run --message-format=json 2>/dev/null |
        python3 -c '
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["target"]["name"] == "copy_engine":
        print(msg["executable"])')
    [[ -n $exe && -x $exe ]] || { echo "copy-engine-ab: building the copy_engine bench failed (run cargo bench --bench copy_engine --no-run)" >&2; exit 1; }
    mkdir -p "$store"
    cp "$exe" "$store/$name.tmp" && mv "$store/$name.tmp" "$store/$name"
    echo "saved $store/$name"
}

run() {
    local runs=6 sizes=1024,2048,4096,4097,8192 two=0
    while getopts "n:s:2" opt; do
        case $opt in
            n) runs=$OPTARG ;;
            s) sizes=$OPTARG ;;
            2) two=1 ;;
            *) usage ;;
        esac
    done
    shift $((OPTIND - 1))
    [[ $# -ge 1 ]] || usage
    [[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "copy-engine-ab: -n wants a positive count, not '$runs'" >&2; exit 2; }
    for name in "$@"; do
        [[ -x $store/$name ]] || { echo "copy-engine-ab: no saved variant '$name' (scripts/copy-engine-ab.sh save $name)" >&2; exit 2; }
    done
    # The bench times 2 threads too unless COPY_ENGINE_QUICK is set.
    if ((two)); then unset COPY_ENGINE_QUICK; else export COPY_ENGINE_QUICK=1; fi
    rows=$(mktemp)
    trap 'rm -f "$rows"' EXIT
    for ((i = 1; i <= runs; i++)); do
        for name in "$@"; do
            echo "run $i/$runs: $name" >&2
            # Rows of the ratio table: | case | threads | ratio | ...
            COPY_ENGINE_SIZES=$sizes "$store/$name" --bench |
                awk -F'|' -v v="$name" 'NF >= 8 && $3 ~ /^ *[0-9]+ *$/ && $4 ~ /^ *[0-9.]+ *$/ { print v "|" $2 "|" $3 "|" $4 }' >>"$rows"
        done
    done
    python3 - "$rows" "$@" <<'PY'
import statistics
import sys
from collections import defaultdict

path, order = sys.argv[1], sys.argv[2:]
ratios = defaultdict(list)
for line in open(path):
    variant, case, threads, ratio = (field.strip() for field in line.split("|"))
    ratios[(case, int(threads), variant)].append(float(ratio))
cases = sorted({key[:2] for key in ratios})
print("| case | threads | " + " | ".join(order) + " |")
print("|---|---|" + "---|" * len(order))
for case, threads in cases:
    cells = []
    for variant in order:
        values = sorted(ratios.get((case, threads, variant), []))
        cells.append(f"{statistics.median(values):.2f} ({values[0]:.2f}–{values[-1]:.2f}, n={len(values)})" if values else "–")
    print(f"| {case} | {threads} | " + " | ".join(cells) + " |")
print("\nmedian (range, runs) of the ratio to the same-run best copy (timed)")
PY
}

case ${1:-} in
    save) [[ $# -eq 2 ]] || usage; save "$2" ;;
    run) shift; run "$@" ;;
    *) usage ;;
esac
