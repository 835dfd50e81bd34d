//! The crate's one error type: every error its public API returns.

use crate::external::ExternalError;
use crate::faults::FaultError;
use crate::gke::{GkeError, PoolsMissing};
use crate::images::ImageError;
use crate::kind::KindError;
use crate::kubelets::KubeletError;
use crate::local::ProvisionError;
use crate::real_cluster::up::UpError;
use crate::scheduler_deploy::DeployError;
use crate::sweep_job::SweepJobError;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Local(#[from] ProvisionError),
    #[error(transparent)]
    Kind(#[from] KindError),
    #[error(transparent)]
    Gke(#[from] GkeError),
    #[error(transparent)]
    PoolsMissing(#[from] PoolsMissing),
    /// boxed: a deploy error is large and rare, the others are common
    #[error(transparent)]
    Deploy(Box<DeployError>),
    #[error(transparent)]
    Fault(#[from] FaultError),
    #[error(transparent)]
    External(#[from] ExternalError),
    #[error(transparent)]
    Kube(#[from] kube_backend::Error),
    #[error(transparent)]
    Up(#[from] UpError),
    #[error(transparent)]
    Image(#[from] ImageError),
    #[error(transparent)]
    Kubelets(#[from] KubeletError),
    #[error(transparent)]
    BadSetting(#[from] crate::provider::BadSetting),
    #[error(transparent)]
    SweepJob(#[from] SweepJobError),
}

pub type Result<T> = std::result::Result<T, Error>;

impl From<DeployError> for Error {
    fn from(e: DeployError) -> Error {
        Error::Deploy(Box::new(e))
    }
}

impl Error {
    /// Whether the user's input caused it: a scenario the cluster cannot
    /// hold, a bad flag, a kubeconfig or server that does not answer. A
    /// command or process that fails, and the machine under it, are not.
    pub fn is_input_error(&self) -> bool {
        match self {
            Error::Local(_) | Error::External(_) => false,
            Error::Kind(e) => e.is_input_error(),
            Error::Gke(e) => e.is_input_error(),
            Error::PoolsMissing(_) => true,
            Error::Deploy(e) => match e.as_ref() {
                DeployError::Apply(e) => e.is_input_error(),
                DeployError::Render { .. }
                | DeployError::NoSchedulerImage { .. }
                | DeployError::NoSchedulerContainer { .. }
                | DeployError::ServerAddress { .. }
                | DeployError::NotReady { .. }
                | DeployError::Interrupted => false,
            },
            Error::Fault(e) => match e {
                FaultError::Kube(e) => e.is_input_error(),
                FaultError::External(_) | FaultError::Other(_) => false,
            },
            Error::Kube(e) => e.is_input_error(),
            Error::Up(e) => e.is_input_error(),
            // Per variant: a spec that cannot be an image or a program the
            // user named that is missing is input; I/O, ldd and ctr are not.
            Error::Image(e) => e.is_input_error(),
            Error::Kubelets(e) => e.is_input_error(),
            Error::BadSetting(_) => true,
            Error::SweepJob(e) => e.is_input_error(),
        }
    }
}

impl schedlab_core::error::UserInput for Error {
    fn is_input_error(&self) -> bool {
        Error::is_input_error(self)
    }
}
