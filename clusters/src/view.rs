//! What a scheduler sees and what it answers: a read-only view of the
//! cluster, the pending pod, and a placement. Backends build the view; the
//! `scheduler` crate's policies read it.

use crate::node::{NodeId, NodeState};
use crate::pod::{PodId, PodSlot, PodSpec};
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
}

impl<'a> ClusterView<'a> {
    pub fn node(&self, id: NodeId) -> Option<&'a NodeState> {
        self.nodes.get(id.index())
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
}
