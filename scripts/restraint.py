#!/usr/bin/env python3
"""What strategic restraint did in a run folder made with --explain.

    scripts/restraint.py RUN_FOLDER [ARM]      # ARM defaults to agmarl

For every seed of ARM: how many pods were declined, at which stress level,
how long a declined pod waited from its first decline to its bind, and how
its placement then went, next to the pods of the same workloads bound
without a decline while the cluster was Stressed: the share that failed
within 10 minutes of their bind (a crash, an OOM kill, an eviction or a
failed pod), from the run's own records. Prints Markdown.
"""
import json
import statistics
import sys
from collections import Counter, defaultdict
from pathlib import Path

HORIZON_MS = 10 * 60 * 1000
FAIL = {"pod_failed", "pod_evicted"}


def fates(records):
    """pod -> bind time, and pod -> first failure time after its bind"""
    bound, failed = {}, {}
    with open(records) as f:
        for line in f:
            r = json.loads(line)
            if r.get("type") != "event":
                continue
            e, pod, t = r["event"], r.get("pod"), r["t"]
            if e == "pod_bound":
                bound.setdefault(pod, t)
            elif pod in bound and pod not in failed and (
                e in FAIL or (e == "container_exited" and r.get("reason") in ("Error", "OOMKilled"))
            ):
                failed[pod] = t
    return bound, failed


def main():
    folder = Path(sys.argv[1])
    arm = sys.argv[2] if len(sys.argv) > 2 else "agmarl"
    rows = []
    for seed_dir in sorted((folder / "runs" / arm).glob("seed-*"), key=lambda p: int(p.name[5:])):
        decisions = seed_dir / "decisions.jsonl"
        if not decisions.exists():
            sys.exit(f"{decisions}: missing; run the scenario with --explain")
        first_decline, levels, workloads = {}, Counter(), {}
        stressed_binds = set()
        with open(decisions) as f:
            for line in f:
                d = json.loads(line)
                workloads[d["pod"]] = d["workload"]
                if d["outcome"] == "decline":
                    first_decline.setdefault(d["pod"], d["t"])
                    levels[d["stress"]["level"]] += 1
                elif d["outcome"] == "bind" and d.get("agmarl", {}).get("level") == "stressed":
                    stressed_binds.add(d["pod"])
        bound, failed = fates(seed_dir / "records.jsonl")
        declined_workloads = {workloads[p] for p in first_decline}
        waits, later_failed, placed = [], 0, 0
        for pod, t in first_decline.items():
            if pod in bound:
                placed += 1
                waits.append((bound[pod] - t) / 1000)
                if pod in failed and failed[pod] - bound[pod] <= HORIZON_MS:
                    later_failed += 1
        peers = [p for p in stressed_binds if p not in first_decline and workloads.get(p) in declined_workloads]
        peers_failed = sum(1 for p in peers if p in failed and failed[p] - bound.get(p, 0) <= HORIZON_MS)
        rows.append(
            {
                "seed": int(seed_dir.name[5:]),
                "declines": sum(levels.values()),
                "pods": len(first_decline),
                "levels": dict(levels),
                "placed": placed,
                "wait_p50": statistics.median(waits) if waits else None,
                "failed_share": later_failed / placed if placed else None,
                "peers": len(peers),
                "peers_failed_share": peers_failed / len(peers) if peers else None,
            }
        )
    f = lambda x, d=2: "n/a" if x is None else f"{x:.{d}f}"
    print(f"`{arm}` in {folder.name}: strategic restraint per seed, from its decision records\n")
    print("| seed | declines | pods declined | levels | later bound | wait p50 (s) | failed within 10 min | "
          "same workloads bound undeclined when stressed | of those failed |")
    print("| ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        levels = ", ".join(f"{k} {v}" for k, v in sorted(r["levels"].items()))
        print(
            f"| {r['seed']} | {r['declines']} | {r['pods']} | {levels} | {r['placed']} | {f(r['wait_p50'], 0)} | "
            f"{f(r['failed_share'])} | {r['peers']} | {f(r['peers_failed_share'])} |"
        )


if __name__ == "__main__":
    main()
