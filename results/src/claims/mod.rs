//! The paper's claims (AGMARL-DKS, arXiv 2603.12031) against the default
//! kube-scheduler, as `evaluations/PREREGISTRATION.md` registers them
//! ([`prereg`] checks the code against it): per claim the rows that test it
//! on the scenarios that declare it ([`mapping`], [`catalogue`]), the judged
//! arm's effect against each baseline with a seeded bootstrap interval and
//! a Mann–Whitney p, by training run where the folders hold several
//! ([`effect`]), Holm-adjusted per judged arm and baseline ([`table`]), a
//! verdict by the registered rule ([`verdict`]) and the controls' verdicts
//! beside it; rendered in every format `schedlab report` writes
//! ([`render`]).

pub mod catalogue;
pub mod effect;
pub mod input;
pub mod learning;
pub mod mapping;
pub mod prereg;
pub mod render;
pub mod table;
pub mod table_d;
pub mod verdict;

pub use catalogue::{ClaimName, ClaimRole, ClaimUse};
pub use input::{ArmValues, ScenarioValues, SeedValues};
pub use learning::{LearningFamily, LearningTest, Scope};
pub use mapping::{
    ABLATIONS, Applies, BASELINES, CLAIMS, CONTROLS, ClaimSpec, DEFAULT_ARM, Direction, HEADLINE_BASELINE, RegimeSpec,
    Role, RowSpec, controls_of,
};
pub use prereg::Registration;
pub use table::{BaselineVerdict, Cell, ClaimResult, ClaimsTable, Family, Judgement, RegimeCheck, Row, ScenarioFacts};
pub use table_d::{TABLE_D, TableD};
pub use verdict::{Outcome, Regime, VERDICT_RULE, Verdict, verdict};

use crate::definitions::Better;

/// The file of the claims table beside the reports.
pub const CLAIMS_JSON: &str = "claims.json";

pub(crate) fn better_name(b: Better) -> &'static str {
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
    #[error(
        "{}: field {field}: {detail}; the claims mapping may only change with a dated amendment of the \
         pre-registration",
        prereg::PREREGISTRATION_PATH
    )]
    Preregistration { field: String, detail: String },
}
