#!/usr/bin/env python3
"""The time model's agreement over one results file (`stridelab run … --out FILE` with the
model on): the share of timed points within 2x of measured where the model claims to apply,
the distribution of measured / model, the points far off (with the `stridelab why` command to
run for each), and the points it disowns, grouped by reason. A benchmark-style summary of
recorded figures, not a test: it asserts nothing and times nothing itself.

usage: scripts/model-agreement.py RESULTS.json
"""

import json
import math
import sys
from collections import Counter


def words(params):
    return " ".join(f"{k}={v}" for k, v in sorted(params.items()))


def quantile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    pos = q * (len(sorted_values) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def main(path):
    with open(path) as f:
        doc = json.load(f)
    probes = doc.get("time_model_probes")
    records = [r for r in doc["records"] if r.get("timing")]
    predicted = [r for r in records if r.get("time_model")]
    if not predicted:
        sys.exit(f"{path}: no time-model predictions (was the run's --model off?)")
    if probes:
        print(f"probes: {probes['cpu_model']}, load average {probes.get('load_average')} when probed")
        for level in probes["levels"] + [probes["memory"]]:
            print(
                "  {:7} ws {:>10} B  read {:6.1f} GB/s  write {:6.1f} GB/s  copy {:6.1f} GB/s  latency {:6.2f} ns".format(
                    level["name"],
                    level["working_set"],
                    level["read_bytes_per_s"]["median"] / 1e9,
                    level["write_bytes_per_s"]["median"] / 1e9,
                    level["copy_bytes_per_s"]["median"] / 1e9,
                    level["latency_ns"]["median"],
                )
            )
    claimed = [r for r in predicted if r["time_model"]["applies"]]
    disowned = [r for r in predicted if not r["time_model"]["applies"]]
    ratios = sorted(r["time_model"]["measured_over_model"] for r in claimed)
    within = [x for x in ratios if 0.5 <= x <= 2.0]
    print(
        f"\n{len(records)} timed points: the model claims {len(claimed)}, disowns {len(disowned)}"
    )
    if ratios:
        print(
            f"within 2x of measured: {len(within)} of {len(claimed)} "
            f"({100 * len(within) / len(claimed):.0f}%)"
        )
        in_range = [
            r for r in claimed
            if r["time_model"]["bounds"]["estimate_low_ns"] / 2
            <= r["timing"]["ns_per_run"]["median"]
            <= r["time_model"]["bounds"]["estimate_high_ns"] * 2
        ]
        print(
            f"within 2x of the estimate's range (every probe at its fastest .. slowest sample): "
            f"{len(in_range)} of {len(claimed)} ({100 * len(in_range) / len(claimed):.0f}%)"
        )
        print("measured / model: " + ", ".join(
            f"{name} {quantile(ratios, q):.2f}"
            for name, q in [("min", 0), ("p10", 0.1), ("p25", 0.25), ("median", 0.5),
                            ("p75", 0.75), ("p90", 0.9), ("max", 1)]
        ))
        print("\n  measured/model   points")
        edges = [0, 0.25, 0.5, 0.8, 1.25, 2, 4, math.inf]
        for lo, hi in zip(edges, edges[1:]):
            n = sum(1 for x in ratios if lo <= x < hi)
            label = f"[{lo:g}, {hi:g})"
            print(f"  {label:15} {n:4}  {'#' * n}")
        by_rule = Counter(r["time_model"]["rule"] for r in claimed)
        print("\nby rule: " + ", ".join(f"{k} {v}" for k, v in sorted(by_rule.items())))
        by_kernel = {}
        for r in claimed:
            by_kernel.setdefault(r["kernel"], []).append(r["time_model"]["measured_over_model"])
        print("\n  kernel           points  within 2x  median measured/model")
        for kernel, xs in sorted(by_kernel.items()):
            xs.sort()
            w = sum(1 for x in xs if 0.5 <= x <= 2.0)
            print(f"  {kernel:16} {len(xs):6}  {w:9}  {quantile(xs, 0.5):.2f}")
        far = [r for r in claimed if not 0.5 <= r["time_model"]["measured_over_model"] <= 2.0]
        far.sort(key=lambda r: -abs(math.log(r["time_model"]["measured_over_model"])))
        if far:
            print("\nfarthest off (measured / model), and the command that runs controls on each:")
            for r in far[:15]:
                x = r["time_model"]["measured_over_model"]
                print(f"  {x:6.2f}  stridelab why {r['kernel']} {words(r['params'])}")
    if disowned:
        print("\ndisowned, by reason:")
        reasons = Counter(r["time_model"]["reason"] for r in disowned)
        for reason, n in reasons.most_common():
            kernels = sorted({r["kernel"] for r in disowned if r["time_model"]["reason"] == reason})
            print(f"  {n:4}  {reason}  [{', '.join(kernels)}]")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
