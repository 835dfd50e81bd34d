//! The player's pod creates and deletes, sent a few at a time beside the
//! watches so that a wave of pods does not hold up what the watches show.

use super::retry::{self, RetryPolicy};
use crate::ApiClient;
use crate::error::status_code;
use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, DeleteParams, PostParams};
use schedlab_core::pod::PodId;
use schedlab_core::record::DeleteCause;
use schedlab_core::time::Time;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

/// How many requests are in flight at once.
pub(crate) const IN_FLIGHT: usize = 8;

#[derive(Debug)]
pub(crate) enum Request {
    Create {
        pod: PodId,
        object: Box<core::Pod>,
        /// when the run asked for the pod (scenario time)
        asked: Time,
    },
    Delete {
        pod: PodId,
        name: String,
        cause: DeleteCause,
    },
}

/// A request's outcome: Ok also when the API says it had been done
/// (409 on a create sent again, 404 on a delete).
#[derive(Debug)]
pub(crate) enum Done {
    Created {
        pod: PodId,
        asked: Time,
        result: Result<(), kube::Error>,
    },
    Deleted {
        pod: PodId,
        cause: DeleteCause,
        result: Result<(), kube::Error>,
    },
}

/// Sends `request` (retrying what may pass) and says how it went.
pub(crate) fn send(
    api: ApiClient,
    pods: Api<core::Pod>,
    retried: Arc<AtomicU64>,
    request: Request,
) -> BoxFuture<'static, Done> {
    async move {
        match request {
            Request::Create { pod, object, asked } => {
                let pp = PostParams::default();
                let result = match retry::send(&api, RetryPolicy::PLAY, &retried, || pods.create(&pp, &object)).await {
                    Ok(_) => Ok(()),
                    Err(e) if status_code(&e) == Some(409) => Ok(()),
                    Err(e) => Err(e),
                };
                Done::Created { pod, asked, result }
            }
            Request::Delete { pod, name, cause } => {
                // Graceful, as an owner deletes: the node's kubelet (or the
                // emulator) finishes the pod off.
                let dp = DeleteParams::default();
                let result = match retry::send(&api, RetryPolicy::PLAY, &retried, || pods.delete(&name, &dp)).await {
                    Ok(_) => Ok(()),
                    Err(e) if status_code(&e) == Some(404) => Ok(()),
                    Err(e) => Err(e),
                };
                Done::Deleted { pod, cause, result }
            }
        }
    }
    .boxed()
}
