//! Every replica's own view of its nodes and pending pods, leader or not:
//! readiness waits for both to be listed once (a standby that could not read
//! them could not take over either), and `agmarl_pending_pods` counts the
//! pods of this scheduler without a node.

use crate::health::Health;
use crate::metrics::Metrics;
use futures::StreamExt;
use k8s_openapi::api::core::v1 as core;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use std::collections::HashSet;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What to watch.
#[derive(Debug, Clone)]
pub struct Scope {
    pub scheduler_name: String,
    pub namespace: Option<String>,
    pub node_selector: Option<String>,
}

/// The pods of `scope` that wait for a node.
#[derive(Debug, Default)]
pub struct Pending {
    pods: HashSet<(String, String)>,
    relist: Option<HashSet<(String, String)>>,
}

fn key(pod: &core::Pod) -> (String, String) {
    (
        pod.metadata.namespace.clone().unwrap_or_default(),
        pod.metadata.name.clone().unwrap_or_default(),
    )
}

fn waiting(pod: &core::Pod) -> bool {
    let bound = pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some();
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    let finished = matches!(phase, Some("Succeeded" | "Failed"));
    !bound && !finished && pod.metadata.deletion_timestamp.is_none()
}

impl Pending {
    /// Applies one watch event; returns whether a full list has completed
    /// (the view is then in sync with the server).
    pub fn apply(&mut self, event: watcher::Event<core::Pod>) -> bool {
        match event {
            watcher::Event::Init => self.relist = Some(HashSet::new()),
            watcher::Event::InitApply(pod) => {
                if waiting(&pod) {
                    self.relist.get_or_insert_with(HashSet::new).insert(key(&pod));
                }
            }
            watcher::Event::InitDone => {
                self.pods = self.relist.take().unwrap_or_default();
                return true;
            }
            watcher::Event::Apply(pod) => {
                if waiting(&pod) {
                    self.pods.insert(key(&pod));
                } else {
                    self.pods.remove(&key(&pod));
                }
            }
            watcher::Event::Delete(pod) => {
                self.pods.remove(&key(&pod));
            }
        }
        false
    }

    pub fn len(&self) -> usize {
        self.pods.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }
}

/// Watches until `stop` fires, marking `health` synced once nodes and pods
/// have both been listed.
pub async fn run(
    client: kube::Client,
    scope: Scope,
    health: Arc<Health>,
    metrics: Arc<Metrics>,
    stop: CancellationToken,
) {
    let mut node_config = watcher::Config::default();
    if let Some(selector) = scope.node_selector.as_deref() {
        node_config = node_config.labels(selector);
    }
    let pod_config = watcher::Config::default().fields(&format!("spec.schedulerName={}", scope.scheduler_name));
    let nodes: Api<core::Node> = Api::all(client.clone());
    let pods: Api<core::Pod> = match scope.namespace.as_deref() {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    };
    let mut node_events = watcher(nodes, node_config).default_backoff().boxed();
    let mut pod_events = watcher(pods, pod_config).default_backoff().boxed();
    let (mut nodes_listed, mut pods_listed) = (false, false);
    let mut pending = Pending::default();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            event = node_events.next() => match event {
                Some(Ok(watcher::Event::InitDone)) => nodes_listed = true,
                Some(Ok(_)) => {}
                Some(Err(err)) => tracing::warn!(error = %err, "node watch failed; resuming"),
                None => return,
            },
            event = pod_events.next() => match event {
                Some(Ok(event)) => {
                    pods_listed |= pending.apply(event);
                    metrics.set_pending(pending.len());
                }
                Some(Err(err)) => tracing::warn!(error = %err, "pod watch failed; resuming"),
                None => return,
            },
        }
        if nodes_listed && pods_listed {
            health.set_synced(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, node: Option<&str>, phase: Option<&str>) -> core::Pod {
        core::Pod {
            metadata: kube::api::ObjectMeta {
                name: Some(name.into()),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            spec: Some(core::PodSpec {
                node_name: node.map(str::to_string),
                ..Default::default()
            }),
            status: Some(core::PodStatus {
                phase: phase.map(str::to_string),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn counts_pods_without_a_node_across_relists() {
        let mut p = Pending::default();
        assert!(!p.apply(watcher::Event::Init));
        p.apply(watcher::Event::InitApply(pod("a", None, Some("Pending"))));
        p.apply(watcher::Event::InitApply(pod("b", Some("n1"), Some("Running"))));
        p.apply(watcher::Event::InitApply(pod("c", None, Some("Failed"))));
        assert!(p.is_empty(), "nothing counts before the list completes");
        assert!(p.apply(watcher::Event::InitDone));
        assert_eq!(p.len(), 1);
        p.apply(watcher::Event::Apply(pod("d", None, None)));
        assert_eq!(p.len(), 2);
        p.apply(watcher::Event::Apply(pod("a", Some("n2"), Some("Pending"))));
        assert_eq!(p.len(), 1, "bound");
        p.apply(watcher::Event::Delete(pod("d", None, None)));
        assert!(p.is_empty());
        // a relist replaces the set
        p.apply(watcher::Event::Apply(pod("e", None, None)));
        p.apply(watcher::Event::Init);
        p.apply(watcher::Event::InitApply(pod("f", None, None)));
        assert!(p.apply(watcher::Event::InitDone));
        assert_eq!(p.len(), 1);
    }
}
