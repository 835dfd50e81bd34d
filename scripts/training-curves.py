#!/usr/bin/env python3
"""Whether training converged, from the curves `schedlab train` writes.

Reads DIR/<variant>-<training seed>/training_curve.csv (and time.txt, the
`/usr/bin/time -v` lines of the run, where present) and prints a Markdown
table: per run the means over blocks of 50 episodes of the critic's loss,
the actor's loss and the scores' squared error, the learning rate at the
end, the wall time and the peak memory. Then per run the last validation
point's heads (validation split, each scenario): AUC, RMSE. Where a run
folder holds its checkpoint's sidecar (sidecar.json), the wait head's
error as training measured it and the declines per block of episodes.

    scripts/training-curves.py evaluations/training-v3
"""
import csv
import json
import statistics
import sys
from pathlib import Path

BLOCK = 50


def blocks(rows, key):
    out = []
    for lo in range(0, len(rows), BLOCK):
        seg = [float(r[key]) for r in rows[lo : lo + BLOCK] if r[key] not in ("", "nan")]
        out.append(statistics.fmean(seg) if seg else float("nan"))
    return out


def time_facts(path):
    wall, rss = "n/a", "n/a"
    if path.exists():
        for line in path.read_text().splitlines():
            if "Elapsed (wall clock)" in line:
                wall = line.rsplit(" ", 1)[-1]
            if "Maximum resident set size" in line:
                rss = f"{int(line.rsplit(' ', 1)[-1]) / 1024:.0f} MiB"
        # a run stopped for a while says so in its time.txt
        if "paused" in path.read_text():
            wall += " (paused)"
    return wall, rss


def main():
    if len(sys.argv) != 2:
        print("usage: scripts/training-curves.py DIR", file=sys.stderr)
        sys.exit(2)
    root = Path(sys.argv[1])
    runs = sorted(p for p in root.iterdir() if (p / "training_curve.csv").exists())
    if not runs:
        print(f"training-curves.py: {root}: no <variant>-<seed>/training_curve.csv", file=sys.stderr)
        sys.exit(2)
    print(f"Means over blocks of {BLOCK} episodes (critic loss / actor loss / scores' MSE):\n")
    first = list(csv.DictReader(open(runs[0] / "training_curve.csv")))
    n_blocks = (len(first) + BLOCK - 1) // BLOCK
    head = [f"episodes {i * BLOCK}–{(i + 1) * BLOCK - 1}" for i in range(n_blocks)]
    print("| run | " + " | ".join(head) + " | final lr | wall | peak memory |")
    print("| --- | " + " | ".join("---:" for _ in head) + " | ---: | ---: | ---: |")
    for run in runs:
        rows = list(csv.DictReader(open(run / "training_curve.csv")))
        c, a, m = blocks(rows, "critic_loss"), blocks(rows, "actor_loss"), blocks(rows, "score_mse")
        cells = [f"{x:.3f} / {y:.2f} / {z:.3f}" for x, y, z in zip(c, a, m)]
        wall, rss = time_facts(run / "time.txt")
        print(f"| {run.name} | " + " | ".join(cells) + f" | {float(rows[-1]['lr']):.1e} | {wall} | {rss} |")
    print("\nThe last validation point (validation split: AUC of the fault-tolerance head; RMSE ft / util / cost):\n")
    print("| run | scenario | AUC | RMSE |")
    print("| --- | --- | ---: | --- |")
    for run in runs:
        v = list(csv.DictReader(open(run / "validation_curve.csv")))
        last = [r for r in v if r["trained_episodes"] == v[-1]["trained_episodes"] and r["split"] == "validation"]
        for r in last:
            auc = f"{float(r['auc_ft']):.3f}" if r["auc_ft"] else "n/a"
            rmse = " / ".join(f"{float(r[k]):.3f}" for k in ("rmse_ft", "rmse_util", "rmse_cost"))
            print(f"| {run.name} | {r['scenario']} | {auc} | {rmse} |")
    with_sidecar = [run for run in runs if (run / "sidecar.json").exists()]
    if with_sidecar:
        print("\nThe wait head (sidecar `training.wait`: RMSE over the last declines, each measured before")
        print("the learner trained on it; declines in all) and the declines per episode, means over blocks:\n")
        print("| run | wait RMSE | declines measured | " + " | ".join(head) + " |")
        print("| --- | ---: | ---: | " + " | ".join("---:" for _ in head) + " |")
        for run in with_sidecar:
            wait = json.load(open(run / "sidecar.json")).get("training", {}).get("wait", {})
            rmse = wait.get("rmse")
            rows = list(csv.DictReader(open(run / "training_curve.csv")))
            cells = [f"{x:.1f}" for x in blocks(rows, "declines")]
            shown = f"{rmse:.3f}" if rmse is not None else "none"
            print(f"| {run.name} | {shown} | {wait.get('samples', 0)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
