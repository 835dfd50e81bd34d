//! The writers: tasks that take coalesced writes from the [`Outbox`] and
//! send them, each behind the client's rate limiter, retrying what the API
//! server may answer later (429, 5xx, a broken connection) with a doubling
//! back-off, and treating 404 as "the object is gone".

use super::node_status::{lease_object, lease_renewal};
use super::outbox::{Op, Outbox, Target};
use super::stats::Counters;
use crate::client::ApiClient;
use crate::error::status_code;
use crate::labels;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams, Preconditions};
use kube::core::Request;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Sends a built request behind the rate limiter; the body of the answer is
/// not parsed (nothing in it is needed, and parsing 10,000 pods costs).
macro_rules! send_request {
    ($writer:expr, $req:expr) => {
        match $req {
            Ok(req) => {
                $writer.api.throttle().await;
                $writer.api.client().request_text(req).await
            }
            Err(e) => Err(kube::Error::BuildRequest(e)),
        }
    };
}

const FIRST_RETRY: Duration = Duration::from_millis(100);
const LAST_RETRY: Duration = Duration::from_secs(5);

/// What an answer means for the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Done,
    /// 404: the object is gone; its remaining writes are moot
    Gone,
    /// 409: somebody else's version won (a Lease created meanwhile, a uid
    /// precondition that no longer holds)
    Conflict,
    /// worth sending again after a pause
    Retry,
    /// a request the server will never accept (logged)
    Refused,
}

/// Sorts an API answer.
pub fn verdict(result: &Result<String, kube::Error>) -> Verdict {
    match result {
        Ok(_) => Verdict::Done,
        Err(err) => match status_code(err) {
            Some(404) => Verdict::Gone,
            Some(409) => Verdict::Conflict,
            Some(429) => Verdict::Retry,
            Some(code) if code >= 500 => Verdict::Retry,
            Some(_) => Verdict::Refused,
            // no answer at all: the connection broke (an apiserver restart)
            None => Verdict::Retry,
        },
    }
}

/// Everything a writer needs.
#[derive(Clone)]
pub struct Writer {
    pub api: ApiClient,
    pub run: String,
    pub outbox: Arc<Outbox>,
    pub counters: Arc<Counters>,
    pub cancel: CancellationToken,
}

fn params() -> PatchParams {
    PatchParams {
        field_manager: Some(labels::FIELD_MANAGER.to_string()),
        ..Default::default()
    }
}

impl Writer {
    /// Takes writes until cancelled.
    pub async fn run(self) {
        loop {
            let (target, ops) = tokio::select! {
                _ = self.cancel.cancelled() => return,
                next = self.outbox.next() => next,
            };
            self.write(&target, ops).await;
            self.outbox.done(&target);
        }
    }

    async fn write(&self, target: &Target, ops: Vec<Op>) {
        for op in ops {
            match self.send_with_retries(target, &op).await {
                Some(Verdict::Gone) if matches!(target, Target::Pod(_) | Target::Node(_)) => return,
                None => return,
                _ => {}
            }
        }
    }

    /// Sends one write until it is done or will never be; None when cancelled.
    async fn send_with_retries(&self, target: &Target, op: &Op) -> Option<Verdict> {
        let mut pause = FIRST_RETRY;
        loop {
            if self.cancel.is_cancelled() {
                return None;
            }
            let (v, what) = self.send(target, op).await;
            match v {
                Verdict::Retry => {
                    self.counters.retried();
                    tracing::debug!(?target, what, "API write failed; retrying in {pause:?}");
                    tokio::select! {
                        _ = self.cancel.cancelled() => return None,
                        _ = tokio::time::sleep(pause) => {}
                    }
                    pause = (pause * 2).min(LAST_RETRY);
                }
                Verdict::Refused => {
                    tracing::warn!(?target, what, "the API server refused a write");
                    return Some(v);
                }
                _ => return Some(v),
            }
        }
    }

    /// One attempt; the verdict and, when it failed, what the server said.
    async fn send(&self, target: &Target, op: &Op) -> (Verdict, String) {
        let result = match (target, op) {
            (Target::Pod(key), Op::PodStatus(patch)) => {
                let req = Request::new(format!("/api/v1/namespaces/{}/pods", key.namespace)).patch_subresource(
                    "status",
                    &key.name,
                    &params(),
                    &Patch::Strategic(patch),
                );
                let r = send_request!(self, req);
                if r.is_ok() {
                    self.counters.status_written();
                }
                r
            }
            (Target::Pod(key), Op::PodDelete { uid }) => {
                let dp = DeleteParams {
                    grace_period_seconds: Some(0),
                    preconditions: Some(Preconditions {
                        uid: Some(uid.clone()),
                        resource_version: None,
                    }),
                    ..Default::default()
                };
                let req = Request::new(format!("/api/v1/namespaces/{}/pods", key.namespace)).delete(&key.name, &dp);
                send_request!(self, req)
            }
            (Target::Node(name), Op::NodeStatus(patch)) => {
                let req = Request::new("/api/v1/nodes").patch_subresource(
                    "status",
                    name,
                    &params(),
                    &Patch::Strategic(patch),
                );
                send_request!(self, req)
            }
            (Target::Node(name), Op::NodeSpec(patch)) => {
                let req = Request::new("/api/v1/nodes").patch(name, &params(), &Patch::Merge(patch));
                send_request!(self, req)
            }
            (Target::Lease(name), Op::LeaseRenew { node_uid }) => self.renew_lease(name, node_uid).await,
            (target, op) => {
                tracing::warn!(?target, ?op, "a write for the wrong kind of object");
                return (Verdict::Refused, String::new());
            }
        };
        let v = verdict(&result);
        (v, result.err().map(|e| e.to_string()).unwrap_or_default())
    }

    /// Renews a node's Lease, creating it the first time (or after somebody
    /// deleted it).
    async fn renew_lease(&self, node: &str, node_uid: &str) -> Result<String, kube::Error> {
        let path = format!(
            "/apis/coordination.k8s.io/v1/namespaces/{}/leases",
            labels::NODE_LEASE_NAMESPACE
        );
        let now = jiff::Timestamp::now();
        let req = Request::new(&path).patch(node, &params(), &Patch::Merge(lease_renewal(node, now)));
        let result = send_request!(self, req);
        let result = if verdict(&result) == Verdict::Gone {
            let body =
                serde_json::to_vec(&lease_object(&self.run, node, node_uid, now)).map_err(kube::Error::SerdeError)?;
            let created = send_request!(self, Request::new(&path).create(&PostParams::default(), body));
            // created meanwhile by an earlier renewal that timed out: renewed enough
            if verdict(&created) == Verdict::Conflict {
                Ok(String::new())
            } else {
                created
            }
        } else {
            result
        };
        if result.is_ok() {
            self.counters.lease_renewed();
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;

    fn api_error(code: u16) -> Result<String, kube::Error> {
        Err(kube::Error::Api(Status::failure("x", "y").with_code(code).boxed()))
    }

    #[test]
    fn answers_sort_into_verdicts() {
        assert_eq!(verdict(&Ok(String::new())), Verdict::Done);
        assert_eq!(verdict(&api_error(404)), Verdict::Gone);
        assert_eq!(verdict(&api_error(409)), Verdict::Conflict);
        assert_eq!(verdict(&api_error(429)), Verdict::Retry);
        assert_eq!(verdict(&api_error(503)), Verdict::Retry);
        assert_eq!(verdict(&api_error(422)), Verdict::Refused);
        let broken = Err(kube::Error::LinesCodecMaxLineLengthExceeded);
        assert_eq!(verdict(&broken), Verdict::Retry);
    }
}
