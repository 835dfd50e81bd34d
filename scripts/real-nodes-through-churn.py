#!/usr/bin/env python3
"""Whether every real node of a run stayed Ready but for the scenario's own
faults: per real node, the NodeFailed events of its records against the
kubelet stops the fault pump carried out (from the run's manifest). A
failure the pump did not cause is a node the machine could not keep Ready.

    scripts/real-nodes-through-churn.py RUN_FOLDER [ARM]
"""
import json
import sys
from collections import Counter
from pathlib import Path


def main(folder, arm):
    run = Path(folder) / "runs" / arm / "seed-1"
    manifest = json.loads((run / "manifest.json").read_text())
    cluster_run = manifest.get("cluster_run", {})
    actions = cluster_run.get("node_faults", {}).get("actions", [])
    stops = Counter(a.rsplit(" ", 1)[-1] for a in actions if a.startswith("stop the kubelet of "))
    names, failed, started = {}, Counter(), Counter()
    for line in (run / "records.jsonl").open():
        r = json.loads(line)
        if r.get("type") == "node":
            names[r["node"]] = r["spec"]["name"]
        elif r.get("type") == "event" and r["event"] in ("node_failed", "container_started"):
            name = names.get(r["node"], str(r["node"]))
            (failed if r["event"] == "node_failed" else started)[name] += 1
    real = sorted(n for n in names.values() if n.startswith("real-"))
    unplanned = {n: failed[n] - stops[n] for n in real if failed[n] != stops[n]}
    print(
        json.dumps(
            {
                "every_real_node_ready": not unplanned,
                "real_nodes": real,
                "container_starts": {n: started[n] for n in real},
                "kubelet_stops": dict(stops),
                "node_failed": {n: failed[n] for n in real},
                "unplanned_failures": unplanned,
                "wall_seconds": cluster_run.get("summary", {}).get("wall_seconds"),
                "create_lag_max_seconds": cluster_run.get("summary", {}).get("create_lag_max_seconds"),
            }
        )
    )
    return 0 if not unplanned else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "default"))
