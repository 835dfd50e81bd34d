//! What can go wrong talking to an API server.
//!
//! No message shows a kubeconfig's content (a YAML error gives its line and
//! column), and every text that comes from a server or from the client
//! library goes through [`redact`], so that a server echoing a request
//! cannot make schedlab print a bearer token.

use super::redact::redact;
use std::path::PathBuf;
use std::time::Duration;

/// An error of the kube backend, the node emulator or the bind loop: every
/// error of the crate's public API.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The kubeconfig could not be read or does not name a usable context
    /// (made by [`KubeError::kubeconfig`], which keeps its content out).
    #[error("kubeconfig {}: {}", origin(.path), one_line(.message))]
    Kubeconfig {
        /// None: from `KUBECONFIG` or `~/.kube/config`
        path: Option<PathBuf>,
        message: String,
    },
    /// The kubeconfig's context asks for something the client cannot do.
    #[error("kubeconfig {}: {}", origin(.path), redacted_line(.message))]
    Config { path: Option<PathBuf>, message: String },
    /// The API server did not answer.
    #[error("API server {} is unreachable: {}", one_line(.server), redacted_line(.message))]
    Unreachable { server: String, message: String },
    #[error("API server {} did not answer within {}s", one_line(.server), .after.as_secs_f64())]
    Timeout { server: String, after: Duration },
    /// The kubeconfig user's exec credential plugin did not answer.
    #[error(
        "kubeconfig {}: its credential plugin {} did not answer within {}s (it was stopped); run it by hand to \
         see what it waits for",
        origin(.path),
        one_line(.command),
        .after.as_secs_f64()
    )]
    CredentialTimeout {
        path: Option<PathBuf>,
        command: String,
        after: Duration,
    },
    /// The kubeconfig user's exec credential plugin failed: named by its
    /// program and exit status only (its arguments, environment and output
    /// may hold secrets).
    #[error(
        "kubeconfig {}: its credential plugin {} failed ({}); its arguments, environment and output \
         are not shown: run it by hand to see why",
        origin(.path),
        one_line(.command),
        one_line(.status)
    )]
    CredentialFailed {
        path: Option<PathBuf>,
        command: String,
        status: String,
    },
    /// The kubeconfig user's exec credential plugin wrote more than an
    /// ExecCredential can be.
    #[error(
        "kubeconfig {}: its credential plugin {} wrote more than {} MiB (it was stopped); an ExecCredential is \
         a few kilobytes",
        origin(.path),
        one_line(.command),
        crate::credential_probe::MAX_PLUGIN_OUTPUT_BYTES >> 20
    )]
    CredentialOutput { path: Option<PathBuf>, command: String },
    /// A request failed in a way the caller cannot handle. The error and its
    /// causes are shown in one message, redacted (not as a source, which
    /// would print them again, unredacted).
    #[error("{what}: {}", redacted_line(&chain_text(.error)))]
    Api { what: String, error: kube::Error },
    /// An object lacks or garbles something schedlab needs from it.
    #[error("{kind} {}: field {field}: {}", one_line(.name), redacted_line(.message))]
    Object {
        kind: &'static str,
        name: String,
        field: &'static str,
        message: String,
    },
    /// The run was stopped (Ctrl-C) before it finished.
    #[error("interrupted")]
    Interrupted,
    /// A time scale the scenario clock cannot run at.
    #[error(transparent)]
    TimeScale(#[from] crate::clock::BadTimeScale),
    /// A run's objects could not all be removed after it.
    #[error("tearing down run {run}: remove what is labelled schedlab.io/run={run}: {error}")]
    Teardown { run: String, error: Box<KubeError> },
    /// A task of a run (the bind loop, the fault pump) ended by panicking or being aborted.
    #[error("{what} stopped abnormally: {message}")]
    Task { what: &'static str, message: String },
    #[error("{}", redacted_line(.0))]
    Other(String),
}

/// The name the crate's modules (and its users) know [`Error`] by.
pub type KubeError = Error;

pub type Result<T> = std::result::Result<T, Error>;

impl schedlab_core::error::UserInput for Error {
    fn is_input_error(&self) -> bool {
        Error::is_input_error(self)
    }
}

fn origin(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => schedlab_core::text::escape_controls(&p.display().to_string()).into_owned(),
        None => "(from KUBECONFIG or ~/.kube/config)".to_string(),
    }
}

/// An error's message followed by those of its causes not already in it.
pub fn chain_text(err: &(dyn std::error::Error + 'static)) -> String {
    schedlab_core::error_text::one_line(err)
}

/// Whether a request failed because a time limit ran out somewhere under
/// the client (its connect timeout, a socket's), not because of an answer.
pub fn is_timeout(err: &kube::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(c) = cause {
        // a layer that boxed tokio's error anew keeps only its text
        if c.is::<tokio::time::error::Elapsed>()
            || c.to_string() == "deadline has elapsed"
            || c.downcast_ref::<std::io::Error>()
                .is_some_and(|e| e.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        cause = c.source();
    }
    false
}

/// Why a first request to an API server failed, in the terms of what a
/// user can check (the address, the TLS set-up, the name), with the root
/// cause in brackets, instead of the client's layers ("ServiceError: client
/// error (Connect): ...").
pub fn unreachable_words(err: &kube::Error) -> String {
    if let kube::Error::Api(status) = err {
        return format!(
            "it answered HTTP {}: {}",
            status.code,
            schedlab_core::text::capped(&redact(&status.message), crate::client::MAX_ANSWER_SHOWN)
        );
    }
    let chain = chain_text(err);
    let mut root = err.to_string();
    let mut cause = std::error::Error::source(err);
    while let Some(c) = cause {
        let text = c.to_string();
        if !text.is_empty() {
            root = text;
        }
        cause = c.source();
    }
    let lower = chain.to_ascii_lowercase();
    if lower.contains("dns error") || lower.contains("failed to lookup address") {
        format!("its host name does not resolve ({root})")
    } else if lower.contains("tcp connect error") {
        format!("no connection to it ({root})")
    } else if ["tls", "handshake", "certificate", "corrupt message"]
        .iter()
        .any(|w| lower.contains(w))
    {
        format!(
            "the TLS handshake with it failed ({root}): check that it serves HTTPS and that the kubeconfig's \
             certificate authority is its own"
        )
    } else if ["reset", "closed", "broken pipe", "eof"]
        .iter()
        .any(|w| lower.contains(w))
    {
        format!("it closed the connection without answering ({root})")
    } else {
        format!("the request failed ({root})")
    }
}

impl KubeError {
    /// Wraps a request error with what was being done.
    pub fn api(what: impl Into<String>) -> impl FnOnce(kube::Error) -> KubeError {
        let what = what.into();
        move |error| KubeError::Api { what, error }
    }

    /// A kubeconfig that cannot be used. A file that is not valid YAML, or not
    /// a kubeconfig, is reported by line and column only: the parser's message
    /// quotes the lines around the error, and those hold tokens and keys.
    pub fn kubeconfig(path: Option<PathBuf>, err: &kube::config::KubeconfigError) -> KubeError {
        let message = match err {
            kube::config::KubeconfigError::Parse(e) => {
                let at = match e.without_snippet().location() {
                    Some(l) => format!(" at line {}, column {}", l.line(), l.column()),
                    None => String::new(),
                };
                format!(
                    "not valid YAML or not a kubeconfig{at} (the file's content is not shown: a kubeconfig holds \
                     credentials)"
                )
            }
            // kube quotes the kubeconfig's names (a context, a cluster), which may hold line breaks
            other => redacted_line(&chain_text(other)),
        };
        KubeError::Kubeconfig { path, message }
    }

    /// Whether the user gave something unusable (a kubeconfig, a context, a
    /// server that does not answer): the command line exits 2 for these.
    pub fn is_input_error(&self) -> bool {
        match self {
            KubeError::Kubeconfig { .. }
            | KubeError::Config { .. }
            | KubeError::Unreachable { .. }
            | KubeError::Timeout { .. }
            | KubeError::CredentialTimeout { .. }
            | KubeError::CredentialFailed { .. }
            | KubeError::CredentialOutput { .. }
            | KubeError::TimeScale(_) => true,
            KubeError::Api { .. }
            | KubeError::Object { .. }
            | KubeError::Interrupted
            | KubeError::Teardown { .. }
            | KubeError::Task { .. }
            | KubeError::Other(_) => false,
        }
    }
}

/// `text` on one line, its line breaks written as `\n` and `\r` and its
/// other control characters escaped too ([`schedlab_core::text`]).
fn one_line(text: &str) -> String {
    schedlab_core::text::escape_controls(text).into_owned()
}

/// Library or server text as a message shows it: redacted, on one line (a
/// credential plugin's output, a YAML error's snippet, an error body span lines).
fn redacted_line(text: &str) -> String {
    one_line(&redact(text))
}

/// The HTTP status of an API error response, if `err` is one.
pub fn status_code(err: &kube::Error) -> Option<u16> {
    match err {
        kube::Error::Api(status) => Some(status.code),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "tok-9f8e7d";

    /// A kubeconfig's server URL, a credential plugin's command and status
    /// and an object's name come from outside: no control character of
    /// theirs reaches the terminal raw (the fuzzer found U+0085 in a server
    /// URL's path printed as is).
    #[test]
    fn text_from_outside_is_shown_without_raw_control_characters() {
        let raw = "x\u{85}\u{1b}]0;title\u{7}";
        let errors = [
            Error::Unreachable {
                server: format!("https://127.0.0.1:1/{raw}"),
                message: "refused".into(),
            },
            Error::Timeout {
                server: format!("https://127.0.0.1:1/{raw}"),
                after: Duration::from_secs(5),
            },
            Error::CredentialTimeout {
                path: None,
                command: raw.into(),
                after: Duration::from_secs(10),
            },
            Error::CredentialFailed {
                path: None,
                command: raw.into(),
                status: format!("exit status 1{raw}"),
            },
            Error::CredentialOutput {
                path: None,
                command: raw.into(),
            },
            Error::Object {
                kind: "Pod",
                name: raw.into(),
                field: "spec",
                message: "missing".into(),
            },
        ];
        for e in errors {
            let shown = e.to_string();
            assert!(!shown.chars().any(schedlab_core::text::is_unsafe), "{shown:?}");
            assert!(shown.contains("title"), "the rest is still shown: {shown:?}");
        }
    }

    #[test]
    fn a_time_limit_under_the_client_is_a_timeout() {
        let timed_out = kube::Error::Service(Box::new(std::io::Error::new(std::io::ErrorKind::TimedOut, "slow")));
        assert!(is_timeout(&timed_out));
        let elapsed = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(async { tokio::time::timeout(Duration::ZERO, std::future::pending::<()>()).await })
            .unwrap_err();
        assert!(is_timeout(&kube::Error::Service(Box::new(elapsed))));
        let refused = kube::Error::Service(Box::new(std::io::Error::from(std::io::ErrorKind::ConnectionRefused)));
        assert!(!is_timeout(&refused));
    }

    #[test]
    fn a_failed_first_request_is_said_in_the_users_terms() {
        #[derive(Debug)]
        struct Layer(&'static str, Option<Box<Layer>>);
        impl std::fmt::Display for Layer {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.0)
            }
        }
        impl std::error::Error for Layer {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                self.1.as_deref().map(|l| l as _)
            }
        }
        let layered = |outer: &'static str, root: &'static str| {
            kube::Error::Service(Box::new(Layer(
                "client error (Connect)",
                Some(Box::new(Layer(outer, Some(Box::new(Layer(root, None)))))),
            )))
        };
        let refused = unreachable_words(&layered("tcp connect error", "Connection refused (os error 111)"));
        assert_eq!(refused, "no connection to it (Connection refused (os error 111))");
        let tls = unreachable_words(&layered("tls handshake eof", "unexpected end of file"));
        assert!(
            tls.starts_with("the TLS handshake with it failed (unexpected end of file)"),
            "{tls}"
        );
        let dns = unreachable_words(&layered("dns error", "failed to lookup address information"));
        assert!(dns.starts_with("its host name does not resolve"), "{dns}");
        let reset = unreachable_words(&layered("connection error", "Connection reset by peer (os error 104)"));
        assert!(
            reset.starts_with("it closed the connection without answering"),
            "{reset}"
        );
        for shown in [refused, tls, dns, reset] {
            assert!(
                !shown.contains("ServiceError") && !shown.contains("client error"),
                "{shown}"
            );
        }
    }

    /// Found by schedlab-fuzz (kubeconfig): a context or cluster name with a
    /// line break made a multi-line message.
    #[test]
    fn a_name_with_a_line_break_stays_on_one_line() {
        for err in [
            kube::config::KubeconfigError::LoadContext("a\nb".into()),
            kube::config::KubeconfigError::LoadClusterOfContext("a\r\nb".into()),
        ] {
            let shown = KubeError::kubeconfig(Some(PathBuf::from("/k/config")), &err).to_string();
            assert!(!shown.contains(['\n', '\r']), "{shown:?}");
            assert!(shown.contains("a\\nb") || shown.contains("a\\r\\nb"), "{shown:?}");
        }
    }

    #[test]
    fn a_kubeconfig_that_does_not_parse_is_reported_by_line_and_column_only() {
        for (text, line) in [
            (
                format!("users:\n- name: u\n  user:\n    token: {TOKEN}\n  bad: [x\nkind: Config\n"),
                6,
            ),
            (
                format!("kind: Config\nusers:\n- name: u\n  user:\n    token: [{TOKEN}]\n"),
                5,
            ),
            (format!("kind: {TOKEN}\nusers: 3\n"), 2),
        ] {
            let err = kube::config::Kubeconfig::from_yaml(&text).unwrap_err();
            let shown = KubeError::kubeconfig(Some(PathBuf::from("/k/config")), &err).to_string();
            assert!(!shown.contains(TOKEN) && !shown.contains("tok-"), "{shown}");
            assert!(!shown.contains('\n'), "one line: {shown}");
            assert!(shown.starts_with("kubeconfig /k/config: "), "{shown}");
            assert!(shown.contains(&format!("line {line}, column")), "{text:?}: {shown}");
        }
    }

    #[test]
    fn server_and_library_text_is_redacted_in_every_variant() {
        let echoed = format!("you sent:\nAuthorization: Bearer {TOKEN}\n{{\"token\":\"{TOKEN}\"}}");
        for err in [
            KubeError::Unreachable {
                server: "https://h".into(),
                message: echoed.clone(),
            },
            KubeError::Config {
                path: None,
                message: echoed.clone(),
            },
            KubeError::Object {
                kind: "Pod",
                name: "p".into(),
                field: "f",
                message: echoed.clone(),
            },
            KubeError::Other(echoed.clone()),
        ] {
            let shown = err.to_string();
            assert!(!shown.contains(TOKEN), "{shown}");
            // found by schedlab-fuzz (kubeconfig): a plugin's output made multi-line messages
            assert!(!shown.contains(['\n', '\r']), "{shown:?}");
            assert!(
                shown.contains("you sent") && shown.contains(crate::redact::REDACTED),
                "{shown}"
            );
        }
    }
}
