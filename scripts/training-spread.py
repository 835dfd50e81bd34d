#!/usr/bin/env python3
"""The spread across training seeds next to the spread across evaluation seeds.

Reads DIR/<variant>-<training seed>/<scenario>.json (schedlab summaries of one
arm each, written by scripts/evaluate.sh) and prints a Markdown table per
scenario: for every variant and metric, the mean over training seeds of the
per-checkpoint means, the standard deviation across training seeds, and the
mean half-width of the per-checkpoint 95% intervals over evaluation seeds.
"""
import json
import statistics
import sys
from pathlib import Path

METRICS = [
    "cost_usd",
    "nodes_in_use_mean",
    "failure_rate",
    "failures_per_running_pod_hour",
    "oom_pressure_events",
    "restarts",
    "pods_declined",
    "critical_bind_p99_s",
]
VARIANTS = ["agmarl", "agmarl-nognn", "agmarl-linear", "agmarl-nostress"]


def fmt(x):
    if x is None:
        return "n/a"
    if x == 0:
        return "0"
    if abs(x) >= 100:
        return f"{x:.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    if abs(x) >= 1:
        return f"{x:.2f}"
    return f"{x:.3f}"


def main():
    root = Path(sys.argv[1])
    runs = {}
    for d in sorted(root.iterdir()):
        if not d.is_dir():
            continue
        variant, seed = d.name.rsplit("-", 1)
        for f in sorted(d.glob("*.json")):
            summary = json.loads(f.read_text())
            arm = summary["arms"][0]
            runs.setdefault(f.stem, {}).setdefault(variant, []).append((int(seed), arm["metrics"]))
    for scenario, by_variant in runs.items():
        print(f"`{scenario}`: mean over 3 training seeds (1000, 2000, 3000) of each checkpoint's mean over")
        print("evaluation seeds 1-10; ± the standard deviation across training seeds; [the mean 95% half-width")
        print("across evaluation seeds]\n")
        header = "| metric | " + " | ".join(f"`{v}`" for v in VARIANTS if v in by_variant) + " |"
        print(header)
        print("| --- |" + " ---: |" * sum(v in by_variant for v in VARIANTS))
        for m in METRICS:
            cells = []
            for v in VARIANTS:
                if v not in by_variant:
                    continue
                means, halves = [], []
                for _, metrics in by_variant[v]:
                    entry = metrics.get(m) or {}
                    if entry.get("mean") is None:
                        continue
                    means.append(entry["mean"])
                    if entry.get("ci_low") is not None and entry.get("ci_high") is not None:
                        halves.append((entry["ci_high"] - entry["ci_low"]) / 2)
                if not means:
                    cells.append("n/a")
                    continue
                sd = statistics.stdev(means) if len(means) > 1 else 0.0
                half = statistics.mean(halves) if halves else None
                cells.append(f"{fmt(statistics.mean(means))} ± {fmt(sd)} [{fmt(half)}]")
            print(f"| `{m}` | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    main()
