//! What the emulator writes about its nodes: the Ready and Degraded
//! conditions (nodes/status), the unreachable taints a node-lifecycle
//! controller would add (when none runs), and the node Lease.

use super::status::rfc3339;
use crate::labels;
use k8s_openapi::api::core::v1 as core;
use schedlab_core::node::NodeCondition;
use serde_json::{Value, json};

/// kubelet's `nodeLeaseDurationSeconds` default.
pub const LEASE_DURATION_SECONDS: i32 = 40;

/// What the emulator remembers of a node besides the driver's model.
#[derive(Debug, Clone)]
pub struct NodeBook {
    pub uid: String,
    /// the node's taints other than the unreachable and not-ready ones
    pub other_taints: Vec<core::Taint>,
    /// when Ready and Degraded last changed
    pub ready_since: jiff::Timestamp,
    pub degraded_since: jiff::Timestamp,
}

fn is_failure_taint(t: &core::Taint) -> bool {
    t.key == labels::UNREACHABLE_TAINT || t.key == labels::NOT_READY_TAINT
}

fn condition_since(node: &core::Node, type_: &str) -> Option<jiff::Timestamp> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)?
        .last_transition_time
        .as_ref()
        .map(|t| t.0)
}

impl NodeBook {
    /// What a node object says, at adoption.
    pub fn of(node: &core::Node, now: jiff::Timestamp) -> NodeBook {
        let mut book = NodeBook {
            uid: node.metadata.uid.clone().unwrap_or_default(),
            other_taints: Vec::new(),
            ready_since: condition_since(node, "Ready").unwrap_or(now),
            degraded_since: condition_since(node, labels::DEGRADED_CONDITION).unwrap_or(now),
        };
        book.update(node);
        book
    }

    /// Keeps the taints others put on the node.
    pub fn update(&mut self, node: &core::Node) {
        self.other_taints = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .map(|ts| ts.iter().filter(|t| !is_failure_taint(t)).cloned().collect())
            .unwrap_or_default();
    }

    /// Notes a condition change at `now`.
    pub fn changed(&mut self, from: NodeCondition, to: NodeCondition, now: jiff::Timestamp) {
        if from.is_ready() != to.is_ready() {
            self.ready_since = now;
        }
        if (from == NodeCondition::Degraded) != (to == NodeCondition::Degraded) {
            self.degraded_since = now;
        }
    }
}

fn node_condition_json(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
    since: jiff::Timestamp,
    now: &str,
) -> Value {
    json!({
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastHeartbeatTime": now,
        "lastTransitionTime": rfc3339(since),
    })
}

/// The strategic merge patch of nodes/status for a node in `condition`:
/// Ready (Unknown once the node stopped reporting, as the node-lifecycle
/// controller writes it) and Degraded, merged by type into what is there.
pub fn node_status_patch(condition: NodeCondition, book: &NodeBook, now: jiff::Timestamp) -> Value {
    let now_text = rfc3339(now);
    let ready = match condition {
        NodeCondition::NotReady => node_condition_json(
            "Ready",
            "Unknown",
            "NodeStatusUnknown",
            "Kubelet stopped posting node status.",
            book.ready_since,
            &now_text,
        ),
        _ => node_condition_json(
            "Ready",
            "True",
            "KubeletReady",
            "kubelet is posting ready status",
            book.ready_since,
            &now_text,
        ),
    };
    let degraded = if condition == NodeCondition::Degraded {
        node_condition_json(
            labels::DEGRADED_CONDITION,
            "True",
            "Degraded",
            "the node's pods crash more often",
            book.degraded_since,
            &now_text,
        )
    } else {
        node_condition_json(
            labels::DEGRADED_CONDITION,
            "False",
            "Healthy",
            "",
            book.degraded_since,
            &now_text,
        )
    };
    json!({ "status": { "conditions": [ready, degraded] } })
}

/// The JSON merge patch of the node's taints: the others' taints, plus the
/// unreachable NoSchedule and NoExecute taints while `failed`. A merge patch
/// replaces the list whole (taints have no merge key that tells the two
/// unreachable taints apart).
pub fn taints_patch(book: &NodeBook, failed: bool, now: jiff::Timestamp) -> Value {
    let mut taints: Vec<Value> = book
        .other_taints
        .iter()
        .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
        .collect();
    if failed {
        taints.push(json!({ "key": labels::UNREACHABLE_TAINT, "effect": "NoSchedule", "timeAdded": rfc3339(now) }));
        taints.push(json!({ "key": labels::UNREACHABLE_TAINT, "effect": "NoExecute", "timeAdded": rfc3339(now) }));
    }
    let taints = if taints.is_empty() {
        Value::Null
    } else {
        Value::Array(taints)
    };
    json!({ "spec": { "taints": taints } })
}

/// A MicroTime as the API writes it (microseconds, UTC).
pub fn micro_time(ts: jiff::Timestamp) -> String {
    ts.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// The merge patch that renews `node`'s Lease at `now`.
pub fn lease_renewal(node: &str, now: jiff::Timestamp) -> Value {
    json!({
        "spec": {
            "holderIdentity": node,
            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "renewTime": micro_time(now),
        }
    })
}

/// A new Lease for `node` of run `run`, owned by the node as kubelet makes it.
pub fn lease_object(run: &str, node: &str, node_uid: &str, now: jiff::Timestamp) -> Value {
    let mut lease = json!({
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {
            "name": node,
            "namespace": labels::NODE_LEASE_NAMESPACE,
            "labels": { labels::RUN: run },
        },
        "spec": {
            "holderIdentity": node,
            "leaseDurationSeconds": LEASE_DURATION_SECONDS,
            "renewTime": micro_time(now),
        }
    });
    if !node_uid.is_empty() {
        lease["metadata"]["ownerReferences"] = json!([{
            "apiVersion": "v1",
            "kind": "Node",
            "name": node,
            "uid": node_uid,
        }]);
    }
    lease
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::objects;
    use k8s_openapi::api::coordination::v1::Lease;
    use schedlab_core::node::{NodeId, NodePool, NodeSpec, Provisioning, Taint, TaintEffect};
    use schedlab_core::resources::Resources;

    fn node() -> core::Node {
        let spec = NodeSpec {
            name: "n0".into(),
            pool: NodePool {
                name: "p".into(),
                machine_type: "m".into(),
                hourly_price: 0.1,
                provisioning: Provisioning::OnDemand,
            },
            capacity: Resources::new(4000, 8 << 30),
            allocatable: Resources::new(4000, 8 << 30),
            max_pods: 110,
            labels: Default::default(),
            taints: vec![Taint {
                key: "gpu".into(),
                value: Some("yes".into()),
                effect: TaintEffect::NoSchedule,
            }],
        };
        objects::node_object("r", NodeId(0), &spec, true)
    }

    #[test]
    fn failing_adds_both_unreachable_taints_and_keeps_the_others() {
        let now = jiff::Timestamp::now();
        let book = NodeBook::of(&node(), now);
        let p = taints_patch(&book, true, now);
        let taints = p["spec"]["taints"].as_array().unwrap();
        assert_eq!(taints.len(), 3);
        assert_eq!(taints[0]["key"], "gpu");
        let effects: Vec<&str> = taints[1..].iter().map(|t| t["effect"].as_str().unwrap()).collect();
        assert_eq!(effects, ["NoSchedule", "NoExecute"]);
        assert!(taints[1..].iter().all(|t| t["key"] == labels::UNREACHABLE_TAINT));
        // recovering keeps only the others
        let mut tainted = node();
        tainted.spec.as_mut().unwrap().taints = Some(serde_json::from_value(p["spec"]["taints"].clone()).unwrap());
        let mut book = NodeBook::of(&tainted, now);
        book.update(&tainted);
        let p = taints_patch(&book, false, now);
        assert_eq!(p["spec"]["taints"].as_array().unwrap().len(), 1);
    }

    #[test]
    fn a_failed_node_reports_ready_unknown() {
        let now = jiff::Timestamp::now();
        let book = NodeBook::of(&node(), now);
        let p = node_status_patch(NodeCondition::NotReady, &book, now);
        let mut n = node();
        n.status.as_mut().unwrap().conditions = serde_json::from_value(p["status"]["conditions"].clone()).unwrap();
        assert_eq!(objects::node_condition_of(&n), NodeCondition::NotReady);
        let p = node_status_patch(NodeCondition::Degraded, &book, now);
        n.status.as_mut().unwrap().conditions = serde_json::from_value(p["status"]["conditions"].clone()).unwrap();
        assert_eq!(objects::node_condition_of(&n), NodeCondition::Degraded);
    }

    #[test]
    fn leases_parse_as_core_objects() {
        let now = jiff::Timestamp::now();
        let lease: Lease = serde_json::from_value(lease_object("r", "n0", "uid-1", now)).unwrap();
        let spec = lease.spec.unwrap();
        assert_eq!(spec.holder_identity.as_deref(), Some("n0"));
        let renewed = spec.renew_time.unwrap().0;
        assert!(renewed.duration_since(now).as_secs_f64().abs() < 1e-3);
        assert_eq!(
            lease.metadata.labels.unwrap().get(labels::RUN).map(String::as_str),
            Some("r")
        );
    }
}
