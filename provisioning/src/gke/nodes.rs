//! Reading a real cluster's nodes, and marking the ones a scenario uses with
//! its pool and price (so runs record the scenario's pools and costs).

use super::pools::NodeInfo;
use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube_backend::{ApiClient, KubeError, labels};

/// Every node of the cluster, as the pool check reads them.
pub async fn list_nodes(api: &ApiClient) -> Result<Vec<NodeInfo>, KubeError> {
    let nodes: Api<core::Node> = Api::all(api.client());
    api.throttle().await;
    let list = nodes
        .list(&ListParams::default())
        .await
        .map_err(KubeError::api("listing nodes"))?;
    Ok(list.items.iter().map(NodeInfo::of).collect())
}

/// A node to mark: its scenario pool (as a label) and hourly price (as an annotation).
#[derive(Debug, Clone, PartialEq)]
pub struct NodeMark {
    pub node: String,
    pub pool: String,
    pub hourly_price: f64,
}

/// Labels each node with [`labels::POOL`] and annotates it with
/// [`labels::HOURLY_PRICE`] (a merge patch: nothing else changes).
pub async fn mark_nodes(api: &ApiClient, marks: &[NodeMark]) -> Result<(), KubeError> {
    let nodes: Api<core::Node> = Api::all(api.client());
    for mark in marks {
        let patch = serde_json::json!({
            "metadata": {
                "labels": { labels::POOL: kube_backend::objects::dns_label(&[&mark.pool]) },
                "annotations": { labels::HOURLY_PRICE: mark.hourly_price.to_string() },
            }
        });
        api.throttle().await;
        nodes
            .patch(&mark.node, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(KubeError::api(format!("marking node {}", mark.node)))?;
    }
    Ok(())
}
