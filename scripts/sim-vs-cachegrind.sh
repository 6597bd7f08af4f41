#!/usr/bin/env bash
# End-to-end time of `stridelab sim` against valgrind's cachegrind on the same three loops
# (column-order sum 4096x4096, row-order sum 4096x4096, naive-write transpose 2048x2048), both simulating
# a 32 KiB 8-way L1d and a 1 MiB 8-way L2 with 64 B lines. stridelab also splits the misses
# into compulsory / capacity / conflict (3C), which cachegrind does not.
#
# The C loops are tests/fixtures/kernels_orders.c (the cachegrind tests' independent
# re-implementation of the catalogue's orders), built with the flags those tests use.
# Each loop runs PAIRS times alternating (stridelab, then cachegrind), so both see the same
# machine state; the script prints per loop the median and range of each and the ratio of the
# medians (cachegrind / stridelab: how many times faster stridelab is).
#
# Needs: bash, gcc, valgrind and a built binary.
# Usage: scripts/sim-vs-cachegrind.sh [PAIRS]   (default 5; STRIDELAB=path overrides the binary)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
pairs=${1:-5}
bin=${STRIDELAB:-$root/target/release/stridelab}
for tool in gcc valgrind; do
    command -v "$tool" >/dev/null || { echo "needs $tool" >&2; exit 2; }
done
[ -x "$bin" ] || { echo "no binary at $bin (cargo build --release)" >&2; exit 2; }
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "PAIRS must be a positive integer" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
gcc -O1 -fno-tree-vectorize -o "$work/loops" "$root/tests/fixtures/kernels_orders.c"

# Exactly cachegrind's two levels: design-vm's L1d and L2, both replaced (no L3).
caches=(--preset design-vm --cache L1d=32K,8,64 --cache L2=1M,8,64)
cg=(valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL=1048576,8,64
    --I1=32768,8,64 --cachegrind-out-file=/dev/null)

# name | stridelab sim arguments | kernels_orders arguments (no flush before the loop)
loops=(
    "col-sum 4096x4096|col-sum rows=4096 cols=4096|0 col-sum 4096 4096 4096"
    "row-sum 4096x4096|row-sum rows=4096 cols=4096|0 row-sum 4096 4096 4096"
    "transpose naive-write 2048x2048|transpose rows=2048 cols=2048 variant=naive-write|0 transpose-naive-write 2048 2048 2048 32"
)

# Seconds taken by the command, to the millisecond; its output is discarded.
seconds() {
    local start end
    start=$(date +%s%N)
    "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
    end=$(date +%s%N)
    echo $(((end - start) / 1000000))
}

# "median (min–max)" in seconds of the millisecond values given.
summary() {
    sort -n | awk '{ v[NR] = $1 } END {
        m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
        printf "%.3f %.3f %.3f", m / 1000, v[1] / 1000, v[NR] / 1000 }'
}

printf '%-34s %-24s %-24s %s\n' loop "stridelab sim (s)" "cachegrind (s)" "cachegrind / stridelab"
for entry in "${loops[@]}"; do
    IFS='|' read -r name sim_args c_args <<<"$entry"
    read -ra sim_words <<<"$sim_args"
    read -ra c_words <<<"$c_args"
    ours=() theirs=()
    for _ in $(seq "$pairs"); do
        ours+=("$(seconds "$bin" sim "${sim_words[@]}" "${caches[@]}")")
        theirs+=("$(seconds "${cg[@]}" "$work/loops" "${c_words[@]}")")
    done
    read -r om omin omax <<<"$(printf '%s\n' "${ours[@]}" | summary)"
    read -r tm tmin tmax <<<"$(printf '%s\n' "${theirs[@]}" | summary)"
    ratio=$(awk -v a="$tm" -v b="$om" 'BEGIN { printf "%.1f×", a / b }')
    printf '%-34s %-24s %-24s %s\n' "$name" "$om ($omin–$omax)" "$tm ($tmin–$tmax)" "$ratio"
done
echo "($pairs pairs per loop, alternating; medians with ranges; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg))"
