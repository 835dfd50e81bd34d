//! The two watches of the bind loop, merged: nodes (the loop's node
//! selector) and pods (its namespace, or all), each resuming by itself after
//! a broken connection or a restarted API server.

use super::BindOptions;
use super::binder::Change;
use crate::client::ApiClient;
use futures::stream::{BoxStream, StreamExt};
use k8s_openapi::api::core::v1 as core;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};

/// Every change of the loop's nodes and pods. Errors are the watches'
/// failed attempts; the streams back off and go on after them.
pub async fn changes(api: &ApiClient, opts: &BindOptions) -> BoxStream<'static, Result<Change, watcher::Error>> {
    let mut node_config = watcher::Config::default();
    if let Some(selector) = opts.node_selector.as_deref() {
        node_config = node_config.labels(selector);
    }
    let nodes: Api<core::Node> = Api::all(api.client());
    let pods: Api<core::Pod> = match opts.namespace.as_deref() {
        Some(ns) => Api::namespaced(api.client(), ns),
        None => Api::all(api.client()),
    };
    // A watch counts once against the client's rate, when it opens; the
    // watcher's own relists after a break are not throttled.
    api.throttle().await;
    let node_changes = watcher(nodes, node_config)
        .default_backoff()
        .map(|r| r.map(|e| Change::Node(Box::new(e))));
    api.throttle().await;
    let pod_changes = watcher(pods, watcher::Config::default())
        .default_backoff()
        .map(|r| r.map(|e| Change::Pod(Box::new(e))));
    futures::stream::select(node_changes, pod_changes).boxed()
}
