//! The regression gate: is a NEW run folder significantly worse than a BASE
//! one? Arms are matched by name; on every gated metric NEW is "worse" when
//! its mean moved in the metric's bad direction by more than a relative
//! margin AND a two-sided Mann–Whitney test over the per-seed values is
//! significant at [`SIGNIFICANCE`]. Both are needed: a tiny but consistent
//! shift is not a regression, nor is a large shift that one noisy seed made.

mod table;

use crate::definitions::{Better, find};
use crate::stats::{PMethod, mann_whitney};
use crate::summary::{MetricStats, Summary};
use serde::Serialize;

/// The metrics gated when none are named. Never the decision_time_*
/// metrics: wall-clock time depends on the machine and its load, so two
/// folders from different machines would "regress" on them.
pub const DEFAULT_GATED: &[&str] = &[
    "cost_usd",
    "failure_rate",
    "restarts",
    "evictions",
    "pods_pending_end",
    "sched_latency_p99_s",
];

/// A p-value below this is significant.
pub const SIGNIFICANCE: f64 = 0.05;

/// What the gate concluded for one arm and metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// beyond the margin in the bad direction and significant: fails the gate
    Worse,
    /// beyond the margin in the good direction and significant
    Better,
    /// beyond the margin in the bad direction, but not significant
    WorseNotSignificant,
    /// within the margin (whatever the test says)
    Unchanged,
    /// beyond the margin in the good direction, but not significant
    BetterNotSignificant,
    /// undefined in every run of one side, so nothing to compare
    Undefined,
    /// the metric has no better direction, so it cannot regress
    NoDirection,
    /// not a metric schedlab knows
    UnknownMetric,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Worse => "WORSE",
            Verdict::Better => "better",
            Verdict::WorseNotSignificant => "worse, not significant",
            Verdict::Unchanged => "within margin",
            Verdict::BetterNotSignificant => "better, not significant",
            Verdict::Undefined => "n/a (undefined)",
            Verdict::NoDirection => "n/a (no direction)",
            Verdict::UnknownMetric => "n/a (unknown metric)",
        }
    }
}

/// One arm and gated metric, BASE against NEW.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareRow {
    pub arm: String,
    pub metric: String,
    pub unit: &'static str,
    /// runs defining the metric on each side
    pub base_n: usize,
    pub new_n: usize,
    pub base_mean: Option<f64>,
    pub new_mean: Option<f64>,
    /// (new - base) / |base|; `None` where base is 0 and new is not, or
    /// either mean is undefined
    pub relative_change: Option<f64>,
    pub p_value: Option<f64>,
    pub test: Option<PMethod>,
    pub verdict: Verdict,
}

impl CompareRow {
    /// "restarts of arm default: 12 -> 20.5 (+70.8%, p = 0.029, exact)"
    pub fn describe(&self) -> String {
        format!(
            "{} of arm {}: {} -> {} ({}, p = {}{})",
            self.metric,
            self.arm,
            table::number(self.base_mean),
            table::number(self.new_mean),
            table::change(self.relative_change, self.base_mean, self.new_mean),
            table::p_value(self.p_value),
            self.test.map(|t| format!(", {}", t.as_str())).unwrap_or_default()
        )
    }
}

/// Everything the gate found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompareOutcome {
    pub margin: f64,
    pub gated: Vec<String>,
    /// per arm present in both, per gated metric, in BASE's arm order
    pub rows: Vec<CompareRow>,
    pub only_in_base: Vec<String>,
    pub only_in_new: Vec<String>,
    /// warnings a reader needs, e.g. too few seeds for any test to be significant
    pub notes: Vec<String>,
}

impl CompareOutcome {
    /// The rows that fail the gate.
    pub fn regressions(&self) -> Vec<&CompareRow> {
        self.rows.iter().filter(|r| r.verdict == Verdict::Worse).collect()
    }
    pub fn is_regression(&self) -> bool {
        self.rows.iter().any(|r| r.verdict == Verdict::Worse)
    }
    /// The table `schedlab compare` prints.
    pub fn to_table(&self) -> String {
        table::render(self)
    }
}

/// The smallest two-sided p-value an exact Mann–Whitney test can give for
/// samples of `m` and `n` without ties: the two extreme arrangements out of
/// C(m+n, m).
pub fn smallest_exact_p(m: usize, n: usize) -> f64 {
    if m == 0 || n == 0 {
        return 1.0;
    }
    // C(m+n, m) as a running product, exact enough in f64 for any seed count
    let arrangements = (1..=m).fold(1.0_f64, |c, i| c * (n + i) as f64 / i as f64);
    (2.0 / arrangements).min(1.0)
}

fn defined(m: Option<&MetricStats>) -> Vec<f64> {
    m.map(|m| m.values.iter().filter_map(|(_, v)| *v).collect())
        .unwrap_or_default()
}

/// Compares every arm present in both summaries on each `gated` metric
/// (see the module doc); `margin` is relative (0.05 = 5%).
pub fn compare(base: &Summary, new: &Summary, margin: f64, gated: &[&str]) -> CompareOutcome {
    let margin = if margin.is_finite() { margin.max(0.0) } else { 0.0 };
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for base_arm in base.arms() {
        let Some(new_arm) = new.arm(&base_arm.arm) else {
            continue;
        };
        let (m, n) = (base_arm.runs.len(), new_arm.runs.len());
        if smallest_exact_p(m, n) >= SIGNIFICANCE {
            notes.push(format!(
                "arm {}: with {m} and {n} runs the smallest possible p is {}, so no change can be significant at \
                 {SIGNIFICANCE}; use at least 4 seeds on each side",
                base_arm.arm,
                table::p_value(Some(smallest_exact_p(m, n)))
            ));
        }
        for &key in gated {
            rows.push(compare_metric(
                &base_arm.arm,
                key,
                base_arm.metric(key),
                new_arm.metric(key),
                margin,
            ));
        }
    }
    let only_in_base = base
        .arms()
        .iter()
        .filter(|a| new.arm(&a.arm).is_none())
        .map(|a| a.arm.clone())
        .collect();
    let only_in_new = new
        .arms()
        .iter()
        .filter(|a| base.arm(&a.arm).is_none())
        .map(|a| a.arm.clone())
        .collect();
    CompareOutcome {
        margin,
        gated: gated.iter().map(|k| k.to_string()).collect(),
        rows,
        only_in_base,
        only_in_new,
        notes,
    }
}

fn compare_metric(
    arm: &str,
    key: &str,
    base: Option<&MetricStats>,
    new: Option<&MetricStats>,
    margin: f64,
) -> CompareRow {
    let (a, b) = (defined(base), defined(new));
    let base_mean = crate::stats::mean(&a);
    let new_mean = crate::stats::mean(&b);
    let relative_change = match (base_mean, new_mean) {
        (Some(x), Some(y)) if x != 0.0 => Some((y - x) / x.abs()),
        (Some(_), Some(0.0)) => Some(0.0),
        _ => None,
    };
    let test = mann_whitney(&a, &b);
    let mut row = CompareRow {
        arm: arm.to_string(),
        metric: key.to_string(),
        unit: "",
        base_n: a.len(),
        new_n: b.len(),
        base_mean,
        new_mean,
        relative_change,
        p_value: test.map(|t| t.p),
        test: test.map(|t| t.method),
        verdict: Verdict::Undefined,
    };
    let Some(def) = find(key) else {
        row.verdict = Verdict::UnknownMetric;
        return row;
    };
    row.unit = def.unit;
    let (Some(x), Some(y)) = (base_mean, new_mean) else {
        return row;
    };
    // positive: moved in the bad direction
    let worse_by = match def.better {
        Better::Lower => y - x,
        Better::Higher => x - y,
        Better::Neither => {
            row.verdict = Verdict::NoDirection;
            return row;
        }
    };
    // from a base of zero any move is beyond a relative margin
    let beyond = if x == 0.0 {
        worse_by != 0.0
    } else {
        worse_by.abs() / x.abs() > margin
    };
    let significant = row.p_value.is_some_and(|p| p < SIGNIFICANCE);
    row.verdict = match (beyond, worse_by > 0.0, significant) {
        (false, _, _) => Verdict::Unchanged,
        (true, true, true) => Verdict::Worse,
        (true, true, false) => Verdict::WorseNotSignificant,
        (true, false, true) => Verdict::Better,
        (true, false, false) => Verdict::BetterNotSignificant,
    };
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::summary::RunResult;

    #[test]
    fn machine_dependent_metrics_are_not_gated_by_default() {
        assert!(DEFAULT_GATED.iter().all(|k| !k.starts_with("decision_time")));
        assert!(DEFAULT_GATED.iter().all(|k| find(k).is_some()));
    }
    use crate::test_records::{metrics_of, synthetic_run};

    fn summary(arm_crashes: &[(&str, u32)], seeds: std::ops::Range<u64>) -> Summary {
        let runs = arm_crashes
            .iter()
            .flat_map(|&(arm, crashes)| {
                seeds.clone().map(move |seed| RunResult {
                    arm: arm.to_string(),
                    seed,
                    training_run: None,
                    metrics: metrics_of(&synthetic_run(seed, crashes)).unwrap(),
                    correlations: None,
                })
            })
            .collect();
        Summary::new("synthetic", runs, 7)
    }

    #[test]
    fn smallest_p_counts_the_extreme_arrangements() {
        assert!((smallest_exact_p(3, 3) - 0.1).abs() < 1e-12);
        assert!((smallest_exact_p(4, 4) - 2.0 / 70.0).abs() < 1e-12);
        assert_eq!(smallest_exact_p(1, 1), 1.0);
        assert_eq!(smallest_exact_p(0, 5), 1.0);
    }

    #[test]
    fn a_summary_against_itself_passes() {
        let s = summary(&[("default", 1), ("binpack", 2)], 1..5);
        let out = compare(&s, &s, 0.05, DEFAULT_GATED);
        assert!(!out.is_regression(), "{}", out.to_table());
        assert_eq!(out.rows.len(), 2 * DEFAULT_GATED.len());
        let restarts = out.rows.iter().find(|r| r.metric == "restarts").unwrap();
        assert_eq!(restarts.verdict, Verdict::Unchanged);
        assert_eq!(restarts.relative_change, Some(0.0));
        assert!(out.notes.is_empty(), "{:?}", out.notes);
    }

    #[test]
    fn more_crashes_on_every_seed_fail_the_gate_on_restarts() {
        let base = summary(&[("default", 1)], 1..5);
        let new = summary(&[("default", 4)], 1..5);
        let out = compare(&base, &new, 0.05, DEFAULT_GATED);
        assert!(out.is_regression());
        let worse = out.regressions();
        assert!(worse.iter().any(|r| r.metric == "restarts"), "{}", out.to_table());
        let r = worse.iter().find(|r| r.metric == "restarts").unwrap();
        assert!(r.relative_change.unwrap() > 1.0);
        assert!(r.test.is_some(), "{r:?}");
        assert!(r.describe().contains("restarts of arm default"), "{}", r.describe());
        // the other way round it is an improvement, not a regression
        let back = compare(&new, &base, 0.05, DEFAULT_GATED);
        assert!(!back.is_regression());
        assert!(
            back.rows
                .iter()
                .any(|r| r.metric == "restarts" && r.verdict == Verdict::Better)
        );
        // a margin larger than the change lets it through
        assert!(!compare(&base, &new, 10.0, DEFAULT_GATED).is_regression());
    }

    #[test]
    fn three_seeds_cannot_be_significant_and_say_so() {
        let base = summary(&[("default", 1)], 1..4);
        let new = summary(&[("default", 4)], 1..4);
        let out = compare(&base, &new, 0.05, &["restarts"]);
        assert!(!out.is_regression());
        assert_eq!(out.rows[0].verdict, Verdict::WorseNotSignificant);
        assert!(out.notes[0].contains("at least 4 seeds"), "{:?}", out.notes);
    }

    #[test]
    fn unmatched_arms_and_odd_metrics_are_reported_not_gated() {
        let base = summary(&[("default", 1), ("random", 1)], 1..5);
        let new = summary(&[("default", 1), ("agmarl", 1)], 1..5);
        let out = compare(&base, &new, 0.05, &["pods_created", "no_such_metric"]);
        assert_eq!(out.only_in_base, vec!["random"]);
        assert_eq!(out.only_in_new, vec!["agmarl"]);
        assert_eq!(out.rows.len(), 2);
        assert_eq!(out.rows[0].verdict, Verdict::NoDirection);
        assert_eq!(out.rows[1].verdict, Verdict::UnknownMetric);
        assert!(!out.is_regression());
        assert!(out.to_table().contains("no_such_metric"));
    }
}
