//! What a scheduler sees and what it answers: a read-only view of the
//! cluster, the pending pod, and a placement. Backends build the view; the
//! `scheduler` crate's policies read it.

use crate::node::{NodeId, NodeState};
use crate::pod::{PodId, PodSlot, PodSpec};
use crate::resources::Resources;
use crate::time::Time;
use std::borrow::Cow;

/// Observed history of a pod's workload, for schedulers that learn from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WorkloadHistory {
    /// pods of the workload created so far
    pub pods: u32,
    pub restarts: u32,
    pub oom_kills: u32,
    pub failures: u32,
}

/// A pod waiting for a node.
#[derive(Debug, Clone, Copy)]
pub struct PendingPod<'a> {
    pub id: PodId,
    pub slot: PodSlot,
    pub spec: &'a PodSpec,
    pub created: Time,
    /// scheduling attempts before this one
    pub attempts: u32,
    pub history: WorkloadHistory,
}

/// A pod bound to a node, as preemption weighs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoundPod {
    pub id: PodId,
    pub priority: i32,
    pub requests: Resources,
    /// when it was bound (a pod's `status.startTime`, which the kubelet sets
    /// as it admits the pod)
    pub started: Time,
}

/// A pending pod that preemption nominated to a node (`status.nominatedNodeName`):
/// kube-scheduler keeps its requests free there for pods of lower priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nomination {
    pub pod: PodId,
    pub node: NodeId,
    pub priority: i32,
    pub requests: Resources,
}

/// The cluster as a scheduler sees it at one moment.
#[derive(Debug, Clone, Copy)]
pub struct ClusterView<'a> {
    pub now: Time,
    /// every node, indexed by [`NodeId`]
    pub nodes: &'a [NodeState],
    /// pods created and not yet bound (including the one being scheduled)
    pub pending_pods: u32,
    /// pods bound to a node
    pub bound_pods: u32,
    /// the pods bound to each node, indexed by [`NodeId`]; a backend that
    /// does not list them gives an empty slice, and preemption then finds
    /// nothing to evict
    pub pods_by_node: &'a [Vec<BoundPod>],
    /// the lowest priority among the pods of `pods_by_node` (None without
    /// any), so a policy sees at once whether a pod could preempt anything
    pub lowest_bound_priority: Option<i32>,
    /// pending pods nominated to a node by preemption
    pub nominated: &'a [Nomination],
}

impl<'a> ClusterView<'a> {
    /// A view of `nodes` without pod lists or nominations.
    pub fn of_nodes(now: Time, nodes: &'a [NodeState], pending_pods: u32, bound_pods: u32) -> ClusterView<'a> {
        ClusterView {
            now,
            nodes,
            pending_pods,
            bound_pods,
            pods_by_node: &[],
            lowest_bound_priority: None,
            nominated: &[],
        }
    }

    pub fn node(&self, id: NodeId) -> Option<&'a NodeState> {
        self.nodes.get(id.index())
    }

    /// The pods bound to `node` (empty when the backend does not list them).
    pub fn pods_on(&self, node: NodeId) -> &'a [BoundPod] {
        self.pods_by_node.get(node.index()).map_or(&[], Vec::as_slice)
    }

    /// Why `node` cannot take a pod of `spec`, if it cannot. Backends check a
    /// policy's answer with it before binding, so a policy's mistake never
    /// reaches the cluster.
    pub fn check_bind(&self, node: NodeId, spec: &PodSpec) -> Result<(), String> {
        let Some(n) = self.node(node) else {
            return Err(format!("node {} does not exist", node.0));
        };
        if !n.condition.is_ready() {
            return Err(format!("node {} is not ready", n.spec.name));
        }
        if n.pod_count >= n.spec.max_pods {
            return Err(format!(
                "node {} already runs its {} pods",
                n.spec.name, n.spec.max_pods
            ));
        }
        if !(n.requested + spec.requests).fits_in(&n.spec.allocatable) {
            return Err(format!("node {} lacks room for the pod's requests", n.spec.name));
        }
        Ok(())
    }
}

/// A scheduler's answer for one pending pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// bind the pod to this node
    Bind(NodeId),
    /// no node is feasible; the pod stays pending and is retried with back-off
    Unschedulable { reason: Cow<'static, str> },
    /// feasible nodes exist, but the policy chose not to place the pod now
    /// (strategic restraint); it stays pending and is retried with back-off
    Decline { reason: Cow<'static, str> },
    /// no node is feasible, but deleting `victims` (pods of lower priority
    /// bound to `node`) makes room (kube-scheduler's DefaultPreemption): the
    /// backend deletes them and nominates the pod to `node`; the pod stays
    /// pending with `reason` (the failure message) and is retried with back-off
    Preempt {
        node: NodeId,
        victims: Vec<PodId>,
        reason: Cow<'static, str>,
    },
}
