//! What can go wrong while starting, stopping or undoing real nodes.

use std::path::PathBuf;
use std::time::Duration;

/// An error of the real-node provisioner. Each names the node, file or
/// command at fault, so a failure is diagnosable from the message alone.
#[derive(Debug, thiserror::Error)]
pub enum KubeletError {
    #[error(
        "{asked} real nodes do not fit this machine: it holds about {fits} ({free_mib} MiB memory available at {per_node_mib} MiB per node, {cores} cores at {nodes_per_core} nodes per core)"
    )]
    TooMany {
        asked: usize,
        fits: usize,
        free_mib: u64,
        per_node_mib: u64,
        cores: usize,
        nodes_per_core: usize,
    },
    #[error("real nodes need {what}: {why}")]
    HostUnfit { what: &'static str, why: String },
    #[error("the unix socket path {} is {len} bytes, over the kernel's limit of {max}: use a shorter state folder", path.display())]
    SocketPathTooLong { path: PathBuf, len: usize, max: usize },
    #[error("node {node}: {component} exited during start-up (exit code {}); last log lines ({}):\n{}", code.map_or_else(|| "unknown".to_owned(), |c| c.to_string()), log.display(), kube_backend::redact::redact(.tail))]
    Exited {
        node: String,
        component: &'static str,
        code: Option<i32>,
        log: PathBuf,
        tail: String,
    },
    #[error("node {node}: {component} was not ready after {waited:?}; last log lines ({}):\n{}", log.display(), kube_backend::redact::redact(.tail))]
    NotReady {
        node: String,
        component: &'static str,
        waited: Duration,
        log: PathBuf,
        tail: String,
    },
    #[error("{what} {}: {detail}", path.display())]
    Malformed {
        what: &'static str,
        path: PathBuf,
        detail: String,
    },
    #[error("the local control plane in {} runs without kube-controller-manager, which real nodes need for their lifecycle: bring it up with real nodes", state.display())]
    NoControllerManager { state: PathBuf },
    #[error(
        "the programs of the workload and scheduler images are missing ({}): build them beside schedlab with `cargo build -p workload-runner -p agmarl-scheduler` (add --release for a release schedlab)",
        missing.join(", ")
    )]
    MissingPrograms { missing: Vec<String> },
    #[error("interrupted")]
    Interrupted,
    #[error(transparent)]
    Command(#[from] crate::external::ExternalError),
    #[error(transparent)]
    Kube(#[from] kube_backend::Error),
    #[error(transparent)]
    Process(#[from] crate::local::ProvisionError),
}

impl KubeletError {
    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> KubeletError {
        // the provisioner's own I/O error: one wording for every file it touches
        let path = path.into();
        move |source| KubeletError::Process(crate::local::ProvisionError::Io { what, path, source })
    }

    /// Whether the user's input caused it: asking for more nodes than the
    /// machine holds, or a state folder whose paths are too long. A machine
    /// that lacks what real nodes need is not the user's input: exit 1 says
    /// "this did not work here".
    pub fn is_input_error(&self) -> bool {
        match self {
            KubeletError::TooMany { .. } | KubeletError::SocketPathTooLong { .. } => true,
            KubeletError::NoControllerManager { .. } => true,
            KubeletError::HostUnfit { .. }
            | KubeletError::Exited { .. }
            | KubeletError::NotReady { .. }
            | KubeletError::Malformed { .. }
            | KubeletError::MissingPrograms { .. }
            | KubeletError::Interrupted
            | KubeletError::Command(_)
            | KubeletError::Process(_) => false,
            KubeletError::Kube(e) => e.is_input_error(),
        }
    }
}
