#!/usr/bin/env bash
# The gate's A/A and slowdown experiment (figures in docs/gate.md):
#   * A/A: N gate runs of the unchanged code against a baseline recorded on this machine;
#     every exit 1 is a false regression (target: at most 1 in 20);
#   * slowdown: N gate runs with `--fixture-slowdown` (every row-sum point runs its documented
#     de-optimised variant `deopt=1`: rows i mod 4 = 3 read twice, ~25% more loads); a run
#     "catches" it when it exits 1 naming row-sum (target: at least 19 in 20).
# A/A and slowdown runs alternate so drifting machine load hits both alike. For each run that
# fails on timing only, the CI policy of scripts/ci-gate.sh is applied to it too (confirming
# re-runs after a pause, on an undisturbed machine), so the script reports both the raw gate
# and the CI-policy rates.
# Run it on a quiet machine: `uptime` load is printed before and after.
# Usage: scripts/gate-aa.sh [RUNS=20] ; env GATE_BASELINE (default reports/baseline.json),
# RECORD=1 (re-record that baseline here first, on the same quiet machine), AA_OUT (default
# target/gate-aa), GATE_ARGS (extra `stridelab gate` options, e.g. `--suite FILE`). Reproduces the README figures: `RECORD=1 scripts/gate-aa.sh 20`.
set -uo pipefail
cd "$(dirname "$0")/.."

runs="${1:-20}"
out="${AA_OUT:-target/gate-aa}"
mkdir -p "$out"
cargo build --release --quiet --bin stridelab || exit 2
bin=target/release/stridelab
read -r -a gate_args <<<"${GATE_ARGS:-}"
baseline="${GATE_BASELINE:-reports/baseline.json}"
if [[ "${RECORD:-0}" == 1 ]]; then
    "$bin" gate --quiet --save-baseline "$baseline" "${gate_args[@]}" || exit 2
fi
echo "baseline: $baseline; runs: $runs each; load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/log.txt"

started=$(date +%s)
for i in $(seq 1 "$runs"); do
    for kind in aa slow; do
        extra=()
        [[ "$kind" == slow ]] && extra=(--fixture-slowdown)
        "$bin" gate --quiet --baseline "$baseline" --export-json "$out/$kind-$i.json" \
            --output "$out/$kind-$i.results.json" "${gate_args[@]}" "${extra[@]}" 2>"$out/$kind-$i.err"
        rc=$?
        confirm_rc=-
        if [[ "$rc" == 1 ]] && grep -q '"deterministic_regressions": 0,' "$out/$kind-$i.json"; then
            # The CI policy itself, applied to this first run.
            GATE_FIRST_VERDICT="$out/$kind-$i.json" GATE_OUT="$out/ci-$kind-$i" GATE_TIMING=confirm \
                GATE_BASELINE="$baseline" STRIDELAB="$bin" scripts/ci-gate.sh \
                "${gate_args[@]}" "${extra[@]}" >"$out/$kind-$i.confirm.log" 2>&1
            confirm_rc=$?
        fi
        echo "$kind $i rc=$rc confirm_rc=$confirm_rc load=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$out/log.txt"
    done
done
echo "elapsed: $(($(date +%s) - started)) s; load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/log.txt"

python3 - "$out" "$runs" <<'PY' | tee "$out/summary.md"
import json, statistics, sys, re
out, runs = sys.argv[1], int(sys.argv[2])
log = open(f"{out}/log.txt").read()
def results(kind):
    rows = []
    for m in re.finditer(rf"^{kind} (\d+) rc=(\d+) confirm_rc=(\S+)", log, re.M):
        rows.append((int(m[1]), int(m[2]), m[3]))
    return rows
aa, slow = results("aa"), results("slow")
def verdict(kind, i):
    try:
        return json.load(open(f"{out}/{kind}-{i}.json"))
    except (OSError, ValueError):
        return None
false_raw = [i for i, rc, _ in aa if rc == 1]
false_ci = [i for i, rc, c in aa if rc == 1 and c != "0"]
errors = [(k, i, rc) for k, rows in (("aa", aa), ("slow", slow)) for i, rc, _ in rows if rc not in (0, 1)]
def names_row_sum(i):
    v = verdict("slow", i)
    return v is not None and any(r.startswith("row-sum ") for r in v["regressed"])
caught_raw = [i for i, rc, _ in slow if rc == 1 and names_row_sum(i)]
caught_ci = [i for i, rc, c in slow if rc == 1 and names_row_sum(i) and c != "0"]
print(f"# Gate A/A and slowdown experiment ({len(aa)} + {len(slow)} runs)\n")
print(f"- A/A false regressions, raw gate (one run): **{len(false_raw)}/{len(aa)}**")
print(f"- A/A false failures under the CI policy (timing must repeat): **{len(false_ci)}/{len(aa)}**")
print(f"- 20% slowdown fixture caught (exit 1 naming row-sum), raw gate: **{len(caught_raw)}/{len(slow)}**")
print(f"- caught under the CI policy (confirmed by a re-run): **{len(caught_ci)}/{len(slow)}**")
if errors:
    print(f"- runs that ended with an input/usage error: {errors}")
flagged = {}
for i, rc, _ in aa:
    v = verdict("aa", i)
    for r in (v or {}).get("regressed", []):
        flagged[r] = flagged.get(r, 0) + 1
if flagged:
    print("\nRows falsely flagged in A/A runs:")
    for r, n in sorted(flagged.items(), key=lambda x: -x[1]):
        print(f"- `{r}`: {n}")
# The row-sum timing changes the gate saw, with and without the fixture.
def changes(kind):
    per_row = {}
    for i, _, _ in (aa if kind == "aa" else slow):
        v = verdict(kind, i)
        for r in (v or {}).get("rows", []):
            if r["track"] == "timing" and r["kernel"] == "row-sum" and r["change"] is not None:
                key = r["params"].replace(" deopt=1", "").replace(" deopt=0", "")
                per_row.setdefault(key, []).append((r["change"], r["ci"]))
    return per_row
for kind, title in (("aa", "A/A"), ("slow", "slowdown fixture")):
    print(f"\nrow-sum timing change, {title} runs (median, min, max over runs; median CI):")
    for key, values in sorted(changes(kind).items()):
        c = [x[0] * 100 for x in values]
        lo = statistics.median(x[1][0] * 100 for x in values if x[1])
        hi = statistics.median(x[1][1] * 100 for x in values if x[1])
        print(f"- {key}: {statistics.median(c):+.1f}% ({min(c):+.1f}%..{max(c):+.1f}%), CI [{lo:+.1f}%, {hi:+.1f}%]")
# Spread of every timing row across A/A runs: how close the noise comes to the threshold.
spread = {}
for i, _, _ in aa:
    for r in (verdict("aa", i) or {}).get("rows", []):
        if r["track"] == "timing" and r["change"] is not None and r["verdict"] != "reference":
            spread.setdefault(f'{r["kernel"]} {r["params"]}', []).append(r["change"] * 100)
if spread:
    print("\nA/A timing change per point (min..max over runs):")
    for key, c in sorted(spread.items()):
        print(f"- {key}: {min(c):+.1f}%..{max(c):+.1f}%")
PY
