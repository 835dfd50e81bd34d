//! How an extender is reached: one POST per verb, blocking, with a timeout.
//! [`Transport`] is the seam the extender's logic is tested through
//! without a server.

use std::fmt;
use std::time::Duration;

/// Why a call got no usable answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("did not answer within {}", super::spec::format_duration(*.0))]
    Timeout(Duration),
    #[error("gave no answer ({0})")]
    Unreachable(String),
    #[error("answered HTTP status {0}, not 200")]
    Status(u16),
}

/// Posts JSON bodies to an extender's verbs.
pub trait Transport: Send + fmt::Debug {
    /// POSTs `body` (JSON) to the extender's `verb`, returning the body of
    /// a 200 answer.
    fn post(&mut self, verb: &str, body: &[u8]) -> Result<Vec<u8>, CallError>;
}

/// The largest answer read: a filter or prioritize answer names at most
/// every node, far below this.
const MAX_ANSWER_BYTES: u64 = 64 << 20;

/// An extender over plain HTTP at `URL_PREFIX/VERB`, as kube-scheduler
/// calls it: `POST`, `Content-Type: application/json`, the whole call
/// (connect, send, answer) within the timeout. No proxy is used, whatever
/// the environment says: the extender is the researcher's own process.
#[derive(Debug)]
pub struct HttpTransport {
    prefix: String,
    timeout: Duration,
    agent: ureq::Agent,
}

impl HttpTransport {
    pub fn new(url_prefix: &str, timeout: Duration) -> HttpTransport {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .proxy(None)
            .max_redirects(0)
            .build()
            .into();
        HttpTransport {
            prefix: url_prefix.trim_end_matches('/').to_string(),
            timeout,
            agent,
        }
    }
}

impl Transport for HttpTransport {
    fn post(&mut self, verb: &str, body: &[u8]) -> Result<Vec<u8>, CallError> {
        let url = format!("{}/{verb}", self.prefix);
        let classify = |e: ureq::Error| match e {
            ureq::Error::Timeout(_) => CallError::Timeout(self.timeout),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => CallError::Timeout(self.timeout),
            other => CallError::Unreachable(other.to_string()),
        };
        let mut answer = self
            .agent
            .post(&url)
            .header("Content-Type", "application/json")
            .send(body)
            .map_err(classify)?;
        let status = answer.status().as_u16();
        if status != 200 {
            return Err(CallError::Status(status));
        }
        answer
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_vec()
            .map_err(classify)
    }
}
