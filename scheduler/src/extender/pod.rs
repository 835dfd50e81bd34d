//! The pod an extender is sent: a `v1.Pod` as the API server would hand
//! kube-scheduler a pending pod, built from the fields the lab's pod has.
//!
//! A small serde model of the fields sent, rather than k8s-openapi's `Pod`:
//! this crate sits on `schedlab-core` alone and never picks a Kubernetes
//! version (the binary does), and every field the lab knows fits in a few
//! structs. The harness's tests read the JSON back as k8s-openapi's `Pod`,
//! so the shape stays a real one.
//!
//! What is sent: `metadata` (name, namespace `schedlab`, a uid and the
//! labels `schedlab.io/workload`, `schedlab.io/ordinal` and
//! `schedlab.io/pod-id`), `spec` (one container `main` with the pod's
//! requests and limits, `priority`, `schedulerName`, `restartPolicy`,
//! `tolerations`) and `status.phase: Pending`. Names are the lab's own: the
//! simulator's pods have no others, and on a cluster the bind loop's pod
//! is the same pod under the same labels.

use schedlab_core::PendingPod;
use schedlab_core::node::TaintEffect;
use schedlab_core::pod::{PodSpec, RestartPolicy, TolerationOperator};
use schedlab_core::resources::Resources;
use serde::Serialize;
use std::collections::BTreeMap;

/// The namespace the pods sent live in.
pub const NAMESPACE: &str = "schedlab";

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodJson {
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata,
    spec: Spec,
    status: Status,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct Metadata {
    name: String,
    namespace: &'static str,
    uid: String,
    labels: BTreeMap<&'static str, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    containers: Vec<Container>,
    priority: i32,
    scheduler_name: String,
    restart_policy: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tolerations: Vec<Toleration>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct Container {
    name: &'static str,
    image: &'static str,
    resources: Requirements,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct Requirements {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    requests: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    limits: BTreeMap<&'static str, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
struct Toleration {
    #[serde(skip_serializing_if = "String::is_empty")]
    key: String,
    operator: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    effect: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    toleration_seconds: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
struct Status {
    phase: &'static str,
}

/// A resource list as the API writes quantities: cpu in millicores
/// (`500m`), memory in bytes; a zero dimension is left out (not set).
fn quantities(r: Resources) -> BTreeMap<&'static str, String> {
    let mut list = BTreeMap::new();
    if r.cpu_milli > 0 {
        list.insert("cpu", format!("{}m", r.cpu_milli));
    }
    if r.memory_bytes > 0 {
        list.insert("memory", r.memory_bytes.to_string());
    }
    list
}

fn effect_name(effect: TaintEffect) -> &'static str {
    match effect {
        TaintEffect::NoSchedule => "NoSchedule",
        TaintEffect::PreferNoSchedule => "PreferNoSchedule",
        TaintEffect::NoExecute => "NoExecute",
    }
}

impl PodJson {
    /// The pod of one scheduling attempt.
    pub fn of(pod: &PendingPod<'_>) -> PodJson {
        let workload = pod.slot.workload.0;
        let ordinal = pod.slot.ordinal;
        PodJson::build(
            format!("w{workload}-{ordinal}-p{}", pod.id.0),
            BTreeMap::from([
                ("schedlab.io/workload", workload.to_string()),
                ("schedlab.io/ordinal", ordinal.to_string()),
                ("schedlab.io/pod-id", pod.id.0.to_string()),
            ]),
            pod.id.0,
            pod.spec,
        )
    }

    fn build(name: String, labels: BTreeMap<&'static str, String>, id: u64, spec: &PodSpec) -> PodJson {
        PodJson {
            api_version: "v1",
            kind: "Pod",
            metadata: Metadata {
                name,
                namespace: NAMESPACE,
                uid: format!("00000000-0000-4000-8000-{id:012x}"),
                labels,
            },
            spec: Spec {
                containers: vec![Container {
                    name: "main",
                    image: "schedlab/workload",
                    resources: Requirements {
                        requests: quantities(spec.requests),
                        limits: spec.limits.map(quantities).unwrap_or_default(),
                    },
                }],
                priority: spec.priority,
                scheduler_name: spec.scheduler_name.clone(),
                restart_policy: match spec.restart_policy {
                    RestartPolicy::Always => "Always",
                    RestartPolicy::OnFailure => "OnFailure",
                    RestartPolicy::Never => "Never",
                },
                tolerations: spec
                    .tolerations
                    .iter()
                    .map(|t| Toleration {
                        key: t.key.clone(),
                        operator: match t.operator {
                            TolerationOperator::Equal => "Equal",
                            TolerationOperator::Exists => "Exists",
                        },
                        value: t.value.clone(),
                        effect: t.effect.map(effect_name),
                        toleration_seconds: t.toleration_seconds,
                    })
                    .collect(),
            },
            status: Status { phase: "Pending" },
        }
    }

    /// The pod of the check before a run: asks for 100m and 128Mi, which
    /// any node of a scenario could take.
    pub fn probe(scheduler_name: &str) -> PodJson {
        let spec = PodSpec {
            requests: Resources::new(100, 128 << 20),
            limits: None,
            priority: 0,
            scheduler_name: scheduler_name.to_string(),
            restart_policy: RestartPolicy::Always,
            tolerations: Vec::new(),
            behaviour: schedlab_core::pod::Behaviour {
                cpu_usage: schedlab_core::dist::Dist::Const { value: 100.0 },
                memory_usage: schedlab_core::dist::Dist::Const {
                    value: (128u64 << 20) as f64,
                },
                run_seconds: None,
                memory_growth_per_hour: None,
                crash_rate_per_hour: 0.0,
                crash_rate_growth_per_hour: 0.0,
                unstable: false,
            },
        };
        PodJson::build(
            "schedlab-extender-check".to_string(),
            BTreeMap::from([("schedlab.io/check", "true".to_string())]),
            0,
            &spec,
        )
    }

    #[cfg(test)]
    pub(crate) fn example() -> PodJson {
        PodJson::probe("default-scheduler")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::pending;
    use schedlab_core::pod::Toleration as CoreToleration;
    use schedlab_core::testing::{GI, PodSpecChanges, pod};

    #[test]
    fn a_pending_pod_is_sent_as_a_v1_pod_with_its_requests_priority_and_tolerations() {
        let mut spec = pod(500, 2 * GI).priority(7);
        spec.tolerations.push(CoreToleration {
            key: "spot".into(),
            operator: TolerationOperator::Equal,
            value: Some("true".into()),
            effect: Some(TaintEffect::NoSchedule),
            toleration_seconds: None,
        });
        let value = serde_json::to_value(PodJson::of(&pending(&spec))).unwrap();
        assert_eq!(value["apiVersion"], "v1");
        assert_eq!(value["kind"], "Pod");
        assert_eq!(value["metadata"]["namespace"], NAMESPACE);
        let container = &value["spec"]["containers"][0];
        assert_eq!(container["resources"]["requests"]["cpu"], "500m");
        assert_eq!(container["resources"]["requests"]["memory"], (2 * GI).to_string());
        assert_eq!(value["spec"]["priority"], 7);
        assert_eq!(
            value["spec"]["tolerations"],
            serde_json::json!([{"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}])
        );
        assert_eq!(value["status"]["phase"], "Pending");
    }
}
