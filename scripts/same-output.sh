#!/usr/bin/env bash
# Holds two builds of stridelab against each other where a change must not alter what they
# print: `layout` (text and --json) for a set of expressions on this machine's caches, on
# --cache overrides and on every preset, and `sim`'s text, must be byte-identical; `run`'s
# text summary must say the same words, its timed numbers and what depends on them masked
# (see timed_words).
#
# Usage: scripts/same-output.sh BEFORE AFTER   (two stridelab binaries)
# Prints one line per case and exits 1 if any case differs (its diff is printed), 2 on bad use.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 BEFORE AFTER" >&2; exit 2; }
before=$1 after=$2
for bin in "$before" "$after"; do
    [ -x "$bin" ] || { echo "not an executable: $bin" >&2; exit 2; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Both under the same name, so usage lines (which name the program) compare too.
mkdir "$work/before" "$work/after"
cp "$before" "$work/before/stridelab"
cp "$after" "$work/after/stridelab"
failed=0

# Runs `$@` with both binaries (stdout and stderr, then the exit code) and compares them after
# the filter `$mask` (`cat`: byte for byte).
compare() {
    local name=$1 mask=$2
    shift 2
    for side in before after; do
        local bin=$work/$side/stridelab
        local rc=0
        rm -f "$work"/*.json # a results file the other side wrote (run never overwrites one)
        (cd "$work" && "$bin" "$@") >"$work/$side.out" 2>"$work/$side.err" || rc=$?
        echo "exit $rc" >>"$work/$side.err"
        cat "$work/$side.out" "$work/$side.err" | $mask >"$work/$side.txt"
    done
    if cmp -s "$work/before.txt" "$work/after.txt"; then
        echo "same     $name"
        return 0
    fi
    [ "${quiet_miss:-}" = 1 ] && return 1
    echo "DIFFERS  $name"
    diff "$work/before.txt" "$work/after.txt" | head -40 || true
    failed=1
}

# A timed command's words depend on its timings too (a precision mark, `faster` or none when a
# ratio rounds to 1.00×): it passes when one of three paired runs says the same words; a change
# of wording differs in all three.
compare_timed() {
    local attempt
    for attempt in 1 2; do
        quiet_miss=1 compare "$@" && return 0
    done
    compare "$@"
}

# Every run of digits (with its separators) as `#`: the words stay, the timed numbers go.
numbers_masked() { sed -E 's/[0-9][0-9.,]*/#/g'; }

# The words of a timed summary that do not depend on how the timings fell: numbers masked,
# column padding folded, a ratio's `faster`/`slower` and the precision marks dropped, and the
# paragraphs that exist only when a timing was imprecise (the marks' legend, the precision
# warnings) left out — their wording is held by the unit tests of cli::text::run_summary and
# harness::run::verdicts, on documents built with those warnings.
timed_words() {
    numbers_masked | sed -E 's/ +/ /g; s/× (faster|slower)/×/g; s/( (ci|out|drift))+$//' |
        awk '/^(!: |warning: (the point|# of # timed))/ { skip = 1; next }
             skip && /^ / { next }
             { skip = 0; print }'
}

exprs=(
    'arange(1024*1024).view(1024,1024).T'
    'arange(12).view(3,4).T'
    'arange(32*64*56*56).view(32,64,56,56).permute(0,2,3,1)'
    'arange(256*256).view(256,256)[:, ::2]'
    'arange(4096*4).view(4096,4).T.contiguous()'
    'arange(64*64).view(64,64).diagonal()'
)
presets=(design-vm intel-golden-cove amd-zen4 apple-m1-firestorm)
for e in "${exprs[@]}"; do
    for json in "" --json; do
        compare "layout $json '$e'" cat layout $json "$e"
        compare "layout $json '$e' --cache L2=512K,8,64" cat layout $json "$e" --cache L2=512K,8,64
        compare "layout $json '$e' --cache L1d=32K,8,64,L2=1M,16,64" cat \
            layout $json "$e" --cache L1d=32K,8,64 --cache L2=1M,16,64
        for p in "${presets[@]}"; do
            compare "layout $json '$e' --preset $p" cat layout $json "$e" --preset "$p"
        done
    done
done
compare "layout (bad expression)" cat layout 'arange(12).view(5,5)'
compare "layout --dtype f32" cat layout 'arange(512*512).view(512,512).T' --dtype f32 --preset design-vm
compare_timed "run row-sum summary (words)" timed_words \
    run --kernel row-sum rows=64 cols=64,128 --sampling-budget 1 --preset design-vm \
    --out "$work/run.json"
compare "sim conflict" cat sim conflict stride=512 count=16 --preset design-vm
compare "sim conflict, an implausible level" cat sim conflict stride=512 count=16 --cache L3=192M,16,64

exit "$failed"
