#!/usr/bin/env bash
# Holds two builds of stridelab against each other where a change must not alter the report:
# `report --in` of recorded results (one Intel quick-suite run, one AMD quick-suite run, and
# two Intel runs compared) must give byte-identical pages, figures (SVG and PNG), CSV and
# JSON from both binaries. (A build before f7b482b rasterised PNGs with resvg: against one, only the
# PNGs differ, by anti-aliasing; scripts/png-diff.py measures by how much.)
#
# Usage: scripts/same-report.sh BEFORE AFTER   (two stridelab binaries; run from the repository)
# Prints one line per case and exits 1 if any file differs (naming it), 2 on bad use.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 BEFORE AFTER" >&2; exit 2; }
before=$(realpath "$1") after=$(realpath "$2")
for bin in "$before" "$after"; do
    [ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 2; }
done
data=$(realpath tests)
[ -d "$data/data/history" ] || { echo "run from the repository root" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
zcat "$data/data/history/amd-epyc-milan-2026-12-01.json.gz" > "$work/amd.json"
zcat "$data/data/history/intel-aa-01.json.gz" > "$work/intel-1.json"
zcat "$data/data/history/intel-aa-02.json.gz" > "$work/intel-2.json"
cp "$data/fixtures/truth/intel-xeon-quick-2026-11-27.results.json" "$work/intel-truth.json"
failed=0

# Draws the report of the given `--in` files with both binaries, each in an empty directory of
# its own (no earlier runs to learn noise from but the files given), and compares every file.
compare() {
    local name=$1
    shift
    local args=()
    for file in "$@"; do args+=(--in "$work/$file"); done
    for side in before after; do
        local bin=$before
        [ "$side" = after ] && bin=$after
        mkdir -p "$work/$name/$side"
        (cd "$work/$name/$side" && "$bin" report "${args[@]}" --out out >log 2>&1) ||
            { echo "$name: $side failed: $(tail -1 "$work/$name/$side/log")"; failed=1; return; }
    done
    local files differ=0
    files=$(cd "$work/$name/before/out" && ls)
    if [ "$files" != "$(cd "$work/$name/after/out" && ls)" ]; then
        echo "$name: the two reports hold different files"
        failed=1
        return
    fi
    for file in $files; do
        if ! cmp -s "$work/$name/before/out/$file" "$work/$name/after/out/$file"; then
            echo "$name: $file differs"
            differ=1
        fi
    done
    if [ $differ = 0 ]; then
        echo "$name: $(echo "$files" | wc -l) files identical"
    else
        failed=1
    fi
}

compare intel-quick intel-truth.json
compare amd-quick amd.json
compare intel-two-runs intel-1.json intel-2.json
exit $failed
