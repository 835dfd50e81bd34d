//! Table D as Markdown.

use super::{ScalingTable, Verdict};
use std::fmt::Write as _;

fn num(x: Option<f64>, digits: usize) -> String {
    x.map_or_else(|| "—".to_string(), |v| format!("{v:.digits$}"))
}

fn interval(i: Option<[f64; 2]>) -> String {
    i.map_or_else(|| "—".to_string(), |[a, b]| format!("[{a:.3}, {b:.3}]"))
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Supported => "supported",
            Verdict::Contradicted => "contradicted",
            Verdict::NotShown => "not shown",
        }
    }
}

impl ScalingTable {
    /// The table as the report prints it.
    pub fn to_markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "# Table D: claim 5, scaling (`{}` against `{}`)\n\nVerdict: **{}** (as pre-registered in `{}`, amendment 9 \
             and later, registered {}, SHA-256 {}).\n",
            self.judged,
            self.foil,
            self.verdict.as_str(),
            self.preregistration.path,
            self.preregistration.date,
            self.preregistration.sha256
        );
        let _ = writeln!(
            s,
            "## D1, decision-time growth\n\nExponent b of p99 ∝ N^b (least squares on ln–ln over every run), 95% \
             interval from {} resamples of the seeds within each size.\n",
            super::RESAMPLES
        );
        let _ = writeln!(
            s,
            "| scenario | arm | sizes | runs | median p99 (ms) per size | b | 95% interval |"
        );
        let _ = writeln!(s, "| --- | --- | --- | ---: | --- | ---: | --- |");
        for g in &self.growth {
            for e in &g.exponents {
                let sizes: Vec<String> = e.sizes.iter().map(usize::to_string).collect();
                let medians: Vec<String> = e.p99_median_ms.iter().map(|m| format!("{m:.3}")).collect();
                let _ = writeln!(
                    s,
                    "| {} | {} | {} | {} | {} | {} | {} |",
                    g.scenario,
                    e.arm,
                    sizes.join(", "),
                    e.runs,
                    medians.join(", "),
                    num(e.exponent, 3),
                    interval(e.interval)
                );
            }
            let _ = writeln!(
                s,
                "| {} | b({}) − b({}) | | | | {} | {} → **{}** |",
                g.scenario,
                self.foil,
                self.judged,
                num(g.difference, 3),
                interval(g.difference_interval),
                g.outcome.as_str()
            );
        }
        let _ = writeln!(
            s,
            "\n## D2, quality where both run\n\n`{}` against `{}`, Mann–Whitney over seeds, Holm over every test \
             below.\n",
            self.judged, self.foil
        );
        let _ = writeln!(
            s,
            "| scenario | nodes | metric | {} | {} | Cliff's δ | p (Holm) | outcome |",
            self.judged, self.foil
        );
        let _ = writeln!(s, "| --- | ---: | --- | ---: | ---: | ---: | ---: | --- |");
        for q in &self.quality {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                q.scenario,
                q.nodes,
                q.metric,
                num(q.judged_mean, 3),
                num(q.foil_mean, 3),
                num(q.cliffs_delta, 2),
                num(q.p_holm, 4),
                q.outcome.as_str()
            );
        }
        let _ = writeln!(
            s,
            "\n## Every arm at every size (described, not tested)\n\nMeans over seeds of cost, failures per running \
             pod-hour and node-pressure OOM events; medians over seeds of each run's decision-time p50 and p99.\n"
        );
        let _ = writeln!(
            s,
            "| scenario | nodes | arm | runs | cost_usd | failures_per_running_pod_hour | oom_pressure_events | p50 (ms) | p99 (ms) |"
        );
        let _ = writeln!(s, "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |");
        for a in &self.arms {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                a.scenario,
                a.nodes,
                a.arm,
                a.runs,
                num(a.cost_usd_mean, 3),
                num(a.failures_per_running_pod_hour_mean, 3),
                num(a.oom_pressure_events_mean, 1),
                num(a.decision_p50_median_ms, 4),
                num(a.decision_p99_median_ms, 4)
            );
        }
        let _ = writeln!(s, "\n## D4, training cost of the foil\n");
        let _ = writeln!(
            s,
            "| arm | nodes | parameters | episodes | transitions | wall (s) | peak memory (MiB) | converged after (episodes) | samples to converge | wall to converge (s) |"
        );
        let _ = writeln!(
            s,
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        );
        for t in &self.training {
            let c = t.converged;
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {:.1} | {} | {} | {} | {} |",
                t.arm,
                t.nodes,
                t.parameters,
                t.episodes,
                t.transitions,
                t.wall_seconds,
                t.peak_rss_bytes
                    .map_or_else(|| "—".into(), |b| format!("{:.0}", b as f64 / (1 << 20) as f64)),
                c.map_or_else(|| "—".into(), |c| c.episodes.to_string()),
                c.map_or_else(|| "—".into(), |c| c.transitions.to_string()),
                c.map_or_else(|| "—".into(), |c| format!("{:.1}", c.wall_seconds)),
            );
        }
        if let Some(j) = &self.judged_training {
            let at: Vec<String> = j.trained_at.iter().map(usize::to_string).collect();
            let _ = writeln!(
                s,
                "| {} (one network for every size; trained at {} nodes) | all | {} | {} | {} | {} | — | — | — | — |",
                j.arm,
                at.join(" and "),
                j.parameters,
                j.episodes,
                j.transitions,
                num(j.wall_seconds, 1)
            );
        }
        for (arm, e) in &self.training_exponents {
            let _ = writeln!(
                s,
                "\nExponent of `{arm}`'s wall time to converge in N (one run per size, no interval): {}.",
                num(*e, 2)
            );
        }
        s
    }
}
