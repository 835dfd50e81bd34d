//! Exit codes: 2 for bad input (a scenario, a flag, an arm), 1 for anything else.

use std::process::ExitCode;

/// Bad input from the user that is not a scenario error (those come typed
/// from `workloads`): an unknown arm, an unusable `--out`, ...
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

pub const INPUT_ERROR: u8 = 2;

/// The exit code for an error: 2 when any cause is the user's input.
pub fn code_for(err: &anyhow::Error) -> ExitCode {
    let is_input = err.chain().any(|cause| {
        cause.is::<InputError>()
            || cause.is::<workloads::ScenarioError>()
            || cause.is::<scheduler::UnknownScheduler>()
            || cause.is::<scheduler::ArmError>()
            || cause
                .downcast_ref::<clusters::kube::KubeError>()
                .is_some_and(|e| e.is_input_error())
            || cause.is::<clusters::kube::clock::BadTimeScale>()
            || cause
                .downcast_ref::<clusters::provision::kind::KindError>()
                .is_some_and(|e| e.is_input_error())
            || cause
                .downcast_ref::<clusters::provision::gke::GkeError>()
                .is_some_and(|e| e.is_input_error())
            || cause.is::<clusters::provision::gke::PoolsMissing>()
            || cause
                .downcast_ref::<results::report::ReportError>()
                .is_some_and(|e| e.is_input_error())
    });
    if is_input {
        ExitCode::from(INPUT_ERROR)
    } else {
        ExitCode::FAILURE
    }
}
