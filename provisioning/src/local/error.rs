//! What can go wrong while provisioning the local control plane.

use std::path::PathBuf;
use std::time::Duration;

/// An error of the `local` provisioner. Command failures name the command,
/// its exit code and the tail of what it wrote, so a failure is diagnosable
/// from the message alone.
#[derive(Debug, thiserror::Error)]
pub enum ProvisionError {
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Command(#[from] crate::external::ExternalError),
    #[error("{component} exited during start-up (exit code {}); last log lines ({}):\n{}", code.map_or_else(|| "unknown".to_owned(), |c| c.to_string()), log.display(), kube_backend::redact::redact(.tail))]
    Exited {
        component: &'static str,
        code: Option<i32>,
        log: PathBuf,
        tail: String,
    },
    #[error("{component} was not ready at {url} after {waited:?}; last log lines ({}):\n{}", log.display(), kube_backend::redact::redact(.tail))]
    NotReady {
        component: &'static str,
        url: String,
        waited: Duration,
        log: PathBuf,
        tail: String,
    },
    #[error(
        "`{tool}` is not on PATH and package installation is off (install its Debian package, or drop --no-install)"
    )]
    MissingTool { tool: &'static str },
    #[error("cannot install the Ctrl-C handler: {0}")]
    Interrupt(String),
    #[error("interrupted; the processes started so far were stopped")]
    Interrupted,
    #[error("neither $SCHEDLAB_CACHE nor $HOME is set: cannot choose a cache folder")]
    NoCacheDir,
    #[error("the apt sources name no Debian archive to add a deb-src entry for")]
    NoDebianArchive,
    #[error("{what} not found in {}", dir.display())]
    NotFound { what: &'static str, dir: PathBuf },
    #[error("malformed {what} in {}: {detail}", path.display())]
    Malformed {
        what: &'static str,
        path: PathBuf,
        detail: String,
    },
    #[error("no free loopback port: {0}")]
    NoPort(#[source] std::io::Error),
    #[error("could not signal process {pid}: {source}")]
    Signal {
        pid: i32,
        #[source]
        source: nix::errno::Errno,
    },
    #[error("process {pid} ({component}) did not exit after SIGKILL")]
    Unkillable { component: String, pid: i32 },
}

impl ProvisionError {
    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Self {
        let path = path.into();
        move |source| ProvisionError::Io { what, path, source }
    }
}

pub(crate) use crate::external::log_tail;
