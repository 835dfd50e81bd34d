//! The body of report.md.

use super::format::{NA, correlation_cell, effect, md_escape, metric_cell, p_value, plain};
use super::{Summary, VS_REFERENCE, collapsed_rows, headline};
use crate::definitions::{ACROSS_SEEDS, Better, CORRELATIONS, METRICS, MetricDef};
use crate::pareto::ParetoStatus;
use crate::stats::{BOOTSTRAP_RESAMPLES, CONFIDENCE};
use std::fmt::Write;

/// "↓" / "↑" after a metric whose lower / higher values are better.
pub(super) fn direction(better: Better) -> &'static str {
    match better {
        Better::Lower => " ↓",
        Better::Higher => " ↑",
        Better::Neither => "",
    }
}

fn better_words(better: Better) -> &'static str {
    match better {
        Better::Lower => ", lower is better",
        Better::Higher => ", higher is better",
        Better::Neither => "",
    }
}

fn join_seeds(seeds: &[u64]) -> String {
    seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

fn definition_item(out: &mut String, d: &MetricDef) {
    let _ = writeln!(
        out,
        "- **`{}`** ({}{}): {}",
        d.key,
        d.unit,
        better_words(d.better),
        d.definition
    );
}

impl Summary {
    /// report.md's body: the scenario, arms and seeds, the headline table,
    /// the correlation table, and the definition of every number shown.
    pub fn to_markdown(&self) -> String {
        let mut out = String::new();
        let pct = CONFIDENCE * 100.0;
        let _ = writeln!(out, "# Scenario `{}`\n", md_escape(self.scenario()));
        let _ = writeln!(out, "| arm | runs | seeds |\n| --- | ---: | --- |");
        for arm in self.arms() {
            let _ = writeln!(
                out,
                "| `{}` | {} | {} |",
                md_escape(&arm.arm),
                arm.runs.len(),
                join_seeds(&arm.seeds())
            );
        }
        let _ = write!(out, "\nStatistics seed: {}.", self.stats_seed());
        if let Some(reference) = self.reference() {
            let _ = write!(out, " Reference arm: `{}`.", md_escape(reference));
        }
        out.push_str("\n\n");

        let collapsed = collapsed_rows(self);
        let _ = writeln!(out, "## Results\n");
        let lines = headline(self);
        if !lines.is_empty() {
            for line in &lines {
                let _ = writeln!(out, "- {}", md_escape(line));
            }
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "Each cell: the mean over the arm's runs ± half the width of the {pct}% percentile-bootstrap interval \
             of that mean ({BOOTSTRAP_RESAMPLES} resamples). \"(n=1)\": a single run, no interval. \"(n=k)\": only \
             k runs define the metric. n/a: no run defines it. ↓ / ↑: lower / higher is better; **bold** marks the \
             best mean of such a row, which is not a significance test.\n"
        );
        let mut header = String::from("| metric | unit |");
        let mut rule = String::from("| --- | --- |");
        for arm in self.arms() {
            let _ = write!(header, " `{}` |", md_escape(&arm.arm));
            rule.push_str(" ---: |");
        }
        let _ = writeln!(out, "{header}\n{rule}");
        for (i, def) in METRICS.iter().enumerate() {
            if collapsed.contains(def.key) {
                continue;
            }
            let best = self.best_arms(i);
            let _ = write!(out, "| `{}`{} | {} |", def.key, direction(def.better), def.unit);
            for (arm, is_best) in self.arms().iter().zip(best) {
                let cell = arm.metrics.get(i).map_or_else(|| "n/a".to_string(), metric_cell);
                if is_best {
                    let _ = write!(out, " **{cell}** |");
                } else {
                    let _ = write!(out, " {cell} |");
                }
            }
            out.push('\n');
        }
        let collapsed_lines = collapsed.lines();
        if !collapsed_lines.is_empty() {
            out.push('\n');
            for line in collapsed_lines {
                let _ = writeln!(out, "{}.", md_escape(&line));
            }
        }

        self.markdown_vs_reference(&mut out, &collapsed);
        self.markdown_pareto(&mut out);

        let _ = writeln!(out, "\n## Memory request vs failures\n");
        let _ = writeln!(
            out,
            "Per run, over the pods bound at least once: the correlation between a pod's memory request and its \
             failure count, with {pct}% percentile-bootstrap intervals over pods ({BOOTSTRAP_RESAMPLES} resamples). \
             n/a: undefined (fewer than 3 pods, or no variation in requests or failures). †: some resamples had no \
             variation and are left out of the interval (counts in summary.json).\n"
        );
        let _ = writeln!(
            out,
            "Partial r: the same pods, each less its template's means: the correlation that remains within \
             templates (`mem_failure_partial_pearson`). A pooled correlation that the partial one does not keep \
             comes from the mix of templates, not from memory requests as such.\n"
        );
        let _ = writeln!(
            out,
            "| arm | seed | pods | Pearson r [{pct}% CI] | Spearman rho [{pct}% CI] | templates | partial r [{pct}% CI] |\n\
             | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        for arm in self.arms() {
            for ((run, c), d) in arm.runs.iter().zip(&arm.correlations).zip(&arm.decoupling) {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} | {} | {} | {} |",
                    md_escape(&arm.arm),
                    run.seed,
                    c.n,
                    correlation_cell(c.pearson.as_ref()),
                    correlation_cell(c.spearman.as_ref()),
                    d.partial.groups,
                    correlation_cell(d.partial.pearson.as_ref())
                );
            }
        }
        let _ = writeln!(
            out,
            "\n### Within each template\n\nPer run and template (`mem_failure_template_pearson`, \
             `mem_failure_template_spearman`), over that template's pods bound at least once.\n"
        );
        let _ = writeln!(
            out,
            "| arm | seed | template | pods | Pearson r [{pct}% CI] | Spearman rho [{pct}% CI] |\n\
             | --- | ---: | --- | ---: | ---: | ---: |"
        );
        for arm in self.arms() {
            for (seed, t) in arm.template_correlations() {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} | {} | {} |",
                    md_escape(&arm.arm),
                    seed,
                    md_escape(&t.name),
                    t.estimate.n,
                    correlation_cell(t.estimate.pearson.as_ref()),
                    correlation_cell(t.estimate.spearman.as_ref())
                );
            }
        }

        let _ = writeln!(
            out,
            "\n## Definitions\n\n### Across seeds\n\n{ACROSS_SEEDS}\n\n### Against the reference arm\n\n\
             {VS_REFERENCE}\n\n### Metrics of a run\n"
        );
        for d in METRICS {
            definition_item(&mut out, d);
        }
        let _ = writeln!(out, "\n### Correlations of a run\n");
        for d in CORRELATIONS {
            definition_item(&mut out, d);
        }
        out
    }

    /// Every other arm against the reference arm, metric by metric.
    fn markdown_vs_reference(&self, out: &mut String, collapsed: &super::Collapsed) {
        let Some(reference) = self.reference_arm() else {
            return;
        };
        let _ = writeln!(out, "\n## Against the reference arm `{}`\n", md_escape(&reference.arm));
        if self.arms().len() < 2 {
            let _ = writeln!(out, "No other arm to compare.");
            return;
        }
        let _ = writeln!(
            out,
            "Per metric over the runs that define it: medians, Cliff's delta and A12 of the arm against the \
             reference (delta > 0, A12 > 0.5: the arm's values tend to be larger, whichever direction is better), \
             the two-sided Mann–Whitney U p-value (exact or normal approximation, as marked) and the \
             Holm-adjusted p across this arm's metrics. **yes**: adjusted p < 0.05. n/a: a side has no defined \
             value. Metrics zero, equal or undefined in every run are left out (listed under the results table).\n"
        );
        let _ = writeln!(
            out,
            "| arm | metric | median | reference median | Cliff's delta | A12 | p | Holm p | significant |\n\
             | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
        );
        for arm in self.arms().iter().filter(|a| a.arm != reference.arm) {
            for (m, r) in arm.metrics.iter().zip(&reference.metrics) {
                if collapsed.contains(m.def.key) {
                    continue;
                }
                let median = |x: Option<f64>| x.map_or_else(|| NA.to_string(), plain);
                let _ = write!(
                    out,
                    "| `{}` | `{}` | {} | {} |",
                    md_escape(&arm.arm),
                    m.def.key,
                    median(m.median),
                    median(r.median)
                );
                match m.vs_reference {
                    Some(c) => {
                        let _ = writeln!(
                            out,
                            " {} | {} | {} ({}) | {} | {} |",
                            effect(c.cliffs_delta),
                            effect(c.a12),
                            p_value(c.test.p),
                            c.test.method.as_str(),
                            p_value(c.p_holm),
                            if c.significant { "**yes**" } else { "no" }
                        );
                    }
                    None => {
                        let _ = writeln!(out, " {NA} | {NA} | {NA} | {NA} | {NA} |");
                    }
                }
            }
        }
    }

    /// The Pareto front over cost, failure rate and restarts.
    fn markdown_pareto(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "\n## Pareto front\n\nOver the arms' means of `cost_usd`, `failure_rate` and `restarts`, all lower \
             is better: an arm is dominated when another is no worse on all three and better on one. Means, not \
             tests: a small difference in a mean can decide which arm is dominated.\n"
        );
        let _ = writeln!(
            out,
            "| arm | `cost_usd` (USD) | `failure_rate` | `restarts` | Pareto |\n| --- | ---: | ---: | ---: | --- |"
        );
        let value = |x: Option<f64>| x.map_or_else(|| NA.to_string(), plain);
        for e in self.pareto() {
            let status = match &e.status {
                ParetoStatus::OnFront => "**on the front**".to_string(),
                ParetoStatus::Dominated { by } => format!(
                    "dominated by {}",
                    by.iter()
                        .map(|a| format!("`{}`", md_escape(a)))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                ParetoStatus::Undefined => format!("{NA} (an objective is undefined)"),
            };
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {status} |",
                md_escape(&e.point.arm),
                value(e.point.cost_usd),
                value(e.point.failure_rate),
                value(e.point.restarts)
            );
        }
    }
}
