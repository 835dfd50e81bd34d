#!/usr/bin/env bash
# The faithfulness check (docs/src/faithfulness.md, "Faithfulness: simulator, emulated and
# real nodes"): evaluations/faithfulness/small-churn.yaml, the default and
# binpack arms, the same seeds, on the simulator, on emulated nodes of a
# private local control plane, and on real kubelets of this machine (root,
# cgroup v1); keeps each run folder's summaries under
# evaluations/faithfulness/<backend>/ and writes the comparison table to
# evaluations/faithfulness/table.md.
#
#   scripts/faithfulness.sh        # after `cargo build -p harness -p workload-runner -p agmarl-scheduler`
#   scripts/faithfulness.sh real   # the real nodes only (the others kept)
#
# SCHEDLAB overrides the binary (the workload and scheduler programs must be
# beside it); SEEDS (default 3) and TIME_SCALE (default 10) the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SCHEDLAB:-target/debug/schedlab}
seeds=${SEEDS:-3}
scale=${TIME_SCALE:-10}
scenario=evaluations/faithfulness/small-churn.yaml
out=evaluations/faithfulness
work=$(mktemp -d)
state="$work/plane"
trap '"$bin" cluster down --local --state "$state" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

keep() { # run-folder backend
  rm -rf "${out:?}/$2"
  mkdir -p "$out/$2"
  cp "$1"/manifest.json "$1"/summary.csv "$1"/report.md "$out/$2/"
}

common=(scenario "$scenario" --arms default,binpack --seeds "$seeds")
part=${1:-all}

if [ "$part" = all ]; then
echo "simulator" >&2
"$bin" "${common[@]}" --out "$work/sim" > /dev/null
keep "$work/sim" sim

echo "emulated nodes (time scale $scale)" >&2
"$bin" cluster up --local --state "$state" > /dev/null
"$bin" "${common[@]}" --cluster local --local-state "$state" --time-scale "$scale" --out "$work/emulated" > /dev/null
"$bin" cluster down --local --state "$state" > /dev/null
keep "$work/emulated" emulated
fi

echo "real nodes (time scale $scale)" >&2
# every scenario node is a real node (the scenario's three)
"$bin" "${common[@]}" --cluster local --nodes real:3 --time-scale "$scale" --out "$work/real" > /dev/null
keep "$work/real" real

python3 scripts/faithfulness.py "$out/sim" "$out/emulated" "$out/real" > "$out/table.md"
cat "$out/table.md"
