#!/usr/bin/env bash
# The copy engine's N sweep (docs/copy-engine.md): the 1-thread N×N f64 transpose against the
# same-run best copy at 26 sizes from 511 to 8192, powers of two and their neighbours among
# them, as the bench's Markdown table.
#
# Usage: scripts/copy-sweep.sh OUT.md [BENCH_BINARY]
#   BENCH_BINARY: a built copy_engine bench (e.g. one of an earlier commit, to compare);
#   default: `cargo bench --bench copy_engine` of this tree.
# Then: scripts/copy-sweep-plot.py sweep.svg before=OLD.md after=NEW.md
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:?usage: scripts/copy-sweep.sh OUT.md [BENCH_BINARY]}"
sizes=511,512,513,768,1023,1024,1025,1280,1536,1792,2040,2047,2048,2049,2056,2560,3072,3584,4095,4096,4097,5120,6144,7168,8191,8192
trap 'rm -f "$out.partial"' EXIT
export COPY_ENGINE_QUICK=1 COPY_ENGINE_SIZES="$sizes"
if [[ $# -ge 2 ]]; then
    "$2" --bench >"$out.partial"
else
    cargo bench --quiet --bench copy_engine >"$out.partial"
fi
mv "$out.partial" "$out"
echo "copy-sweep: $(grep -c '^| transpose' "$out") sizes in $out"
