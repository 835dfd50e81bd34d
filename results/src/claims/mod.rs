//! The paper's claims (AGMARL-DKS, arXiv 2603.12031) against the default
//! kube-scheduler, computed from the run folders of the claim scenarios:
//! per claim the metrics that test it ([`mapping`]), the judged arm's effect
//! against each baseline with a seeded bootstrap interval and a
//! Holm-adjusted Mann–Whitney p over the whole table ([`table`], [`effect`]),
//! and a verdict by a stated rule ([`verdict`]); rendered in every format
//! `schedlab report` writes ([`render`]).

pub mod catalogue;
pub mod effect;
pub mod input;
pub mod mapping;
pub mod render;
pub mod table;
pub mod verdict;

pub use input::{ArmValues, ScenarioValues, SeedValues};
pub use mapping::{BASELINES, CLAIMS, ClaimSpec, DEFAULT_ARM, Direction, HEADLINE_BASELINE, Role, RowSpec};
pub use table::{BaselineVerdict, Cell, ClaimResult, ClaimsTable, Row, ScenarioFacts};
pub use verdict::{Outcome, VERDICT_RULE, Verdict, verdict};

use crate::definitions::Better;

/// The file of the claims table beside the reports.
pub const CLAIMS_JSON: &str = "claims.json";

fn better_name(b: Better) -> &'static str {
    match b {
        Better::Lower => "lower",
        Better::Higher => "higher",
        Better::Neither => "neither",
    }
}

/// Why the claims table cannot be computed.
#[derive(Debug, thiserror::Error)]
pub enum ClaimsError {
    #[error("the claims name metric {metric}, which no definition has")]
    UnknownMetric { metric: &'static str },
    #[error(
        "the claims mapping says {} is better for {metric}, its definition says {}: the mapping must be reviewed",
        better_name(*mapping),
        better_name(*definition)
    )]
    DirectionMismatch {
        metric: &'static str,
        mapping: Better,
        definition: Better,
    },
    #[error("the arm to judge the claims on (--claims-arm) is empty")]
    EmptyArm,
    #[error("scenario {scenario} is given twice; merge its run folders into one input")]
    DuplicateScenario { scenario: String },
    #[error("not a schedlab summary.json: {what}")]
    SummaryJson { what: String },
}
