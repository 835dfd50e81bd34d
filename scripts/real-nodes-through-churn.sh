#!/usr/bin/env bash
# How many real nodes this machine keeps Ready through the churn scenario:
# for N in NODES (default 1 2 3 4) plays `churn --nodes real:N+emulated`
# with the default arm, seed 1, at TIME_SCALE (default 30), and prints per N
# whether any real node failed beyond the scenario's own kubelet stops, and
# how far pod creates fell behind the scenario (docs/src/real-nodes.md, "Real nodes on this
# machine"). Needs root and cgroup v1, as real nodes do.
#
#   scripts/real-nodes-through-churn.sh   # after `cargo build -p harness -p workload-runner -p agmarl-scheduler`
#
# SCHEDLAB overrides the binary (the workload and scheduler programs must be beside it).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SCHEDLAB:-target/debug/schedlab}
scale=${TIME_SCALE:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
for n in ${NODES:-1 2 3 4}; do
  "$bin" scenario churn --cluster local --nodes "real:$n+emulated" --time-scale "$scale" \
    --arms default --seeds 1 --out "$work/n$n" > /dev/null 2> "$work/n$n.log" \
    || { echo "N=$n: the run failed; its log:" >&2; tail -20 "$work/n$n.log" >&2; exit 1; }
  printf 'N=%s ' "$n"
  python3 scripts/real-nodes-through-churn.py "$work/n$n" || status=1
done
exit "$status"
