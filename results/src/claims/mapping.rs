//! Which metrics test which of the paper's claims, on which scenarios, and
//! against which arms: the rows of `evaluations/PREREGISTRATION.md`, fixed
//! from the paper's wording before any of them was computed. A claim is not
//! re-mapped to the metrics on which it happens to hold; the mapping changes
//! only with a dated amendment of the pre-registration, and
//! [`super::prereg`] checks the two agree.
//!
//! A row applies to a scenario by the role the scenario declares for the
//! claim (`claims:` in its file, `resolved_scenario.claims` in its run
//! folder), never by the scenario's name: a built-in, a held-out scenario
//! and a user's file are read alike.

use super::ClaimsError;
use super::catalogue::{ClaimName, ClaimRole};
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

impl Direction {
    /// The direction the row states, wherever it comes from.
    pub fn stated(self) -> Better {
        match self {
            Direction::Definition(b) | Direction::Claim(b) => b,
        }
    }
}

/// To which pairs of arms a row applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// every pair
    Always,
    /// only pairs whose two arms both preempt (the invocation manifest's
    /// `arm_facts.<arm>.preempts`); for any other pair the row is "not
    /// applicable", outside the verdict and the Holm family
    BothPreempt,
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
    /// the scenario roles the row applies to
    pub roles: &'static [ClaimRole],
    pub applies: Applies,
}

/// What a regime row requires of its arm's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// the 95% interval of the mean over seeds lies above 0
    IntervalAboveZero,
}

impl Condition {
    pub fn as_str(self) -> &'static str {
        match self {
            Condition::IntervalAboveZero => "interval-above-zero",
        }
    }
}

/// The premise a claim needs before its rows can say anything: on every
/// scenario it applies to, `arm`'s `metric` must meet `condition`, else the
/// claim is "not shown (regime not reached)".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegimeSpec {
    pub arm: &'static str,
    pub metric: &'static str,
    pub condition: Condition,
    pub roles: &'static [ClaimRole],
    pub reading: &'static str,
}

/// One of the paper's claims against the default kube-scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimSpec {
    pub number: u8,
    pub name: ClaimName,
    pub title: &'static str,
    /// the paper's claim, in brief
    pub paper: &'static str,
    pub regime: &'static [RegimeSpec],
    pub rows: &'static [RowSpec],
    /// why a claim without rows is not shown
    pub without_rows: Option<&'static str>,
}

use ClaimRole::{CascadingPressure, ChurnFaults, Stress, StressFaults, VaryingRequests};

const fn row(
    metric: &'static str,
    role: Role,
    better: Better,
    roles: &'static [ClaimRole],
    reading: &'static str,
) -> RowSpec {
    RowSpec {
        metric,
        role,
        direction: Direction::Definition(better),
        reading,
        magnitude: false,
        roles,
        applies: Applies::Always,
    }
}

const LOWER: Better = Better::Lower;
const HIGHER: Better = Better::Higher;
const PRIMARY: Role = Role::Primary;
const GUARD: Role = Role::Guard;

/// The five claims, in the paper's order.
pub const CLAIMS: &[ClaimSpec] = &[
    ClaimSpec {
        number: 1,
        name: ClaimName::Packing,
        title: "smart packing (higher utilisation and throughput, no starvation)",
        paper: "AGMARL packs the cluster's work onto fewer nodes than default, using them more, without losing \
                throughput or starving pods, when resource pressure cascades",
        regime: &[],
        rows: &[
            row(
                "nodes_in_use_mean",
                PRIMARY,
                LOWER,
                &[CascadingPressure],
                "packing puts the work on fewer nodes",
            ),
            row(
                "cpu_util_in_use_mean",
                PRIMARY,
                HIGHER,
                &[CascadingPressure],
                "higher utilisation of the nodes it uses",
            ),
            row(
                "completions_per_hour",
                GUARD,
                HIGHER,
                &[CascadingPressure],
                "packing must not cost completed work",
            ),
            row(
                "pending_time_mean_s",
                GUARD,
                LOWER,
                &[CascadingPressure],
                "no starvation: pods must not wait longer",
            ),
            row(
                "pods_never_bound",
                GUARD,
                LOWER,
                &[CascadingPressure],
                "no starvation: no pod left behind",
            ),
        ],
        without_rows: None,
    },
    ClaimSpec {
        number: 2,
        name: ClaimName::Restraint,
        title: "strategic restraint (head-room, cascades, hotspots, critical work)",
        paper: "AGMARL keeps head-room, prevents cascades, isolates hotspots and serves mission-critical work fast \
                under churn and node faults",
        regime: &[],
        rows: &[
            row(
                "fault_headroom_mean",
                PRIMARY,
                HIGHER,
                &[ChurnFaults],
                "head-room kept while nodes fail",
            ),
            row(
                "oom_pressure_events",
                PRIMARY,
                LOWER,
                &[ChurnFaults],
                "cascades prevented: node-pressure OOM kills",
            ),
            row(
                "failure_concentration",
                PRIMARY,
                HIGHER,
                &[ChurnFaults],
                "hotspots isolated: failures stay on few nodes",
            ),
            RowSpec {
                applies: Applies::BothPreempt,
                ..row(
                    "critical_bind_p99_s",
                    PRIMARY,
                    LOWER,
                    &[ChurnFaults],
                    "mission-critical work served fast",
                )
            },
            row(
                "goodput_pod_hours",
                GUARD,
                HIGHER,
                &[ChurnFaults],
                "restraint must not cost the work done",
            ),
            row(
                "pods_never_bound",
                GUARD,
                LOWER,
                &[ChurnFaults],
                "restraint must not strand pods",
            ),
        ],
        without_rows: None,
    },
    ClaimSpec {
        number: 3,
        name: ClaimName::Decoupling,
        title: "decoupling of memory request and failures",
        paper: "default's memory request correlates with failures (Pearson 0.72), AGMARL's does not",
        regime: &[RegimeSpec {
            arm: "default",
            metric: "mem_failure_partial_pearson",
            condition: Condition::IntervalAboveZero,
            roles: &[VaryingRequests],
            reading: "the paper's premise: default's request correlates with failures within workloads",
        }],
        rows: &[
            RowSpec {
                direction: Direction::Claim(LOWER),
                ..row(
                    "mem_failure_partial_pearson",
                    PRIMARY,
                    LOWER,
                    &[VaryingRequests],
                    "AGMARL's within-workload correlation is below default's (signed)",
                )
            },
            RowSpec {
                direction: Direction::Claim(LOWER),
                magnitude: true,
                ..row(
                    "mem_failure_partial_pearson",
                    GUARD,
                    LOWER,
                    &[VaryingRequests],
                    "and not a strong correlation of the other sign",
                )
            },
        ],
        without_rows: None,
    },
    ClaimSpec {
        number: 4,
        name: ClaimName::Pareto,
        title: "Pareto balance and small cost swings under stress",
        paper: "AGMARL balances cost, failures and restarts better than default, with small cost swings under stress",
        regime: &[],
        rows: &[
            row(
                "pareto_hv",
                PRIMARY,
                HIGHER,
                &[Stress, StressFaults],
                "a better balance of cost, failures and restarts",
            ),
            row(
                "cost_rate_cv",
                PRIMARY,
                LOWER,
                &[Stress, StressFaults],
                "small cost swings",
            ),
            row(
                "fault_cost_rate_cv",
                PRIMARY,
                LOWER,
                &[StressFaults],
                "small cost swings under faults",
            ),
        ],
        without_rows: None,
    },
    ClaimSpec {
        number: 5,
        name: ClaimName::Scaling,
        title: "per-node agents scale where a monolithic agent does not",
        paper: "AGMARL's per-node agents keep their decisions good and fast as the cluster grows, where a monolithic \
                agent does not",
        regime: &[],
        rows: &[],
        without_rows: Some(
            "judged in table D against the monolithic foil `drs` over cluster sizes (`schedlab scaling`), not against the baselines",
        ),
    },
];

/// The arm judged unless `--claims-arm` names another.
pub const DEFAULT_ARM: &str = "agmarl";

/// The controls through the same controller, judged by the same rule and
/// shown beside the judged arm where the folders hold them.
pub const CONTROLS: &[&str] = &["agmarl-untrained", "agmarl-analytic"];

/// The learned ablations, each judged (`--claims-arm`) beside its own
/// untrained twin `<ablation>-untrained`: its controller with the initial
/// weights its training starts from (amendment 8).
pub const ABLATIONS: &[&str] = &["agmarl-nognn", "agmarl-linear", "agmarl-nostress"];

/// The controls shown beside `arm` when it is judged, in this order: an
/// ablation's untrained twin, else [`CONTROLS`] (less `arm` itself).
pub fn controls_of(arm: &str) -> Vec<String> {
    if ABLATIONS.contains(&arm) {
        return vec![format!("{arm}-untrained")];
    }
    CONTROLS.iter().filter(|c| **c != arm).map(|c| c.to_string()).collect()
}

/// The baselines the judged arm is tested against, in this order, where a
/// scenario has them.
pub const BASELINES: &[&str] = &["default", "binpack", "cost-binpack", "target-load", "load-aware"];

/// The baseline of the paper's comparison: its verdict is the claim's.
pub const HEADLINE_BASELINE: &str = "default";

/// One Holm family per table, judged arm and baseline.
pub const HOLM_FAMILY: &str = "table-judged-baseline";

/// The unit of replication of an arm with several training runs.
pub const REPLICATION_UNIT: &str = "training-run";

/// The training seeds the pre-registration registers (the evaluation runs
/// them; the table reads whatever training runs the folders hold).
pub const TRAINING_SEEDS: &[u64] = &[1000, 2000, 3000, 4000, 5000];

/// The evaluation seeds registered, first and last.
pub const EVALUATION_SEEDS: [u64; 2] = [1, 10];

/// The version of the machine-readable block this code reads.
pub const PREREG_VERSION: u64 = 1;

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

    /// Whether the row is tested on a scenario that declares `role` for its claim.
    pub fn applies_to(&self, role: ClaimRole) -> bool {
        self.roles.contains(&role)
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

/// The metric keys the claims name (rows and regimes), each once.
pub fn claim_metrics() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    let keys = CLAIMS
        .iter()
        .flat_map(|c| c.rows.iter().map(|r| r.metric).chain(c.regime.iter().map(|g| g.metric)));
    for key in keys {
        if !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::catalogue::roles;

    #[test]
    fn the_judged_arm_has_both_controls_and_each_ablation_its_twin() {
        assert_eq!(controls_of("agmarl"), CONTROLS);
        for a in ABLATIONS {
            assert_eq!(controls_of(a), [format!("{a}-untrained")]);
        }
        // a control judged itself keeps the other control
        assert_eq!(controls_of("agmarl-untrained"), ["agmarl-analytic"]);
        assert_eq!(controls_of("binpack"), CONTROLS);
    }

    /// Fails loudly when a metric's definition (its key or its better
    /// direction) no longer agrees with the claim mapping above.
    #[test]
    fn every_row_names_a_metric_whose_direction_agrees_with_its_definition() {
        for claim in CLAIMS {
            for row in claim.rows {
                let better = row.better().unwrap_or_else(|e| panic!("claim {}: {e}", claim.number));
                assert_eq!(better, row.direction.stated());
                let def = definitions::find(row.metric).unwrap();
                match row.direction {
                    Direction::Definition(b) => assert_eq!(def.better, b, "{}", row.metric),
                    Direction::Claim(_) => assert_eq!(def.better, Better::Neither, "{}", row.metric),
                }
            }
            for regime in claim.regime {
                assert!(definitions::find(regime.metric).is_some(), "{}", regime.metric);
            }
        }
    }

    #[test]
    fn rows_name_roles_of_their_own_claim_and_claims_are_in_order() {
        for (i, claim) in CLAIMS.iter().enumerate() {
            assert_eq!(usize::from(claim.number), i + 1);
            assert_eq!(claim.name.number(), claim.number);
            assert_eq!(claim.rows.is_empty(), claim.without_rows.is_some());
            for r in claim
                .rows
                .iter()
                .flat_map(|r| r.roles)
                .chain(claim.regime.iter().flat_map(|g| g.roles))
            {
                assert!(roles(claim.name).contains(r), "claim {}: role {r}", claim.number);
            }
        }
        let swings = CLAIMS[3]
            .rows
            .iter()
            .find(|r| r.metric == "fault_cost_rate_cv")
            .unwrap();
        assert!(swings.applies_to(StressFaults) && !swings.applies_to(Stress));
    }

    #[test]
    fn a_disagreeing_direction_is_an_error_naming_both() {
        let wrong = RowSpec {
            direction: Direction::Definition(Better::Higher),
            ..row("cost_usd", Role::Primary, Better::Lower, &[Stress], "")
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
    fn decoupling_tests_the_signed_correlation_and_guards_its_size() {
        let [signed, size] = CLAIMS[2].rows else {
            panic!("two rows")
        };
        assert!(!signed.magnitude && size.magnitude);
        assert_eq!(signed.label(), "mem_failure_partial_pearson");
        assert_eq!(size.label(), "abs(mem_failure_partial_pearson)");
        assert_eq!(signed.value(-0.6), -0.6);
        assert_eq!(size.value(-0.6), 0.6);
        assert_eq!(CLAIMS[2].regime[0].arm, "default");
        assert!(claim_metrics().contains(&"mem_failure_partial_pearson"));
    }
}
