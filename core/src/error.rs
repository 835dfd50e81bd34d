//! The crate's one error type, and the question every crate's error answers
//! for the command line: was it the user's input?

use crate::behaviour::ModelConfigError;
use crate::dist::DistError;
use crate::json_input::JsonInputError;
use crate::resources::QuantityError;
use crate::sim::{SimBackendError, SimError};

/// Whether an error was caused by what the user handed in (a scenario, a
/// flag, a file), so the command line can exit with 2 rather than 1.
/// Implemented by the one `Error` of every library crate.
pub trait UserInput {
    fn is_input_error(&self) -> bool;
}

/// Every error the core's public API returns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Sim(#[from] SimError),
    #[error(transparent)]
    SimBackend(#[from] SimBackendError),
    #[error(transparent)]
    Quantity(#[from] QuantityError),
    #[error(transparent)]
    JsonInput(#[from] JsonInputError),
    #[error(transparent)]
    Dist(#[from] DistError),
    #[error(transparent)]
    ModelConfig(#[from] ModelConfigError),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Whether the user's input caused it. A timeline reaches the simulator
    /// only after `workloads` checked it, so what the simulator refuses is
    /// schedlab's fault; quantities, JSON documents, distributions and model
    /// settings are what a caller hands in.
    pub fn is_input_error(&self) -> bool {
        match self {
            Error::Sim(_) | Error::SimBackend(_) => false,
            Error::Quantity(_) | Error::JsonInput(_) | Error::Dist(_) | Error::ModelConfig(_) => true,
        }
    }
}

impl UserInput for Error {
    fn is_input_error(&self) -> bool {
        Error::is_input_error(self)
    }
}
