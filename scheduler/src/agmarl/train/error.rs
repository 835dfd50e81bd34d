//! The error type of training.

use crate::agmarl::error::AgmarlError;

/// Training failed.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// A network could not be built or run.
    #[error(transparent)]
    Network(#[from] AgmarlError),
    /// A tensor operation of a loss or an optimiser step failed.
    #[error("tensor operation failed: {0}")]
    Candle(#[from] candle_core::Error),
    /// A transition whose parts do not fit together (a bug in whoever built it).
    #[error("invalid transition: {0}")]
    Transition(String),
    /// Settings training cannot run with.
    #[error("invalid training settings: {0}")]
    Config(String),
}
