//! The errors of a sweep's Kubernetes objects: a spec that cannot be made
//! into objects names its field and value.

use super::CONFIG_MAP_MAX_BYTES;
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

    /// Whether the user's input caused it: the sweep's settings; the YAML
    /// writer is not.
    pub fn is_input_error(&self) -> bool {
        match self {
            SweepJobError::Invalid { .. } | SweepJobError::PlanTooLarge { .. } => true,
            SweepJobError::Yaml(_) => false,
        }
    }
}
