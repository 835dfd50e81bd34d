#!/usr/bin/env python3
"""H1 of evaluations/PREREGISTRATION.md (amendment 2, item 3) from the
heads.json that `schedlab heads --out DIR` writes: over the scenarios'
pooled placements (the "(all)" rows), the fault-tolerance AUC of every
trained checkpoint, of its untrained twin (the init seed equal to the
checkpoint's training seed, read from its sidecar) and of the analytic
formulas; the mean over training runs with Student's t 95% interval, the
paired difference trained - twin with its interval, and the registered
verdict. Also the heads' RMSE and across-candidate shares per model.

    scripts/h1.py DIR/heads.json [--markdown]

Exit 2 on a file it cannot read or a checkpoint without its twin.
"""

import json
import math
import statistics
import sys
from pathlib import Path

# two-sided 95% quantiles of Student's t by degrees of freedom
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228}


def interval(values):
    n = len(values)
    m = statistics.fmean(values)
    if n < 2:
        return m, None
    if n - 1 not in T975:
        sys.exit(f"h1.py: {n} training runs: no t quantile for {n - 1} degrees of freedom here")
    h = T975[n - 1] * statistics.stdev(values) / math.sqrt(n)
    return m, (m - h, m + h)


def fail(msg):
    print(f"h1.py: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        fail("usage: scripts/h1.py HEADS_JSON [--markdown]")
    path = Path(args[0])
    try:
        cells = json.loads(path.read_text())["cells"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        fail(f"{path}: not a heads.json: {e}")
    total = {c["model"]: c["heads"] for c in cells if c["scenario"] == "(all)"}
    trained, twins, analytic = {}, {}, None
    for model, heads in total.items():
        if model.startswith("checkpoint "):
            ckpt = Path(model[len("checkpoint "):])
            sidecar = ckpt.with_suffix(".json")
            try:
                seed = json.loads(sidecar.read_text())["training"]["seed"]
            except (OSError, ValueError, KeyError, TypeError) as e:
                fail(f"{sidecar}: field training.seed: {e}")
            trained[seed] = (model, heads)
        elif model.startswith("agmarl-untrained init "):
            twins[int(model.split()[-1])] = (model, heads)
        elif model == "agmarl-analytic":
            analytic = heads
    missing = sorted(set(trained) - set(twins))
    if missing:
        fail(f"{path}: no untrained twin (--init-seed) for training seeds {missing}")
    seeds = sorted(trained)
    auc_t = [trained[s][1]["auc_ft"] for s in seeds]
    auc_u = [twins[s][1]["auc_ft"] for s in seeds]
    if any(a is None for a in auc_t + auc_u):
        fail(f"{path}: a model without a fault-tolerance AUC (no observed failure)")
    diffs = [t - u for t, u in zip(auc_t, auc_u)]
    mt, ct = interval(auc_t)
    mu, cu = interval(auc_u)
    md, cd = interval(diffs)
    a_auc = analytic["auc_ft"] if analytic else None

    def fmt(m, ci):
        return f"{m:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")

    discriminates = cd is not None and cd[0] > 0 and a_auc is not None and mt > a_auc
    md_out = "--markdown" in sys.argv
    lines = []
    if md_out:
        lines += ["| model | AUC, fault tolerance (mean [95% t interval] over training runs) |", "| --- | ---: |"]
        lines.append(f"| trained, training seeds {', '.join(map(str, seeds))} | {fmt(mt, ct)} |")
        lines.append(f"| untrained twins, init seeds {', '.join(map(str, seeds))} | {fmt(mu, cu)} |")
        lines.append(f"| trained − twin, paired | {fmt(md, cd)} |")
        lines.append(f"| analytic formulas | {a_auc:.3f} |" if a_auc is not None else "| analytic formulas | n/a |")
    else:
        lines.append(f"training runs: {len(seeds)} ({', '.join(map(str, seeds))})")
        lines.append(f"trained AUC:   {fmt(mt, ct)}  per run {', '.join(f'{a:.3f}' for a in auc_t)}")
        lines.append(f"twins AUC:     {fmt(mu, cu)}  per run {', '.join(f'{a:.3f}' for a in auc_u)}")
        lines.append(f"paired diff:   {fmt(md, cd)}")
        lines.append(f"analytic AUC:  {a_auc:.3f}" if a_auc is not None else "analytic AUC:  n/a")
        for label, group in (("trained", [trained[s][1] for s in seeds]), ("twins", [twins[s][1] for s in seeds])):
            rmse = [[h["rmse"][o] for h in group] for o in range(3)]
            share = [[h["across_candidates"][o] for h in group] for o in range(3)]
            lines.append(
                f"{label} RMSE ft/util/cost: "
                + " / ".join(f"{min(r):.3f}-{max(r):.3f}" for r in rmse)
                + "; across candidates: "
                + " / ".join(f"{min(s):.3f}-{max(s):.3f}" for s in share)
            )
        if analytic:
            lines.append(
                "analytic RMSE ft/util/cost: "
                + " / ".join(f"{r:.3f}" for r in analytic["rmse"])
                + "; across candidates: "
                + " / ".join(f"{s:.3f}" for s in analytic["across_candidates"])
            )
    lines.append(
        ("H1: the head discriminates better: " + ("yes" if discriminates else "no"))
        + " (the paired difference's interval above 0 and the trained mean above the analytic AUC)"
    )
    print("\n".join(lines))


if __name__ == "__main__":
    main()
