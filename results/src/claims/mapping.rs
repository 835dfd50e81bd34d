//! Which metrics test which of the paper's claims. Fixed from the paper's
//! wording (AGMARL-DKS, arXiv 2603.12031), before any result was looked at:
//! a claim is not re-mapped to the metrics on which it happens to hold.

use super::ClaimsError;
use crate::definitions::{self, Better};

/// What a row of a claim does in its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// the claim needs the arm significantly better here
    Primary,
    /// the claim must not be bought by being significantly worse here
    Guard,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Primary => "primary",
            Role::Guard => "guard",
        }
    }
}

/// The better direction of a row, and where it comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// the metric's definition names this direction; the mapping states it
    /// too, so that a definition changing direction breaks loudly
    Definition(Better),
    /// the definition names no direction (a correlation is not better or
    /// worse in itself); the claim's wording sets it
    Claim(Better),
}

/// One metric of a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowSpec {
    pub metric: &'static str,
    pub role: Role,
    pub direction: Direction,
    /// what the row stands for in the claim's wording
    pub reading: &'static str,
    /// the row tests the size of the metric, its absolute value: a
    /// correlation's distance from zero, whatever its sign
    pub magnitude: bool,
    /// the scenarios of the claim the row is tested on, when not all: a
    /// metric that only some of them can define (the fault window's cost
    /// swings need a scenario with faults)
    pub only: Option<&'static [&'static str]>,
}

/// One of the paper's claims against the default kube-scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimSpec {
    pub number: u8,
    pub title: &'static str,
    /// the paper's claim, in brief
    pub paper: &'static str,
    /// every scenario of the claim; each row is tested on each of them
    pub scenarios: &'static [&'static str],
    pub rows: &'static [RowSpec],
}

const fn lower(metric: &'static str, role: Role, reading: &'static str) -> RowSpec {
    RowSpec {
        metric,
        role,
        direction: Direction::Definition(Better::Lower),
        reading,
        magnitude: false,
        only: None,
    }
}

/// The four claims, in the paper's order.
pub const CLAIMS: &[ClaimSpec] = &[
    ClaimSpec {
        number: 1,
        title: "smart packing under cascading resource pressure",
        paper: "AGMARL packs the cluster's work onto fewer nodes than default when resource pressure cascades",
        scenarios: &["pressure"],
        rows: &[
            lower("nodes_in_use_mean", Role::Primary, "fewer nodes in use"),
            lower("failure_rate", Role::Guard, "packing does not cost failures"),
        ],
    },
    ClaimSpec {
        number: 2,
        title: "strategic restraint under churn and faults",
        paper: "AGMARL keeps head-room, prevents cascades, isolates hotspots and serves mission-critical work fast \
                under churn and node faults",
        scenarios: &["churn"],
        rows: &[
            lower(
                "failures_per_running_pod_hour",
                Role::Primary,
                "fewer failures for the work done",
            ),
            lower("oom_pressure_events", Role::Primary, "fewer OOM cascades"),
            lower("critical_bind_p99_s", Role::Primary, "mission-critical pods bound fast"),
            lower("pods_pending_end", Role::Guard, "restraint does not strand pods"),
        ],
    },
    ClaimSpec {
        number: 3,
        title: "decoupling of memory request and failures",
        paper: "default's memory request correlates with failures (Pearson 0.72), AGMARL's does not",
        scenarios: &["churn", "pressure"],
        rows: &[RowSpec {
            metric: "mem_failure_pearson",
            role: Role::Primary,
            direction: Direction::Claim(Better::Lower),
            reading: "a weaker correlation of memory request with failures",
            // "does not correlate" is a correlation near zero: a strongly
            // negative one couples as much as a strongly positive one
            magnitude: true,
            only: None,
        }],
    },
    ClaimSpec {
        number: 4,
        title: "Pareto balance and small cost swings",
        paper: "AGMARL balances cost, failures and restarts better than default, with small cost swings under stress",
        scenarios: &["churn", "pressure"],
        rows: &[
            lower("cost_usd", Role::Primary, "cheaper"),
            lower("failures", Role::Primary, "fewer failures"),
            lower("restarts", Role::Primary, "fewer restarts"),
            // `pressure` injects no node faults, so it has no fault window
            RowSpec {
                only: Some(&["churn"]),
                ..lower("fault_cost_rate_cv", Role::Primary, "smaller cost swings under faults")
            },
        ],
    },
];

/// The arm judged unless `--claims-arm` names another.
pub const DEFAULT_ARM: &str = "agmarl";

/// The baselines the judged arm is tested against, in this order, where a
/// scenario has them.
pub const BASELINES: &[&str] = &["default", "binpack", "cost-binpack", "target-load", "load-aware"];

/// The baseline of the paper's comparison: its verdict is the claim's.
pub const HEADLINE_BASELINE: &str = "default";

/// Every scenario some claim is tested on.
pub fn claim_scenarios() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for s in CLAIMS.iter().flat_map(|c| c.scenarios) {
        if !out.contains(s) {
            out.push(s);
        }
    }
    out
}

impl RowSpec {
    /// How the row's quantity is named: the metric, or `abs(metric)`.
    pub fn label(&self) -> String {
        if self.magnitude {
            format!("abs({})", self.metric)
        } else {
            self.metric.to_string()
        }
    }

    /// The row's value of a metric value: itself, or its absolute value.
    pub fn value(&self, x: f64) -> f64 {
        if self.magnitude { x.abs() } else { x }
    }

    /// Whether the row is tested on `scenario` (one of its claim's).
    pub fn applies_to(&self, scenario: &str) -> bool {
        self.only.is_none_or(|only| only.contains(&scenario))
    }

    /// The direction in which the row is better: the definition's own where it
    /// names one (and then it must be the one the mapping states), the
    /// claim's where it names none.
    pub fn better(&self) -> Result<Better, ClaimsError> {
        let def = definitions::find(self.metric).ok_or(ClaimsError::UnknownMetric { metric: self.metric })?;
        match (self.direction, def.better) {
            (Direction::Definition(expected), actual) if expected == actual => Ok(actual),
            (Direction::Definition(expected), actual) => Err(ClaimsError::DirectionMismatch {
                metric: self.metric,
                mapping: expected,
                definition: actual,
            }),
            (Direction::Claim(b), Better::Neither) if b != Better::Neither => Ok(b),
            (Direction::Claim(b), actual) => Err(ClaimsError::DirectionMismatch {
                metric: self.metric,
                mapping: b,
                definition: actual,
            }),
        }
    }

    /// Whether the direction is the claim's (the definition names none).
    pub fn direction_from_claim(&self) -> bool {
        matches!(self.direction, Direction::Claim(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fails loudly when a metric's definition (its key or its better
    /// direction) no longer agrees with the claim mapping above.
    #[test]
    fn every_row_names_a_metric_whose_direction_agrees_with_the_summary() {
        for claim in CLAIMS {
            for row in claim.rows {
                let better = row.better().unwrap_or_else(|e| panic!("claim {}: {e}", claim.number));
                assert_eq!(better, Better::Lower, "every row of the mapping is lower-is-better");
                let def = definitions::find(row.metric).unwrap();
                match row.direction {
                    Direction::Definition(b) => assert_eq!(def.better, b, "{}", row.metric),
                    Direction::Claim(_) => assert_eq!(def.better, Better::Neither, "{}", row.metric),
                }
            }
        }
    }

    #[test]
    fn a_row_restricted_to_some_scenarios_applies_to_those_only() {
        let claim4 = CLAIMS.iter().find(|c| c.number == 4).unwrap();
        let swings = claim4.rows.iter().find(|r| r.metric == "fault_cost_rate_cv").unwrap();
        assert!(swings.applies_to("churn") && !swings.applies_to("pressure"));
        let cost = claim4.rows.iter().find(|r| r.metric == "cost_usd").unwrap();
        assert!(cost.applies_to("churn") && cost.applies_to("pressure"));
        // a restriction names scenarios of its claim
        for claim in CLAIMS {
            for row in claim.rows {
                for s in row.only.unwrap_or_default() {
                    assert!(
                        claim.scenarios.contains(s),
                        "claim {}: {} on {s}",
                        claim.number,
                        row.metric
                    );
                }
            }
        }
    }

    #[test]
    fn a_disagreeing_direction_is_an_error_naming_both() {
        let wrong = RowSpec {
            metric: "cost_usd",
            role: Role::Primary,
            direction: Direction::Definition(Better::Higher),
            reading: "",
            magnitude: false,
            only: None,
        };
        let err = wrong.better().unwrap_err().to_string();
        assert!(
            err.contains("cost_usd") && err.contains("higher") && err.contains("lower"),
            "{err}"
        );
        let overridden = RowSpec {
            direction: Direction::Claim(Better::Higher),
            ..wrong
        };
        assert!(
            overridden.better().is_err(),
            "a claim may not override a definition's direction"
        );
        let unknown = RowSpec {
            metric: "happiness",
            ..wrong
        };
        assert!(matches!(unknown.better(), Err(ClaimsError::UnknownMetric { .. })));
    }

    #[test]
    fn decoupling_is_tested_on_the_size_of_the_correlation() {
        let claim3 = CLAIMS.iter().find(|c| c.number == 3).unwrap();
        let row = &claim3.rows[0];
        assert!(row.magnitude);
        assert_eq!(row.label(), "abs(mem_failure_pearson)");
        // a strong negative correlation couples as much as a positive one
        assert_eq!(row.value(-0.6), 0.6);
        assert!(row.value(-0.6) > row.value(0.3));
        let cost = &CLAIMS[3].rows[0];
        assert_eq!((cost.label(), cost.value(-2.0)), ("cost_usd".to_string(), -2.0));
    }

    #[test]
    fn the_mapping_is_the_one_fixed_from_the_paper() {
        let rows = |n: usize| -> Vec<(&str, Role)> { CLAIMS[n].rows.iter().map(|r| (r.metric, r.role)).collect() };
        assert_eq!(CLAIMS[0].scenarios, ["pressure"]);
        assert_eq!(
            rows(0),
            [("nodes_in_use_mean", Role::Primary), ("failure_rate", Role::Guard)]
        );
        assert_eq!(CLAIMS[1].scenarios, ["churn"]);
        assert_eq!(
            rows(1),
            [
                ("failures_per_running_pod_hour", Role::Primary),
                ("oom_pressure_events", Role::Primary),
                ("critical_bind_p99_s", Role::Primary),
                ("pods_pending_end", Role::Guard)
            ]
        );
        assert_eq!(CLAIMS[2].scenarios, ["churn", "pressure"]);
        assert_eq!(rows(2), [("mem_failure_pearson", Role::Primary)]);
        assert_eq!(CLAIMS[3].scenarios, ["churn", "pressure"]);
        let keys: Vec<&str> = CLAIMS[3].rows.iter().map(|r| r.metric).collect();
        assert_eq!(keys, ["cost_usd", "failures", "restarts", "fault_cost_rate_cv"]);
        assert_eq!(claim_scenarios(), ["pressure", "churn"]);
    }
}
