#!/usr/bin/env python3
"""The copy engine's N sweep as a figure: the 1-thread ratio to the same-run best copy against N,
one line per bench output (an SVG written with the standard library only).

Usage: scripts/copy-sweep-plot.py OUT.svg LABEL=BENCH_OUTPUT.md [LABEL=...]
Each BENCH_OUTPUT.md is what `COPY_ENGINE_QUICK=1 COPY_ENGINE_SIZES=... cargo bench --bench
copy_engine` printed (scripts/copy-sweep.sh makes one); its rows `| transpose N×N | 1 | ratio |`
are read, every other line is ignored. The 0.70 and 0.85 targets are drawn as dashed lines.
"""
import re
import sys

ROW = re.compile(r"^\|\s*transpose (\d+)×\1\s*\|\s*1\s*\|\s*([0-9.]+)\s*\|")
COLOURS = ["#888888", "#1f77b4", "#d62728", "#2ca02c"]
WIDTH, HEIGHT = 760, 420
LEFT, RIGHT, TOP, BOTTOM = 60, 20, 40, 70


def read(path):
    points = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line.strip())
            if m:
                points.append((int(m.group(1)), float(m.group(2))))
    if not points:
        sys.exit(f"copy-sweep-plot: no `| transpose N×N | 1 | ratio |` rows in {path}")
    return sorted(points)


def main():
    if len(sys.argv) < 3 or any("=" not in a for a in sys.argv[2:]):
        sys.exit(__doc__)
    out = sys.argv[1]
    series = [(a.split("=", 1)[0], read(a.split("=", 1)[1])) for a in sys.argv[2:]]
    ns = sorted({n for _, pts in series for n, _ in pts})
    # Equal steps per measured size (neighbours such as 2047, 2048, 2049 stay apart).
    slot = {n: i for i, n in enumerate(ns)}
    top_ratio = max(1.0, max(r for _, pts in series for _, r in pts))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(n):
        return LEFT + (slot[n] + 0.5) / len(ns) * plot_w

    def y(r):
        return TOP + (1 - r / top_ratio) * plot_h

    svg = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        'font-family="DejaVu Sans, sans-serif" font-size="12">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2}" y="20" text-anchor="middle" font-size="14">N×N f64 transpose, '
        "1 thread: fraction of the same-run best copy (timed)</text>",
    ]
    for tick in [i / 10 for i in range(0, int(top_ratio * 10) + 1, 1)]:
        svg.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" '
            'stroke="#eeeeee"/>'
        )
        svg.append(
            f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.1f}</text>'
        )
    for n in ns:
        weight = "bold" if n & (n - 1) == 0 else "normal"
        svg.append(
            f'<text x="{x(n) + 4:.1f}" y="{HEIGHT - BOTTOM + 8}" text-anchor="end" '
            f'font-size="10" font-weight="{weight}" '
            f'transform="rotate(-60 {x(n) + 4:.1f} {HEIGHT - BOTTOM + 8})">{n}</text>'
        )
    svg.append(
        f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 6}" text-anchor="middle">N, one step per '
        "measured size (powers of two in bold)</text>"
    )
    for target in (0.70, 0.85):
        svg.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(target):.1f}" y2="{y(target):.1f}" '
            'stroke="#999999" stroke-dasharray="6,4"/>'
        )
        svg.append(
            f'<text x="{WIDTH - RIGHT - 4}" y="{y(target) - 4:.1f}" text-anchor="end" '
            f'fill="#666666">target {target:.2f}</text>'
        )
    for i, (label, pts) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        path = " ".join(f"{x(n):.1f},{y(r):.1f}" for n, r in pts)
        svg.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        for n, r in pts:
            svg.append(f'<circle cx="{x(n):.1f}" cy="{y(r):.1f}" r="3" fill="{colour}"/>')
        svg.append(
            f'<text x="{LEFT + 10}" y="{TOP + 16 + 16 * i}" fill="{colour}">{label} '
            f"(median over the sizes {sorted(r for _, r in pts)[len(pts) // 2]:.2f}, "
            f"lowest {min(r for _, r in pts):.2f})</text>"
        )
    svg.append("</svg>")
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
