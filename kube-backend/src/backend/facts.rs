//! What the kube backend tells the manifests.

use serde::Serialize;

/// Client rate limits, as the manifest reports them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ClientRate {
    pub qps: f32,
    pub burst: u32,
}

/// What one run on a real cluster did.
#[derive(Debug, Clone, Serialize)]
pub struct KubeRunFacts {
    pub run_id: String,
    pub scheduler_name: String,
    pub summary: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_loop: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulator: Option<serde_json::Value>,
    /// kind and GKE: the node faults played on real nodes
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_faults: Option<serde_json::Value>,
    pub teardown: serde_json::Value,
}
