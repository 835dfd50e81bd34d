#!/usr/bin/env bash
# Table D of evaluations/PREREGISTRATION.md (amendments 9-12): claim 5,
# `agmarl` against the monolithic foil `drs` over cluster sizes.
#
#   scripts/scaling-evaluation.sh OUT [SIZES]     # after cargo build --release
#
# SIZES (default "10 40 160 640"): the node counts. Per size N it trains
# `drs` (`schedlab train --variant drs --set nodes=N --seed 1000 --episodes
# 100`) into OUT/train/drs-nN unless that folder holds a finished one, runs
# `churn` and `pressure` at N with agmarl, drs, default and cost-binpack on
# evaluation seeds 1-10, one run at a time (decision time is measured: keep
# the machine otherwise idle), then `schedlab scaling` over every folder
# into OUT/table-d. A size whose training passes TRAIN_BUDGET seconds
# (default 14400, the registered 4 hours) is stopped and runs without
# `drs`; `drs-agmarl-reward` is trained and run the same way, in folders of
# its own, and shows in the table's descriptive part; FOIL_SIZES (default: SIZES) limits the sizes where `drs` is trained
# at all (amendment 12: 640 nodes does not fit, from a probe of its time per
# episode, so the registered run is FOIL_SIZES="10 40 160"). D3: the network
# trained at 40 nodes is asked to run at every other
# size; each refusal is kept in OUT/d3.txt. SCHEDLAB overrides the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${SCHEDLAB:-target/release/schedlab}
out=${1:?usage: scripts/scaling-evaluation.sh OUT [SIZES]}
sizes=${2:-10 40 160 640}
budget=${TRAIN_BUDGET:-14400}
foil_sizes=${FOIL_SIZES:-$sizes}
mkdir -p "$out/train" "$out/runs"
trainings=()
for n in $sizes; do
  t="$out/train/drs-n$n"
  foil=no
  if [[ " $foil_sizes " == *" $n "* ]]; then foil=yes; fi
  if [ "$foil" = yes ] && { [ ! -f "$t/checkpoint.safetensors" ] || [ -e "$t/INCOMPLETE" ]; }; then
    rm -rf "$t"
    timeout "$budget" "$bin" train --variant drs --set "nodes=$n" --seed 1000 --episodes 100 --out "$t" \
      > "$out/train/drs-n$n.log" 2>&1 || echo "drs at $n nodes: training stopped or failed (see drs-n$n.log)" >&2
  fi
  # the foil on AGMARL's reward (amendment 9 item 2), described beside the rest
  r="$out/train/drs-agmarl-reward-n$n"
  if [ "$foil" = yes ] && { [ ! -f "$r/checkpoint.safetensors" ] || [ -e "$r/INCOMPLETE" ]; }; then
    rm -rf "$r"
    timeout "$budget" "$bin" train --variant drs-agmarl-reward --set "nodes=$n" --seed 1000 --episodes 100 \
      --out "$r" > "$out/train/drs-agmarl-reward-n$n.log" 2>&1 \
      || echo "drs-agmarl-reward at $n nodes: training stopped or failed" >&2
  fi
  for s in churn pressure; do
    d="$out/runs/$s-n$n"
    if [ ! -f "$d/summary.json" ]; then
      rm -rf "$d"
      if [ "$foil" = yes ] && [ -f "$t/checkpoint.safetensors" ] && [ ! -e "$t/INCOMPLETE" ]; then
        "$bin" scenario "$s" --arms agmarl,drs,default,cost-binpack --set "nodes=$n" --seeds 10 --jobs 1 \
          --drs-checkpoint "$t/checkpoint.safetensors" --out "$d" > /dev/null
      else
        "$bin" scenario "$s" --arms agmarl,default,cost-binpack --set "nodes=$n" --seeds 10 --jobs 1 \
          --out "$d" > /dev/null
      fi
    fi
    d="$out/runs/$s-n$n-agmarl-reward"
    if [ "$foil" = yes ] && [ -f "$r/checkpoint.safetensors" ] && [ ! -e "$r/INCOMPLETE" ] && [ ! -f "$d/summary.json" ]; then
      rm -rf "$d"
      "$bin" scenario "$s" --arms drs-agmarl-reward --set "nodes=$n" --seeds 10 --jobs 1 \
        --drs-checkpoint "$r/checkpoint.safetensors" --out "$d" > /dev/null
    fi
  done
  if [ "$foil" = yes ] && [ -f "$t/checkpoint.safetensors" ] && [ ! -e "$t/INCOMPLETE" ]; then
    trainings+=(--training "$t")
  fi
done
# D3: the network of 40 nodes elsewhere
: > "$out/d3.txt"
if [ -f "$out/train/drs-n40/checkpoint.safetensors" ]; then
  for n in $sizes; do
    [ "$n" = 40 ] && continue
    if "$bin" scenario churn --arms drs --set "nodes=$n" --seeds 1 --drs-checkpoint "$out/train/drs-n40/checkpoint.safetensors" \
      --out "$out/d3-tmp" >> "$out/d3.txt" 2>&1; then
      echo "at $n nodes: ran (unexpected)" >> "$out/d3.txt"
    fi
    rm -rf "$out/d3-tmp"
  done
fi
rm -rf "$out/table-d"
"$bin" scaling "$out"/runs/* "${trainings[@]}" --out "$out/table-d" > /dev/null
echo "table D: $out/table-d/scaling.md"
