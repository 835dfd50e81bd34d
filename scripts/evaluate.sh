#!/usr/bin/env bash
# Regenerates every evaluation the book reports for the bundled checkpoints,
# into evaluations/bundled-checkpoint/ (summaries, report.md and the claims
# table; the raw records stay in a temporary folder and are removed):
#
#   scripts/evaluate.sh            # after `cargo build --release`
#   scripts/evaluate.sh main       # all but the training-seed spread
#   scripts/evaluate.sh spread     # the training-seed spread only
#
# Evaluation seeds are 1-10 (training never uses seeds below 1000); the
# held-out scenarios of evaluations/heldout/ and the other sizes are work the
# checkpoints never trained on. SCHEDLAB overrides the binary.
#
# What evaluations/bundled-checkpoint/ holds was written by an earlier
# revision with the v2 checkpoints, before the agmarl arms preempted (the
# book's "How it did before controls and preemption", docs/src/agmarl-history.md); run today, the main
# part plays today's bundled checkpoints and the spread part today's runs of
# training seeds 1000 (bundled), 2000 and 3000 (evaluations/training-seeds/).
# The v2 and v3 checkpoints are in evaluations/claims-v2/checkpoints/ and
# evaluations/claims-v3/checkpoints/; the code reads feature schema 3 and
# refuses them, so their tables are made at their own commits. The registered
# tables of the current checkpoints are scripts/claims-evaluation.sh's.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SCHEDLAB:-target/release/schedlab}
out=evaluations/bundled-checkpoint
all=default,binpack,cost-binpack,target-load,load-aware,random,agmarl,agmarl-nognn,agmarl-linear,agmarl-nostress
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
part=${1:-all}

# keeps a run folder's summaries as $out/$2
keep() {
  rm -rf "${out:?}/$2"
  mkdir -p "$out/$2"
  cp "$1"/manifest.json "$1"/summary.json "$1"/summary.csv "$1"/report.md "$out/$2/"
}

run() { # name scenario [extra args...]
  local name=$1 scenario=$2
  shift 2
  "$bin" scenario "$scenario" --arms "$all" --seeds 10 --out "$work/$name" "$@" > /dev/null
  keep "$work/$name" "$name"
}

if [ "$part" = all ] || [ "$part" = main ]; then
for s in pressure churn mixed trace pressure-v1 churn-v1; do
  run "$s" "$s"
done
for f in evaluations/heldout/*.yaml; do
  name=$(basename "$f" .yaml)
  run "heldout-$name" "$f"
done
# a quarter and four times the default sizes (pressure 48 nodes, churn 40)
run pressure-nodes-12 pressure --set nodes=12
run pressure-nodes-192 pressure --set nodes=192
run churn-nodes-10 churn --set nodes=10
run churn-nodes-160 churn --set nodes=160

# strategic restraint: the same checkpoint without it, and what it did (decision records)
echo '{"restraint": {"enabled": false}}' > "$work/no-restraint.json"
"$bin" scenario churn --arms agmarl --seeds 10 --agmarl-config "$work/no-restraint.json" \
  --out "$work/churn-no-restraint" > /dev/null
keep "$work/churn-no-restraint" churn-no-restraint
"$bin" scenario churn --arms agmarl --seeds 3 --explain --out "$work/churn-explain" > /dev/null
python3 scripts/restraint.py "$work/churn-explain" > "$out/restraint.md"

# the claims table of the paper's four claims, over the claim scenarios
rm -rf "$out/claims"
"$bin" report "$work/pressure" "$work/churn" --all-metrics --out "$out/claims" > "$out/claims.txt"
# the per-scenario reports' plots and pages are megabytes each; their tables stay
rm -rf "$out"/claims/*/plots "$out"/claims/*/report.html "$out"/claims/*/summary.json

fi

if [ "$part" = all ] || [ "$part" = spread ]; then
# every variant's first three training seeds (the first is the bundled checkpoint)
# on the claim scenarios, for the spread across training runs
for v in agmarl agmarl-nognn agmarl-linear agmarl-nostress; do
  for seed in 1000 2000 3000; do
    if [ "$seed" = 1000 ]; then ckpt=scheduler/checkpoints/$v.safetensors; else ckpt=evaluations/training-seeds/$v-$seed.safetensors; fi
    for s in pressure churn; do
      "$bin" scenario "$s" --arms "$v" --seeds 10 --checkpoint "$ckpt" --out "$work/ts-$v-$seed-$s" > /dev/null
      mkdir -p "$out/training-seeds/$v-$seed"
      cp "$work/ts-$v-$seed-$s/summary.json" "$out/training-seeds/$v-$seed/$s.json"
    done
  done
done
python3 scripts/training-spread.py "$out/training-seeds" > "$out/training-seeds.md"
fi
