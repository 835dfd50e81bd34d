//! The run library's one error type.

use schedlab_core::error::UserInput;

/// Why a run could not be prepared or played. Bad input (an arm, a
/// checkpoint, a file the user named) is told from the rest by
/// [`UserInput::is_input_error`], so that the binary can exit 2 for it.
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// the user's input, said in full
    #[error("{0}")]
    Input(String),
    /// something that should not happen (a thread that panicked)
    #[error("{0}")]
    Failed(String),
    /// what was being done, and why it failed (the cause is the source)
    #[error("{doing}: {source}")]
    While {
        doing: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// the backend that played a run (the simulator, or one over an API server)
    #[error(transparent)]
    Backend(Box<dyn std::error::Error + Send + Sync + 'static>),
    #[error(transparent)]
    Core(#[from] schedlab_core::Error),
    #[error(transparent)]
    Workloads(#[from] workloads::Error),
    #[error(transparent)]
    Scheduler(#[from] scheduler::Error),
    #[error(transparent)]
    Results(#[from] results::Error),
    #[error(transparent)]
    Decisions(#[from] results::decisions::DecisionsError),
    /// a sweep's Kubernetes objects, or the cluster refusing them
    #[error(transparent)]
    SweepJob(#[from] provisioning::sweep_job::SweepJobError),
}

pub type Result<T, E = RunnerError> = std::result::Result<T, E>;

impl UserInput for RunnerError {
    fn is_input_error(&self) -> bool {
        match self {
            RunnerError::Input(_) => true,
            // the source is in the error's chain, where the binary looks
            RunnerError::Failed(_) | RunnerError::While { .. } | RunnerError::Decisions(_) => false,
            // a backend's error says for itself, in the chain
            RunnerError::Backend(_) => false,
            RunnerError::Core(e) => e.is_input_error(),
            RunnerError::Workloads(e) => e.is_input_error(),
            RunnerError::Scheduler(e) => e.is_input_error(),
            RunnerError::Results(e) => e.is_input_error(),
            RunnerError::SweepJob(e) => e.is_input_error(),
        }
    }
}

/// Names what was being done when an error arose, keeping the error as
/// the cause.
pub trait While<T> {
    fn while_doing(self, doing: impl FnOnce() -> String) -> Result<T>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> While<T> for std::result::Result<T, E> {
    fn while_doing(self, doing: impl FnOnce() -> String) -> Result<T> {
        self.map_err(|source| RunnerError::While {
            doing: doing(),
            source: Box::new(source),
        })
    }
}

/// Bad input, said in full.
pub(crate) fn input(text: impl Into<String>) -> RunnerError {
    RunnerError::Input(text.into())
}
