//! Exit codes: 2 for bad input (a scenario, a flag, an arm), 1 for anything else.

use schedlab_core::error::UserInput;
use std::process::ExitCode;

/// Bad input from the user that the binary itself finds (the libraries'
/// come as their crate's `Error`): a flag that does not fit the backend, ...
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

pub const INPUT_ERROR: u8 = 2;

/// The one-line message for an error and its causes, as `{err:#}` writes it
/// but without a cause whose text is already in the message: an error that
/// shows its cause and also hands it on as its source (ours, or a
/// library's) would otherwise print the cause twice or three times.
pub fn message(err: &anyhow::Error) -> String {
    schedlab_core::error_text::one_line(err.as_ref())
}

/// Whether `cause` is a library crate's error that says the user's input
/// caused it. Every library crate returns its one `Error` from its public
/// API, and each is asked here: a crate missing from this list would make
/// its input errors exit 1.
fn is_library_input_error(cause: &(dyn std::error::Error + 'static)) -> bool {
    fn says<E: UserInput + std::error::Error + 'static>(cause: &(dyn std::error::Error + 'static)) -> bool {
        cause.downcast_ref::<E>().is_some_and(UserInput::is_input_error)
    }
    says::<schedlab_core::Error>(cause)
        || says::<workloads::Error>(cause)
        || says::<scheduler::Error>(cause)
        || says::<results::Error>(cause)
        || says::<kube_backend::Error>(cause)
        || says::<provisioning::Error>(cause)
}

/// The exit code for an error: 2 when any cause is the user's input.
pub fn code_for(err: &anyhow::Error) -> ExitCode {
    let is_input = err
        .chain()
        .any(|cause| cause.is::<InputError>() || is_library_input_error(cause));
    if is_input {
        ExitCode::from(INPUT_ERROR)
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("records r.jsonl line 3: {source}")]
    struct ShowsAndHandsOn {
        #[source]
        source: std::io::Error,
    }

    #[test]
    fn a_cause_already_shown_is_not_repeated() {
        let io = std::io::Error::other("disk on fire");
        let err = anyhow::Error::new(ShowsAndHandsOn { source: io }).context("reporting on rf");
        assert_eq!(message(&err), "reporting on rf: records r.jsonl line 3: disk on fire");
    }

    #[test]
    fn distinct_causes_are_all_shown_in_order() {
        let err = anyhow::anyhow!("inner").context("middle").context("outer");
        assert_eq!(message(&err), "outer: middle: inner");
    }
}
