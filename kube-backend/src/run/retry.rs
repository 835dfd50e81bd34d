//! Sending a request again when the failure may pass: 429 (after the
//! server's Retry-After), 5xx and broken connections (a restarting
//! apiserver costs a pause, not an error).

use crate::ApiClient;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Whether `err` may pass if the same request is sent again.
pub(crate) fn is_transient(err: &kube::Error) -> bool {
    match err {
        kube::Error::Api(status) => status.code == 429 || status.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// The wait the server asked for, if it did.
fn retry_after(err: &kube::Error) -> Option<Duration> {
    match err {
        kube::Error::Api(status) => status
            .details
            .as_ref()
            .map(|d| d.retry_after_seconds)
            .filter(|s| *s > 0)
            .map(|s| Duration::from_secs(u64::from(s))),
        _ => None,
    }
}

/// How a caller retries.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RetryPolicy {
    /// None: until the request passes or fails for good (the caller stops
    /// waiting by dropping the future).
    pub(crate) give_up_after: Option<Duration>,
}

impl RetryPolicy {
    /// While a run plays: until it passes (the run's end or cancel drops it).
    pub(crate) const PLAY: RetryPolicy = RetryPolicy { give_up_after: None };
    /// Setup and teardown: a minute of an unavailable server is enough.
    pub(crate) const SETUP: RetryPolicy = RetryPolicy {
        give_up_after: Some(Duration::from_secs(60)),
    };
}

/// Sends `call` (after the client's rate limiter) until it passes, fails
/// for good, or the policy gives up; counts every retry in `retried`.
pub(crate) async fn send<T, F, Fut>(
    api: &ApiClient,
    policy: RetryPolicy,
    retried: &AtomicU64,
    mut call: F,
) -> Result<T, kube::Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, kube::Error>>,
{
    let started = Instant::now();
    let mut backoff = FIRST_BACKOFF;
    loop {
        api.throttle().await;
        match call().await {
            Ok(value) => return Ok(value),
            Err(err) if is_transient(&err) && policy.give_up_after.is_none_or(|limit| started.elapsed() < limit) => {
                retried.fetch_add(1, Ordering::Relaxed);
                let wait = retry_after(&err).unwrap_or(backoff);
                tracing::debug!(error = %crate::redact::shown(&err), wait_ms = wait.as_millis() as u64, "request failed for now; retrying");
                tokio::time::sleep(wait).await;
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
            Err(err) => return Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn api_error(code: u16, retry_after_seconds: u32) -> kube::Error {
        let mut status = Status::failure("x", "y").with_code(code);
        if retry_after_seconds > 0 {
            status.details = Some(kube::core::response::StatusDetails {
                name: String::new(),
                group: String::new(),
                kind: String::new(),
                uid: String::new(),
                causes: Vec::new(),
                retry_after_seconds,
            });
        }
        kube::Error::Api(Box::new(status))
    }

    #[test]
    fn throttling_and_server_errors_pass_others_do_not() {
        assert!(is_transient(&api_error(429, 0)));
        assert!(is_transient(&api_error(503, 0)));
        assert!(!is_transient(&api_error(404, 0)));
        assert!(!is_transient(&api_error(409, 0)));
        assert!(!is_transient(&api_error(422, 0)));
        assert_eq!(retry_after(&api_error(429, 3)), Some(Duration::from_secs(3)));
        assert_eq!(retry_after(&api_error(429, 0)), None);
    }
}
