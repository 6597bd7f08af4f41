#!/usr/bin/env bash
# The regression gate's calibration (figures and defaults in docs/gate.md): how often
# `stridelab gate --base HEAD` blocks an unchanged build (A/A: the candidate and the base are
# two separate builds of the same commit) and how often it catches one gated kernel made
# slower by a known amount (row-sum with 2, 3, 5, 10% of its elements read again, compiled in
# with STRIDELAB_INJECT_SLOWDOWN, see crates/core/src/kernels/slowdown.rs).
#
# Usage: scripts/gate-calibrate.sh [RUNS=100] [KINDS="0 2 3 5 10"]
#   KINDS: 0 is A/A, N an N% slowdown. Each round of the experiment makes one gate run of every
#   kind, in turn, so a change of machine load hits every kind alike.
# Env: CAL_OUT (default target/gate-calibration), GATE_ARGS (extra `stridelab gate` options,
#   e.g. "--threshold 2%": a different setting needs its own CAL_OUT).
#
# Resumable: every run appends a line to $CAL_OUT/runs.tsv as it ends, and a run already in the
# table is not made again, so the script can be stopped (Ctrl-C) and started again with the same
# arguments. The summary ($CAL_OUT/summary.md) is rewritten after every run. The builds are kept
# (the base by the gate under target/gate-base/, the candidates in $CAL_OUT/bin/). The working
# tree must be clean, and stay so while the candidates are built: they are built from it and
# must be the commit the base is. The base is that commit's id, so a commit made meanwhile does
# not change it.
set -uo pipefail
cd "$(dirname "$0")/.."

runs="${1:-100}"
kinds="${2:-0 2 3 5 10}"
out="${CAL_OUT:-target/gate-calibration}"
read -r -a gate_args <<<"${GATE_ARGS:-}"
mkdir -p "$out/bin" "$out/verdicts"

if ! git diff --quiet HEAD --; then
    echo "gate-calibrate: the working tree differs from HEAD; commit or stash first (A/A needs two builds of one commit)" >&2
    exit 2
fi
head=$(git rev-parse HEAD)
if [[ -f "$out/commit" && "$(cat "$out/commit")" != "$head" ]]; then
    echo "gate-calibrate: $out holds runs of commit $(cat "$out/commit"), HEAD is $head; use another CAL_OUT" >&2
    exit 2
fi
echo "$head" >"$out/commit"

# The A/A candidate: the working tree's build, copied out so a later build cannot change it.
cargo build --release --quiet --bin stridelab || exit 2
aa_bin="$out/bin/aa/stridelab"
if [[ ! -x "$aa_bin" || "$(cat "$out/bin/aa/commit" 2>/dev/null)" != "$head" ]]; then
    mkdir -p "$out/bin/aa"
    cp target/release/stridelab "$aa_bin.partial" && mv "$aa_bin.partial" "$aa_bin"
    echo "$head" >"$out/bin/aa/commit"
fi

# A slowed candidate: HEAD built with the slowdown compiled in, in the base builds' target
# directory (its dependencies are built already), then copied out.
slowed_bin() { # $1 = percent
    local bin="$out/bin/slow-$1/stridelab"
    if [[ ! -x "$bin" || "$(cat "$out/bin/slow-$1/commit" 2>/dev/null)" != "$head" ]]; then
        echo "gate-calibrate: building the candidate with row-sum +$1% (log: $out/bin/slow-$1.log)" >&2
        mkdir -p "$out/bin/slow-$1"
        git diff --quiet HEAD -- || {
            echo "gate-calibrate: the working tree changed; the candidates must be builds of $head" >&2
            exit 2
        }
        STRIDELAB_INJECT_SLOWDOWN="row-sum:$1" cargo build --release --bin stridelab \
            --target-dir target/gate-base/target >"$out/bin/slow-$1.log" 2>&1 || {
            tail -20 "$out/bin/slow-$1.log" >&2
            exit 2
        }
        cp target/gate-base/target/release/stridelab "$bin.partial" && mv "$bin.partial" "$bin"
        echo "$head" >"$out/bin/slow-$1/commit"
    fi
    echo "$bin"
}

# The base build (kept by the gate, keyed by commit): one short gate run builds it.
"$aa_bin" gate --base "$head" --rounds 1 --max-rounds 1 --quiet --time-budget 1 \
    --suite tests/fixtures/gate/tiny.toml >/dev/null 2>"$out/base-build.log"
[[ $? -le 1 ]] || {
    cat "$out/base-build.log" >&2
    exit 2
}
declare -A bins
for kind in $kinds; do
    if [[ "$kind" == 0 ]]; then bins[$kind]="$aa_bin"; else bins[$kind]=$(slowed_bin "$kind") || exit 2; fi
done

table="$out/runs.tsv"
[[ -f "$table" ]] || printf 'kind\trun\texit\twall_s\tload\tregressed\trow_sum_change\n' >"$table"
done_already() { awk -F'\t' -v k="$1" -v r="$2" '$1 == k && $2 == r { found = 1 } END { exit !found }' "$table"; }

summarise() {
    python3 - "$table" "$out" "$head" <<'PY' >"$out/summary.md"
import csv, json, statistics, sys
table, out, head = sys.argv[1:4]
rows = list(csv.DictReader(open(table), delimiter="\t"))
print(f"# Gate calibration of commit {head[:12]}\n")
print("| kind | runs | blocked | rate | caught on row-sum | blocked on another point | exit 2 | row-sum change (median) | row-sum, all rounds pooled | wall time median (max) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")


def pooled_ratios(kind, runs):
    """Every round's row-sum ratio of every run of a kind: the slowed build's cost, measured
    over far more rounds than one gate run has."""
    ratios = []
    for r in runs:
        try:
            v = json.load(open(f"{out}/verdicts/{kind}-{r['run']}.json"))
        except (OSError, ValueError):
            continue
        for row in v["rows"]:
            if row["kernel"] == "row-sum" and row["track"] == "timing":
                ratios += row.get("ratios") or []
    return ratios


kinds = sorted({r["kind"] for r in rows}, key=float)
for kind in kinds:
    rs = [r for r in rows if r["kind"] == kind]
    blocked = [r for r in rs if r["exit"] == "1"]
    errors = [r for r in rs if r["exit"] not in ("0", "1")]
    on_row_sum = [r for r in blocked if "row-sum" in r["regressed"]]
    elsewhere = [r for r in blocked if any(not p.startswith("row-sum") for p in r["regressed"].split(";") if p)]
    changes = [float(r["row_sum_change"]) for r in rs if r["row_sum_change"] not in ("", "-")]
    walls = [float(r["wall_s"]) for r in rs]
    name = "A/A" if kind == "0" else f"row-sum +{kind}%"
    judged = len(rs) - len(errors)
    rate = (len(blocked) / judged) if judged else float("nan")
    change = f"{100 * statistics.median(changes):+.1f}%" if changes else "-"
    ratios = pooled_ratios(kind, rs)
    pooled = f"{100 * (statistics.median(ratios) - 1):+.1f}% ({len(ratios)} rounds)" if ratios else "-"
    print(f"| {name} | {len(rs)} | {len(blocked)} | {100 * rate:.0f}% | {len(on_row_sum)} | {len(elsewhere)} | {len(errors)} | {change} | {pooled} | {statistics.median(walls):.0f} s ({max(walls):.0f} s) |")
print("\nblocked: exit 1 (a false block for A/A); caught on row-sum: the block names the slowed kernel;")
print("row-sum change: the gate's own estimate of the slowdown (median of its runs' estimates; each the statistic's estimate of the paired ratios);")
print("all rounds pooled: the median paired ratio over every round of every run of the kind, what the slowed build costs.")
PY
}

for i in $(seq 1 "$runs"); do
    for kind in $kinds; do
        done_already "$kind" "$i" && continue
        verdict="$out/verdicts/$kind-$i.json"
        load=$(cut -d' ' -f1 /proc/loadavg)
        started=$EPOCHREALTIME
        "${bins[$kind]}" gate --base "$head" --seed "$((i * 100 + kind))" --quiet \
            --export-json "$verdict" "${gate_args[@]}" 2>"$out/verdicts/$kind-$i.err"
        rc=$?
        wall=$(awk -v a="$started" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
        read -r regressed change < <(python3 - "$verdict" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("- -"); sys.exit()
rows = [r for r in v["rows"] if r["kernel"] == "row-sum" and r["track"] == "timing"]
change = rows[0]["change"] if rows and rows[0]["change"] is not None else "-"
print(";".join(p.split(" ")[0] for p in v["regressed"]) or "-", change)
PY
)
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$kind" "$i" "$rc" "$wall" "$load" "$regressed" "$change" >>"$table"
        echo "gate-calibrate: kind $kind run $i: exit $rc in ${wall%.*} s (load $load)" >&2
        summarise
    done
done
summarise
cat "$out/summary.md"
