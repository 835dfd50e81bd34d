#!/usr/bin/env python3
"""The faithfulness table: one scenario's summaries on the simulator, on
emulated nodes and on real nodes (the run folders' summary.csv), per arm,
as a Markdown table: each metric's mean over the seeds with the half-width
of its 95% bootstrap interval.

    scripts/faithfulness.py SIM EMULATED REAL
"""
import csv
import sys
from pathlib import Path

METRICS = [
    ("pods_bound", "pods bound"),
    ("restarts", "restarts"),
    ("oom_kills", "OOM kills"),
    ("evictions", "evictions"),
    ("failures", "failures"),
    ("pods_pending_end", "pending at the end"),
    ("sched_latency_p50_s", "scheduling latency p50 (s)"),
    ("running_pod_hours", "running pod-hours"),
]


def load(folder):
    rows = {}
    with open(Path(folder) / "summary.csv", newline="") as f:
        for row in csv.DictReader(f):
            rows[(row["arm"], row["metric"])] = row
    return rows


def cell(row):
    if row is None or row["mean"] == "":
        return "n/a"
    mean = float(row["mean"])
    half = (float(row["ci_high"]) - float(row["ci_low"])) / 2 if row["ci_low"] else 0.0
    digits = 0 if mean == int(mean) and half == int(half) else (1 if abs(mean) >= 10 else 2)
    return f"{mean:.{digits}f} ± {half:.{digits}f} (n={row['n']})"


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__)
    backends = [("simulator", load(argv[1])), ("emulated", load(argv[2])), ("real", load(argv[3]))]
    arms = []
    for arm, _ in backends[0][1]:
        if arm not in arms:
            arms.append(arm)
    header = ["metric"] + [f"{arm}: {name}" for arm in arms for name, _ in backends]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for metric, label in METRICS:
        cells = [cell(rows.get((arm, metric))) for arm in arms for _, rows in backends]
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(sys.argv)
