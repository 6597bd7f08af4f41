#!/usr/bin/env bash
# The CI performance regression gate: this commit against the reviewed base commit named in
# reports/gate-base, both built and measured on this machine in the same job
# (`stridelab gate --base`, docs/gate.md). Both tracks block: a timing regression (the paired
# rounds' interval above the noise floor and the estimate above the threshold) and any change of
# a simulated miss count. Moving reports/gate-base forward is how a performance change is
# accepted; its commit message says why.
# Exit: 0 pass, 1 regression or failed point, 2 the gate could not judge (the base cannot be
# found or built, bad input); the message names the fix.
# Usage: scripts/ci-gate.sh [extra `stridelab gate` options]
# Env: STRIDELAB (the candidate binary; default: built here with cargo), GATE_BASE (a revision
# instead of reports/gate-base), GATE_OUT (where the JSON verdict goes, default target/gate),
# GITHUB_STEP_SUMMARY (the Markdown verdict is appended to it when set).
set -uo pipefail
cd "$(dirname "$0")/.."

out="${GATE_OUT:-target/gate}"
mkdir -p "$out"
base="${GATE_BASE:-$(grep -v '^#' reports/gate-base 2>/dev/null | tr -d '[:space:]')}"
if [[ -z "$base" ]]; then
    echo "ci-gate: no base commit: reports/gate-base is missing or names none" >&2
    exit 2
fi
if [[ -z "${STRIDELAB:-}" ]]; then
    cargo build --release --quiet --bin stridelab || exit 2
    STRIDELAB=target/release/stridelab
fi
summary=()
[[ -n "${GITHUB_STEP_SUMMARY:-}" ]] && summary=(--export-markdown "$GITHUB_STEP_SUMMARY")

started=$SECONDS
"$STRIDELAB" gate --base "$base" --export-json "$out/verdict.json" "${summary[@]}" "$@"
rc=$?
echo "ci-gate: exit $rc after $((SECONDS - started)) s (base build or reuse included)"
case "$rc" in
0 | 1) exit "$rc" ;;
*) exit 2 ;;
esac
