#!/usr/bin/env bash
# The registered claims tables of evaluations/PREREGISTRATION.md, for the
# checkpoints of the learned variants and their controls:
#
#   A  headline: the built-ins that declare claims, default size
#   B  heldout:  evaluations/heldout/*.yaml, default size
#   C  sizes:    churn, pressure and autoscaled at 1/4 and 4 times their nodes
#   H  learning: one report over A's and B's folders, for its "What learning
#      adds" section: H2 and the comparison with agmarl-analytic over the
#      nine scenarios, as registered (amendment 2); its claims table is not
#      a registered table (A and B are)
#
#   scripts/claims-evaluation.sh OUT [A|B|C|H|all]     # after cargo build --release
#
# Per scenario: one folder with the baselines and agmarl-analytic, and per
# training run S of each variant one folder with that variant's checkpoint
# of training seed S and its untrained twin with init seed S (agmarl-untrained
# for agmarl, VARIANT-untrained for an ablation: amendment 8). `schedlab report` merges them, the training runs being
# the unit of replication. Evaluation seeds 1-10. OUT keeps each table's
# report.md, report.tex, claims.json, the terminal output (claims.txt) and
# each folder's summary.json; the raw records stay in a temporary folder.
# SCHEDLAB overrides the binary, TRAINING_SEEDS the training runs (default
# the five registered: 1000 2000 3000 4000 5000), VARIANTS the learned variants
# (default all four; amendment 2 lets agmarl's tables go first), CLAIMS_ARM
# the arm the reports judge (default the first of VARIANTS: an ablation is
# judged against the baselines and its own twin),
# CHECKPOINT_DIR a folder holding every checkpoint as VARIANT-SEED.safetensors
# (default: the bundled one for seed 1000, evaluations/training-seeds/ else;
# the v2 checkpoints are in evaluations/claims-v2/checkpoints/).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SCHEDLAB:-target/release/schedlab}
out=${1:?usage: scripts/claims-evaluation.sh OUT [A|B|C|H|all]}
part=${2:-all}
seeds=${TRAINING_SEEDS:-1000 2000 3000 4000 5000}
baselines=default,binpack,cost-binpack,target-load,load-aware,random,agmarl-analytic
variants=${VARIANTS:-agmarl agmarl-nognn agmarl-linear agmarl-nostress}
read -r -a listed <<< "$variants"
claims_arm=${CLAIMS_ARM:-${listed[0]}}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

checkpoint() { # variant seed
  if [ -n "${CHECKPOINT_DIR:-}" ]; then echo "$CHECKPOINT_DIR/$1-$2.safetensors"; return; fi
  if [ "$2" = 1000 ]; then echo "scheduler/checkpoints/$1.safetensors"; else echo "evaluations/training-seeds/$1-$2.safetensors"; fi
}

for v in $variants; do
  for s in $seeds; do
    f=$(checkpoint "$v" "$s")
    [ -f "$f" ] || { echo "claims-evaluation.sh: no checkpoint $f (variant $v, training seed $s): train it, or set VARIANTS/TRAINING_SEEDS" >&2; exit 2; }
  done
done
mkdir -p "$out"

# every folder of one scenario (NAME, then the scenario and its --set args)
scenario() {
  local name=$1 scenario=$2
  shift 2
  [ -d "$work/$name" ] && return
  "$bin" scenario "$scenario" --arms "$baselines" --seeds 10 --out "$work/$name/baselines" "$@" > /dev/null
  for v in $variants; do
    for s in $seeds; do
      "$bin" scenario "$scenario" --arms "$v,$v-untrained" --init-seed "$s" --seeds 10 \
        --checkpoint "$(checkpoint "$v" "$s")" --out "$work/$name/$v-$s" "$@" > /dev/null
    done
  done
}

# the report over every folder of a table's scenarios
table() { # TABLE NAME...
  local t=$1
  shift
  local dirs=()
  for name in "$@"; do dirs+=("$work/$name"/*); done
  rm -rf "${out:?}/$t"
  "$bin" report "${dirs[@]}" --all-metrics --claims-arm "$claims_arm" --out "$work/report-$t" > "$work/claims-$t.txt"
  mkdir -p "$out/$t"
  cp "$work/claims-$t.txt" "$out/$t/claims.txt"
  cp "$work/report-$t"/report.md "$work/report-$t"/report.tex "$work/report-$t"/claims.json "$out/$t/"
  # H's folders are A's and B's: their summaries are kept there once
  [ "$t" = H-learning ] && return
  for name in "$@"; do
    for d in "$work/$name"/*; do
      mkdir -p "$out/$t/$name"
      cp "$d/summary.json" "$out/$t/$name/$(basename "$d").json"
    done
  done
}

headline=(pressure churn mixed trace autoscaled)
heldout=()
for f in evaluations/heldout/*.yaml; do heldout+=("heldout-$(basename "$f" .yaml)"); done
if [ "$part" = all ] || [ "$part" = A ] || [ "$part" = H ]; then
  # the built-ins that declare claims (workloads/FORMAT.md, "Claims a scenario tests")
  for s in "${headline[@]}"; do scenario "$s" "$s"; done
  [ "$part" = H ] || table A-headline "${headline[@]}"
fi
if [ "$part" = all ] || [ "$part" = B ] || [ "$part" = H ]; then
  for f in evaluations/heldout/*.yaml; do scenario "heldout-$(basename "$f" .yaml)" "$f"; done
  [ "$part" = H ] || table B-heldout "${heldout[@]}"
fi
if [ "$part" = all ] || [ "$part" = H ]; then
  table H-learning "${headline[@]}" "${heldout[@]}"
fi
if [ "$part" = all ] || [ "$part" = C ]; then
  # default nodes: pressure 48, churn 40, autoscaled 40. One report holds one
  # size of a scenario (it groups folders by scenario name), so the quarter
  # and the fourfold sizes are two reports (amendment 1 of the pre-registration).
  scenario churn-nodes-10 churn --set nodes=10
  scenario pressure-nodes-12 pressure --set nodes=12
  scenario autoscaled-nodes-10 autoscaled --set nodes=10
  table C-sizes-quarter churn-nodes-10 pressure-nodes-12 autoscaled-nodes-10
  scenario churn-nodes-160 churn --set nodes=160
  scenario pressure-nodes-192 pressure --set nodes=192
  scenario autoscaled-nodes-160 autoscaled --set nodes=160
  table C-sizes-fourfold churn-nodes-160 pressure-nodes-192 autoscaled-nodes-160
fi
