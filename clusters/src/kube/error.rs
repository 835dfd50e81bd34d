//! What can go wrong talking to an API server.

use std::path::PathBuf;
use std::time::Duration;

/// An error of the kube backend, the node emulator or the bind loop.
#[derive(Debug, thiserror::Error)]
pub enum KubeError {
    /// The kubeconfig could not be read or does not name a usable context.
    #[error("kubeconfig {}: {source}", origin(.path))]
    Kubeconfig {
        /// None: from `KUBECONFIG` or `~/.kube/config`
        path: Option<PathBuf>,
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// The kubeconfig's context asks for something the client cannot do.
    #[error("kubeconfig {}: {message}", origin(.path))]
    Config { path: Option<PathBuf>, message: String },
    /// The API server did not answer.
    #[error("API server {server} is unreachable: {message}")]
    Unreachable { server: String, message: String },
    #[error("API server {server} did not answer within {}s", .after.as_secs_f64())]
    Timeout { server: String, after: Duration },
    /// A request failed in a way the caller cannot handle.
    #[error("{what}: {source}")]
    Api {
        what: String,
        #[source]
        source: kube::Error,
    },
    /// An object lacks or garbles something schedlab needs from it.
    #[error("{kind} {name}: field {field}: {message}")]
    Object {
        kind: &'static str,
        name: String,
        field: &'static str,
        message: String,
    },
    /// The run was stopped (Ctrl-C) before it finished.
    #[error("interrupted")]
    Interrupted,
    #[error("{0}")]
    Other(String),
}

fn origin(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => p.display().to_string(),
        None => "(from KUBECONFIG or ~/.kube/config)".to_string(),
    }
}

impl KubeError {
    /// Wraps a request error with what was being done.
    pub fn api(what: impl Into<String>) -> impl FnOnce(kube::Error) -> KubeError {
        let what = what.into();
        move |source| KubeError::Api { what, source }
    }

    /// Whether the user gave something unusable (a kubeconfig, a context, a
    /// server that does not answer): the command line exits 2 for these.
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            KubeError::Kubeconfig { .. }
                | KubeError::Config { .. }
                | KubeError::Unreachable { .. }
                | KubeError::Timeout { .. }
        )
    }
}

/// The HTTP status of an API error response, if `err` is one.
pub fn status_code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}
