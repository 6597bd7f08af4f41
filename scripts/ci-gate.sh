#!/usr/bin/env bash
# The CI performance regression gate: `stridelab gate` against the committed baseline, with the
# policy for a shared, noisy CI machine:
#   * deterministic track (simulated misses on the baseline's preset geometry): reproducible, so a
#     regression fails the build at once;
#   * timing track: a regression in one run can be noise (another job on the machine), so the
#     gate is re-run with `--confirm` on the first verdict, after a pause (GATE_CONFIRM_DELAY
#     seconds, default 20: host disturbances here last 10–20 s). Only a re-run on an undisturbed
#     machine counts: its references' speed within ±GATE_MAX_DRIFT (default 0.10) of the
#     baseline's; up to GATE_CONFIRM_ATTEMPTS (default 3) re-runs are made to find one, and if
#     none is undisturbed, all of them must repeat the regression. The build fails only when
#     the SAME point regresses again (a confirmed regression). An unconfirmed one is printed as
#     a warning and the build passes;
#   * input errors (missing or corrupt baseline, suite or geometry changed) fail with exit 2 and
#     the fix in the message.
# Usage: scripts/ci-gate.sh [extra `stridelab gate` options, e.g. --threshold 15%]
# Env: STRIDELAB (binary, default: build with cargo), GATE_BASELINE (default
# reports/baseline.json), GATE_OUT (directory for verdicts/results, default target/gate),
# GITHUB_STEP_SUMMARY (appended to when set), GATE_TIMING (`confirm`, the default: a confirmed
# timing regression fails; `advisory`: it is printed as a warning and the build passes),
# GATE_FIRST_VERDICT (skip run 1 and apply the policy to this verdict: scripts/gate-aa.sh).
set -uo pipefail
cd "$(dirname "$0")/.."

baseline="${GATE_BASELINE:-reports/baseline.json}"
out="${GATE_OUT:-target/gate}"
mkdir -p "$out"
if [[ -z "${STRIDELAB:-}" ]]; then
    cargo build --release --quiet --bin stridelab || exit 2
    STRIDELAB=target/release/stridelab
fi

run_gate() { # $1 = attempt number, rest = extra options
    local attempt="$1"
    shift
    "$STRIDELAB" gate --baseline "$baseline" --quiet \
        --export-json "$out/verdict-$attempt.json" --output "$out/results-$attempt.json" \
        --export-markdown "$out/summary-$attempt.md" "$@"
    local rc=$?
    if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "$out/summary-$attempt.md" ]]; then
        cat "$out/summary-$attempt.md" >>"$GITHUB_STEP_SUMMARY"
    fi
    return "$rc"
}

# Whether a verdict's run saw the machine in the baseline's state: its references' speed
# (`run_speed`, time now ÷ then) within ±GATE_MAX_DRIFT of the baseline's.
undisturbed() {
    python3 - "$1" "${GATE_MAX_DRIFT:-0.10}" <<'PY'
import json, sys
speed = json.load(open(sys.argv[1])).get("run_speed")
sys.exit(0 if speed is None or abs(speed - 1) <= float(sys.argv[2]) else 1)
PY
}

run_speed_of() {
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get("run_speed"))' "$1"
}

rm -f "$out"/verdict-*.json "$out"/results-*.json "$out"/summary-*.md
if [[ -n "${GATE_FIRST_VERDICT:-}" ]]; then
    # scripts/gate-aa.sh: apply this policy to a first run it has already made.
    cp "$GATE_FIRST_VERDICT" "$out/verdict-1.json"
    rc=1
    grep -q '"pass": true' "$out/verdict-1.json" && rc=0
else
    run_gate 1 "$@"
    rc=$?
fi
case "$rc" in
0)
    echo "ci-gate: pass"
    exit 0
    ;;
1) ;;
*)
    echo "ci-gate: input or usage error (exit $rc); see the message above" >&2
    exit 2
    ;;
esac

[[ -f "$out/summary-1.md" ]] && cat "$out/summary-1.md"
if ! grep -q '"deterministic_regressions": 0,' "$out/verdict-1.json" ||
    ! grep -q '"failures": 0,' "$out/verdict-1.json"; then
    echo "ci-gate: FAIL — simulated misses changed or a point failed (deterministic; no re-run)" >&2
    exit 1
fi

# A timing regression is confirmed or dismissed only by a re-run on an undisturbed machine:
# when the host slows this VM by 20% or more for a while, most ratios cancel it but a few
# latency-bound points' do not. Measured in two A/A series of the L1 gate suite: 5 of the 8
# single-run false alarms, and the one false alarm a 20 s-later re-run confirmed (both runs),
# came from runs whose references ran 14–28% slower than at the baseline.
delay="${GATE_CONFIRM_DELAY:-20}"
attempts="${GATE_CONFIRM_ATTEMPTS:-3}"
if ! [[ "$attempts" =~ ^[1-9][0-9]*$ ]]; then
    echo "ci-gate: GATE_CONFIRM_ATTEMPTS must be a whole number of at least 1 (got \`$attempts\`)" >&2
    exit 2
fi
confirmed=""
every_disturbed_run_regressed=1
for ((attempt = 2; attempt <= attempts + 1; attempt++)); do
    echo "ci-gate: timing regression in run 1; re-running in ${delay} s to confirm (attempt $((attempt - 1))/$attempts)" >&2
    sleep "$delay"
    run_gate "$attempt" --confirm "$out/verdict-1.json" "$@"
    rc=$?
    if ((rc > 1)); then
        echo "ci-gate: input or usage error in the confirmation run (exit $rc)" >&2
        exit 2
    fi
    if undisturbed "$out/verdict-$attempt.json"; then
        confirmed="$rc"
        break
    fi
    ((rc == 1)) || every_disturbed_run_regressed=0
    echo "ci-gate: run $attempt does not count: its references ran at $(run_speed_of "$out/verdict-$attempt.json") × the baseline's time (beyond ±${GATE_MAX_DRIFT:-0.10}), the machine was disturbed" >&2
done

# No undisturbed re-run: a disturbance does not excuse a regression that every re-run repeats
# (a real one does: the slowdown fixture regressed in every disturbed re-run measured).
if [[ -z "$confirmed" ]]; then
    if ((every_disturbed_run_regressed)); then
        echo "ci-gate: every re-run ran on a disturbed machine, and every one repeated the regression" >&2
        confirmed=1
        attempt=$((attempt - 1))
    else
        echo "ci-gate: WARNING — no re-run on an undisturbed machine in $attempts attempts, and not every disturbed one repeated the regression; it stays unconfirmed and the build passes" >&2
        exit 0
    fi
fi
case "$confirmed" in
0)
    echo "ci-gate: pass — the timing regression of run 1 did not repeat (treated as noise)" >&2
    exit 0
    ;;
*)
    cat "$out/summary-$attempt.md"
    if [[ "${GATE_TIMING:-confirm}" == "advisory" ]]; then
        echo "ci-gate: WARNING — timing regression confirmed by a second run; GATE_TIMING=advisory, so the build passes" >&2
        exit 0
    fi
    echo "ci-gate: FAIL — timing regression confirmed by a second run" >&2
    exit 1
    ;;
esac
