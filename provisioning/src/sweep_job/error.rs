//! The errors of a sweep's Kubernetes objects: a spec that cannot be made
//! into objects names its field and value, and a caller who may not create
//! them learns every missing permission at once, not one per attempt.

use super::CONFIG_MAP_MAX_BYTES;
use kube_backend::KubeError;
use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum SweepJobError {
    /// A field of the spec that Kubernetes or the cell pod cannot use;
    /// `value` is shown as Rust's Debug writes it (strings quoted, control
    /// characters escaped, so the message stays one line).
    #[error("sweep job: {field} = {value}: {why}")]
    Invalid {
        field: &'static str,
        value: String,
        why: String,
    },
    #[error(
        "sweep job: plan_files = {bytes} bytes: the plan is {bytes} bytes with its cell list; a ConfigMap holds at \
         most 1 MiB ({CONFIG_MAP_MAX_BYTES} bytes): split the sweep"
    )]
    PlanTooLarge { bytes: usize },
    #[error("sweep job: writing the objects as YAML: {0}")]
    Yaml(String),
    /// The caller lacks permissions the submission needs, every one named.
    #[error("{}", forbidden_text(namespace, missing))]
    Forbidden { namespace: String, missing: Vec<Denied> },
    #[error(transparent)]
    Kube(#[from] KubeError),
}

/// A permission the API server's authorizer refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    /// e.g. "create jobs.batch", "get pods/log"
    pub permission: String,
    /// the authorizer's reason, or what was checked when it gave none
    pub reason: String,
}

fn forbidden_text(namespace: &str, missing: &[Denied]) -> String {
    let each: Vec<String> = missing
        .iter()
        .map(|d| format!("cannot {} in namespace {namespace}: {}", d.permission, d.reason))
        .collect();
    format!("a sweep cannot be submitted: {}", each.join("; "))
}

impl SweepJobError {
    /// An invalid field: `value` is written with Debug.
    pub(crate) fn invalid(field: &'static str, value: impl fmt::Debug, why: impl Into<String>) -> SweepJobError {
        SweepJobError::Invalid {
            field,
            value: format!("{value:?}"),
            why: why.into(),
        }
    }

    /// Whether the user's input caused it: the sweep's settings, or a
    /// kubeconfig whose identity may not submit; the YAML writer and an
    /// API server that errs are not.
    pub fn is_input_error(&self) -> bool {
        match self {
            SweepJobError::Invalid { .. } | SweepJobError::PlanTooLarge { .. } | SweepJobError::Forbidden { .. } => {
                true
            }
            SweepJobError::Yaml(_) => false,
            SweepJobError::Kube(e) => e.is_input_error(),
        }
    }
}
