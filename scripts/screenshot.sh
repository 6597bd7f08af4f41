#!/usr/bin/env bash
# Screenshots of a rendered report with headless Chromium, to look at the page as a user would.
#
# Usage: scripts/screenshot.sh [REPORT_DIR] [OUT_DIR] [HEIGHTS]
#   REPORT_DIR  a report directory holding index.html (default: reports/latest)
#   OUT_DIR     where the PNGs go (default: REPORT_DIR/../screenshots)
#   HEIGHTS     window heights in pixels, comma-separated (default: 900,4000,12000): the first
#               shows what a reader sees first, the taller ones the whole page.
# Environment: SLICES=N also takes N screenshots of 1400x1000 further down the page
#   (report-slice-01.png, …; the page is shown in an iframe shifted up by 1000 px per slice), to
#   look at every part at full scale.
# Installs Debian's `chromium` with apt-get if it is missing. No network is used by the page.
set -euo pipefail

report_dir="${1:-reports/latest}"
index="$report_dir/index.html"
if [[ ! -f "$index" ]]; then
    echo "error: no $index (run \`cargo run --release\` or \`stridelab report\` first)" >&2
    exit 2
fi
out_dir="${2:-$(dirname "$report_dir")/screenshots}"
heights="${3:-900,4000,12000}"

browser=""
for candidate in chromium chromium-browser google-chrome; do
    if command -v "$candidate" >/dev/null 2>&1; then
        browser="$candidate"
        break
    fi
done
if [[ -z "$browser" ]]; then
    echo "chromium not found; installing Debian's chromium package" >&2
    sudo_cmd=""
    if [[ $(id -u) -ne 0 ]]; then sudo_cmd="sudo"; fi
    $sudo_cmd apt-get update -qq
    $sudo_cmd apt-get install -y -qq chromium
    browser="chromium"
fi

mkdir -p "$out_dir"
url="file://$(cd "$(dirname "$index")" && pwd)/index.html"
profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT

IFS=',' read -r -a height_list <<<"$heights"
for height in "${height_list[@]}"; do
    shot="$out_dir/report-1400x$height.png"
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --user-data-dir="$profile" \
        --screenshot="$shot" --window-size="1400,$height" "$url" >/dev/null 2>&1
    if [[ ! -s "$shot" ]]; then
        echo "error: chromium wrote no screenshot for height $height" >&2
        exit 1
    fi
    echo "$shot"
done

slices="${SLICES:-0}"
for ((i = 1; i <= slices; i++)); do
    offset=$(((i - 1) * 1000))
    wrapper="$profile/slice-$i.html"
    cat >"$wrapper" <<HTML
<!DOCTYPE html><html><body style="margin:0;overflow:hidden">
<iframe src="$url" style="border:0;position:absolute;left:0;top:-${offset}px;width:1400px;height:$((offset + 1000))px"></iframe>
</body></html>
HTML
    shot="$out_dir/report-slice-$(printf %02d "$i").png"
    "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --hide-scrollbars --allow-file-access-from-files --user-data-dir="$profile/chrome" \
        --screenshot="$shot" --window-size=1400,1000 "file://$wrapper" >/dev/null 2>&1
    echo "$shot"
done
