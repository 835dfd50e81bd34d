//! The watches the emulator plays from: its nodes and the run's pods, as
//! `kube::runtime::watcher` streams them (relisting and resuming by itself)
//! behind a back-off, so a restarted API server costs a pause, not an error.

use super::stats::Counters;
use crate::client::ApiClient;
use futures::StreamExt;
use k8s_openapi::api::core::v1 as core;
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// What a watch delivered.
#[derive(Debug)]
pub enum Msg {
    // boxed: a queue of thousands of them stays small
    Node(Box<Event<core::Node>>),
    Pod(Box<Event<core::Pod>>),
}

impl Msg {
    pub fn node(event: Event<core::Node>) -> Msg {
        Msg::Node(Box::new(event))
    }
    pub fn pod(event: Event<core::Pod>) -> Msg {
        Msg::Pod(Box::new(event))
    }
}

/// Streams objects of `K` (of every namespace) matching `selector` into
/// `tx` until cancelled.
pub async fn forward<K>(
    api: ApiClient,
    selector: String,
    wrap: fn(Event<K>) -> Msg,
    tx: mpsc::Sender<Msg>,
    counters: Arc<Counters>,
    cancel: CancellationToken,
) where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + Send + 'static,
    K::DynamicType: Default,
{
    let kapi = kube::Api::<K>::all(api.client());
    // a watch counts once against the rate limiter, when it is opened
    api.throttle().await;
    let stream = watcher::watcher(kapi, watcher::Config::default().labels(&selector)).default_backoff();
    let mut stream = std::pin::pin!(stream);
    loop {
        let item = tokio::select! {
            _ = cancel.cancelled() => return,
            item = stream.next() => item,
        };
        match item {
            None => return,
            Some(Ok(event)) => {
                if tx.send(wrap(event)).await.is_err() {
                    return;
                }
            }
            Some(Err(err)) => {
                counters.retried();
                tracing::warn!(selector, error = %crate::redact::shown(&err), "watch broke; resuming");
            }
        }
    }
}
