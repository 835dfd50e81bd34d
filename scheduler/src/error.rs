//! The crate's one error type: every error its public API returns.

use crate::agmarl::checkpoint::CheckpointError;
use crate::agmarl::error::AgmarlError;
use crate::agmarl::policy::AgmarlConfigError;
use crate::agmarl::restraint::RestraintConfigError;
use crate::agmarl::stress::StressConfigError;
use crate::agmarl::train::TrainError;
use crate::profile::file::ProfileFileError;
use crate::registry::{ArmError, UnknownScheduler};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Arm(#[from] ArmError),
    #[error(transparent)]
    UnknownScheduler(#[from] UnknownScheduler),
    #[error(transparent)]
    Checkpoint(#[from] CheckpointError),
    #[error(transparent)]
    Agmarl(#[from] AgmarlError),
    #[error(transparent)]
    AgmarlConfig(#[from] AgmarlConfigError),
    #[error(transparent)]
    StressConfig(#[from] StressConfigError),
    #[error(transparent)]
    RestraintConfig(#[from] RestraintConfigError),
    #[error(transparent)]
    Train(#[from] TrainError),
    #[error(transparent)]
    ProfileFile(#[from] ProfileFileError),
    #[error(transparent)]
    Drs(#[from] crate::drs::DrsError),
    #[error(transparent)]
    Extender(#[from] crate::extender::ExtenderError),
}

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Whether the user's input caused it: an arm name, a checkpoint file,
    /// controller or training settings. An arm whose bundled checkpoint does
    /// not load is reported as the arm's fault, as it always was.
    pub fn is_input_error(&self) -> bool {
        match self {
            Error::Arm(_)
            | Error::UnknownScheduler(_)
            | Error::AgmarlConfig(_)
            | Error::StressConfig(_)
            | Error::RestraintConfig(_)
            | Error::ProfileFile(_)
            | Error::Extender(_) => true,
            Error::Checkpoint(e) => checkpoint_is_input(e),
            Error::Agmarl(e) => agmarl_is_input(e),
            Error::Train(e) => match e {
                TrainError::Network(e) => agmarl_is_input(e),
                TrainError::Config(_) => true,
                TrainError::Candle(_) | TrainError::Transition(_) => false,
            },
            Error::Drs(e) => drs_is_input(e),
        }
    }
}

/// A DRS checkpoint, its size and its training settings are the user's;
/// a tensor operation or the disk failing is not (as for AGMARL checkpoints).
fn drs_is_input(e: &crate::drs::DrsError) -> bool {
    use crate::drs::DrsError as E;
    match e {
        E::Candle(_) => false,
        E::Io { .. } => false,
        E::Size(_)
        | E::Config { .. }
        | E::ClusterSize { .. }
        | E::Missing { .. }
        | E::Damaged { .. }
        | E::Sidecar { .. }
        | E::Version { .. }
        | E::Tensor { .. } => true,
    }
}

impl schedlab_core::error::UserInput for Error {
    fn is_input_error(&self) -> bool {
        Error::is_input_error(self)
    }
}

/// A checkpoint file is the user's, except when the disk or the network
/// under it fails.
fn checkpoint_is_input(e: &CheckpointError) -> bool {
    match e {
        CheckpointError::Missing { .. }
        | CheckpointError::Damaged { .. }
        | CheckpointError::Sidecar { .. }
        | CheckpointError::Digest { .. }
        | CheckpointError::FormatVersion { .. }
        | CheckpointError::SchemaVersion { .. }
        | CheckpointError::MissingTensor { .. }
        | CheckpointError::TensorShape { .. }
        | CheckpointError::TensorDtype { .. }
        | CheckpointError::UnexpectedTensors { .. } => true,
        CheckpointError::Io { .. } | CheckpointError::Network { .. } => false,
    }
}

/// Hyperparameters come from the user's settings; the rest is schedlab's.
fn agmarl_is_input(e: &AgmarlError) -> bool {
    match e {
        AgmarlError::Hyper(_) => true,
        AgmarlError::Candle(_) | AgmarlError::Shape { .. } | AgmarlError::Index { .. } | AgmarlError::Poisoned => false,
    }
}
