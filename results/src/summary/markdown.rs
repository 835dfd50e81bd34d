//! The body of report.md.

use super::Summary;
use super::format::{correlation_cell, md_escape, metric_cell};
use crate::definitions::{ACROSS_SEEDS, Better, CORRELATIONS, METRICS, MetricDef};
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
        let _ = writeln!(out, "\nStatistics seed: {}.\n", self.stats_seed());

        let _ = writeln!(out, "## Results\n");
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
            "| arm | seed | pods | Pearson r [{pct}% CI] | Spearman rho [{pct}% CI] |\n| --- | ---: | ---: | ---: | ---: |"
        );
        for arm in self.arms() {
            for (run, c) in arm.runs.iter().zip(&arm.correlations) {
                let _ = writeln!(
                    out,
                    "| `{}` | {} | {} | {} | {} |",
                    md_escape(&arm.arm),
                    run.seed,
                    c.n,
                    correlation_cell(c.pearson.as_ref()),
                    correlation_cell(c.spearman.as_ref())
                );
            }
        }

        let _ = writeln!(
            out,
            "\n## Definitions\n\n### Across seeds\n\n{ACROSS_SEEDS}\n\n### Metrics of a run\n"
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
}
