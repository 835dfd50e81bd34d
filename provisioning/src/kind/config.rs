//! The kind cluster config (`kind.x-k8s.io/v1alpha4` Cluster) made from a
//! scenario's nodes: one control-plane node and one worker per scenario node
//! that kind plays, each worker labelled with its pool, machine type and
//! provisioning and tainted as its pool is (through a kubeadm
//! JoinConfiguration patch, as kind documents for node taints).

use super::KindError;
use kube_backend::{labels, objects};
use schedlab_core::node::{NodeSpec, Provisioning, Taint, TaintEffect};
use serde::Serialize;
use std::collections::BTreeMap;

pub const API_VERSION: &str = "kind.x-k8s.io/v1alpha4";

/// The label every kind worker made by schedlab carries (the run's node selector).
pub const WORKER_LABEL: &str = "schedlab.io/kind-worker";

/// A kind cluster config.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KindConfig {
    pub kind: &'static str,
    pub api_version: &'static str,
    pub nodes: Vec<KindNode>,
}

/// One node of a kind cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KindNode {
    pub role: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kubeadm_config_patches: Vec<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct JoinPatch {
    kind: &'static str,
    node_registration: NodeRegistration,
}

#[derive(Debug, Serialize)]
struct NodeRegistration {
    taints: Vec<JoinTaint>,
}

#[derive(Debug, Serialize)]
struct JoinTaint {
    key: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    effect: &'static str,
}

fn effect(e: TaintEffect) -> &'static str {
    match e {
        TaintEffect::NoSchedule => "NoSchedule",
        TaintEffect::PreferNoSchedule => "PreferNoSchedule",
        TaintEffect::NoExecute => "NoExecute",
    }
}

/// Whether a label is Kubernetes' own (`kubernetes.io/hostname`, ...): a
/// kubelet sets those itself and may not be given them, and GKE refuses them.
pub fn reserved_label(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, _)) => {
            prefix == "kubernetes.io"
                || prefix.ends_with(".kubernetes.io")
                || prefix == "k8s.io"
                || prefix.ends_with(".k8s.io")
        }
        None => false,
    }
}

/// The scenario's labels of a node without the reserved ones.
pub fn user_labels(labels: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    labels
        .iter()
        .filter(|(k, _)| !reserved_label(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The labels a worker playing `spec` gets: the scenario's own (but
/// Kubernetes' reserved ones), then the pool, machine type and provisioning
/// as emulated nodes carry them.
pub fn worker_labels(spec: &NodeSpec) -> BTreeMap<String, String> {
    let mut out = user_labels(&spec.labels);
    out.insert(labels::POOL.to_string(), objects::dns_label(&[&spec.pool.name]));
    out.insert(
        labels::MACHINE_TYPE.to_string(),
        objects::dns_label(&[&spec.pool.machine_type]),
    );
    out.insert(
        labels::PROVISIONING.to_string(),
        match spec.pool.provisioning {
            Provisioning::OnDemand => "on-demand",
            Provisioning::Spot => "spot",
        }
        .to_string(),
    );
    out.insert(WORKER_LABEL.to_string(), "true".to_string());
    out
}

/// The kubeadm patch that taints a joining worker.
fn taint_patch(taints: &[Taint]) -> Result<String, KindError> {
    let patch = JoinPatch {
        kind: "JoinConfiguration",
        node_registration: NodeRegistration {
            taints: taints
                .iter()
                .map(|t| JoinTaint {
                    key: t.key.clone(),
                    value: t.value.clone(),
                    effect: effect(t.effect),
                })
                .collect(),
        },
    };
    serde_saphyr::to_string(&patch).map_err(|e| KindError::Yaml(e.to_string()))
}

/// The config for a control plane and one worker per spec, in order.
pub fn config(workers: &[NodeSpec], node_image: Option<&str>) -> Result<KindConfig, KindError> {
    let image = node_image.map(str::to_string);
    let mut nodes = vec![KindNode {
        role: "control-plane",
        image: image.clone(),
        labels: BTreeMap::new(),
        kubeadm_config_patches: Vec::new(),
    }];
    for spec in workers {
        let patches = if spec.taints.is_empty() {
            Vec::new()
        } else {
            vec![taint_patch(&spec.taints)?]
        };
        nodes.push(KindNode {
            role: "worker",
            image: image.clone(),
            labels: worker_labels(spec),
            kubeadm_config_patches: patches,
        });
    }
    Ok(KindConfig {
        kind: "Cluster",
        api_version: API_VERSION,
        nodes,
    })
}

/// The config as YAML (deterministic: fields in declaration order, labels sorted).
pub fn to_yaml(config: &KindConfig) -> Result<String, KindError> {
    serde_saphyr::to_string(config).map_err(|e| KindError::Yaml(e.to_string()))
}

/// The name kind gives the `i`-th worker (0-based) of cluster `cluster`:
/// `<cluster>-worker`, `<cluster>-worker2`, ... in config order.
pub fn worker_name(cluster: &str, i: usize) -> String {
    if i == 0 {
        format!("{cluster}-worker")
    } else {
        format!("{cluster}-worker{}", i + 1)
    }
}
