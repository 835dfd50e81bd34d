//! Exit codes: 2 for bad input (a scenario, a flag, an arm), 3 for a
//! regression `compare` found (the gate's verdict, not a failure), 1 for
//! anything else.

use schedlab_core::error::UserInput;
use std::process::ExitCode;

/// Bad input from the user that the binary itself finds (the libraries'
/// come as their crate's `Error`): a flag that does not fit the backend, ...
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

pub const INPUT_ERROR: u8 = 2;

/// `schedlab compare`: NEW is significantly worse than BASE.
pub const REGRESSION: u8 = 3;

/// NEW failed `compare`'s gate: names every metric and by how much. Its
/// own exit code ([`REGRESSION`]) tells it from a failure.
#[derive(Debug, thiserror::Error)]
#[error("NEW is significantly worse than BASE: {0}")]
pub struct Regression(pub String);

/// The one-line message for an error and its causes, as `{err:#}` writes it
/// but without a cause whose text is already in the message: an error that
/// shows its cause and also hands it on as its source (ours, or a
/// library's) would otherwise print the cause twice or three times.
/// Its control characters are escaped (line breaks and tabs aside): the
/// libraries escape what they quote, and this catches what the binary's own
/// context quotes (a scenario or file name from the command line).
pub fn message(err: &anyhow::Error) -> String {
    schedlab_core::text::escape_controls_except(&schedlab_core::error_text::one_line(err.as_ref()), &['\n', '\t'])
        .into_owned()
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
        || says::<schedlab_runner::RunnerError>(cause)
}

/// The exit code for an error: 2 when any cause is the user's input.
pub fn code_for(err: &anyhow::Error) -> ExitCode {
    let is_input = err
        .chain()
        .any(|cause| cause.is::<InputError>() || is_library_input_error(cause));
    if is_input {
        ExitCode::from(INPUT_ERROR)
    } else if err.chain().any(|cause| cause.is::<Regression>()) {
        ExitCode::from(REGRESSION)
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

    /// Each library crate's error as it reaches the binary: under a context,
    /// as the commands hand them on.
    fn code(err: impl std::error::Error + Send + Sync + 'static) -> ExitCode {
        code_for(&anyhow::Error::new(err).context("running the command"))
    }

    fn input() -> ExitCode {
        ExitCode::from(INPUT_ERROR)
    }

    #[test]
    fn every_library_crates_input_errors_exit_2() {
        let json = schedlab_core::json_input::parse_object::<serde_json::Value>("[]").unwrap_err();
        assert_eq!(code(schedlab_core::Error::from(json)), input());
        assert_eq!(code(workloads::load("no-such-scenario", &[]).unwrap_err()), input());
        let Err(arm) = scheduler::arm("no-such-arm", 0) else {
            panic!("an unknown arm was built");
        };
        assert_eq!(code(arm), input());
        let folder = results::run_folder::RunFolderData::load(std::path::Path::new("/no/such/run-folder")).unwrap_err();
        assert_eq!(code(folder), input());
        assert_eq!(code(kube_backend::clock::check_scale(0.0).unwrap_err()), input());
        assert_eq!(code(provisioning::gke::check_zone("us-central1").unwrap_err()), input());
        assert_eq!(code(InputError("--out: a file".into())), input());
    }

    #[test]
    fn every_library_crates_other_errors_exit_1() {
        let failure = ExitCode::FAILURE;
        let sim = schedlab_core::sim::SimError::ZeroSampleInterval;
        assert_eq!(code(schedlab_core::Error::from(sim)), failure);
        // every scenario error is the user's: there is no other kind to test
        let agmarl = scheduler::agmarl::AgmarlError::Poisoned;
        assert_eq!(code(scheduler::Error::from(agmarl)), failure);
        assert_eq!(code(results::Error::from(results::plots::PlotError::Font)), failure);
        assert_eq!(code(kube_backend::Error::Interrupted), failure);
        let interrupted = provisioning::local::ProvisionError::Interrupted;
        assert_eq!(code(provisioning::Error::from(interrupted)), failure);
        assert_eq!(code_for(&anyhow::anyhow!("a bug")), failure);
    }

    #[test]
    fn a_library_error_under_another_error_is_still_found() {
        #[derive(Debug, thiserror::Error)]
        #[error("loading")]
        struct Loading(#[source] workloads::Error);
        let scenario = workloads::load("no-such-scenario", &[]).unwrap_err();
        assert_eq!(code(Loading(scenario)), input());
    }
}
