//! Structured logs on stderr: JSON lines for collectors, or text for people.
//! `RUST_LOG` filters as usual (default `info`). Credentials a server echoes
//! (a bearer token in an error body) are redacted from every line.

use crate::args::LogFormat;
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber; a second call (tests) is a no-op.
pub fn init(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| kube_backend::redact::RedactingStderr)
        // colour codes only for a person at a terminal
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()));
    let _ = match format {
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
