//! What a backend plays: the cluster's nodes, the workloads, and a time-ordered
//! list of actions. `workloads` expands a scenario and a seed into a
//! [`Timeline`]; every backend plays the same timeline the same way, whatever
//! scheduler runs, so all arms of a seed see one workload and one fault schedule.

use crate::node::{NodeId, NodeSpec};
use crate::pod::{PodSlot, PodSpec, WorkloadId};
use crate::record::Record;
use crate::time::{Span, Time};
use serde::{Deserialize, Serialize};

/// A set of pods with an owner (a controller such as a ReplicaSet or Job),
/// alike but for their requests when those vary by pod.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    pub id: WorkloadId,
    pub name: String,
    pub spec: PodSpec,
    /// The owner replaces a pod of this workload that was evicted, deleted by
    /// churn, or failed for good (restartPolicy Never), as a ReplicaSet does.
    pub recreate: bool,
    /// The spec of each pod slot (by ordinal) when requests vary between
    /// pods of the workload, as a vertical autoscaler's recommendations do:
    /// drawn once per slot at expansion, so every arm of a seed (and every
    /// incarnation of the slot) asks for the same. Empty: every pod uses
    /// `spec`; a slot beyond the list uses `spec` too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slot_specs: Vec<PodSpec>,
}

impl Workload {
    /// The spec of the workload's pod in slot `ordinal`: what every backend
    /// creates, schedules and runs for it.
    pub fn spec_of(&self, ordinal: u32) -> &PodSpec {
        self.slot_specs.get(ordinal as usize).unwrap_or(&self.spec)
    }
}

/// Something the scenario does at a point in time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "kebab-case")]
pub enum Action {
    /// Create the pod for a slot (its first incarnation).
    CreatePod { slot: PodSlot },
    /// Delete the slot's current pod, if it has one; with `recreate`, the
    /// owner creates a new pod for the slot (churn).
    DeletePod { slot: PodSlot, recreate: bool },
    /// Kill the slot's running container (it exits with an error and is
    /// restarted according to its restart policy).
    KillPod { slot: PodSlot },
    /// The node stops reporting: NotReady, its containers stop, its pods are
    /// evicted after their toleration time.
    FailNode { node: NodeId },
    /// The node is healthy again (from NotReady or Degraded).
    RecoverNode { node: NodeId },
    /// The node stays Ready but its pods crash more often.
    DegradeNode { node: NodeId },
    /// The node leaves the cluster (a spot reclaim, a lost VM): its pods are
    /// evicted at once, and it takes no pods until it is replaced.
    LoseNode { node: NodeId },
    /// A new node takes a lost node's place, as a managed instance group
    /// recreates a VM: same name and spec, empty, healthy, with no history.
    ReplaceNode { node: NodeId },
}

impl Action {
    /// The slot a pod action is about.
    pub fn slot(&self) -> Option<PodSlot> {
        match *self {
            Action::CreatePod { slot } | Action::DeletePod { slot, .. } | Action::KillPod { slot } => Some(slot),
            _ => None,
        }
    }

    /// The node a node action is about.
    pub fn node(&self) -> Option<NodeId> {
        match *self {
            Action::FailNode { node }
            | Action::RecoverNode { node }
            | Action::DegradeNode { node }
            | Action::LoseNode { node }
            | Action::ReplaceNode { node } => Some(node),
            Action::CreatePod { .. } | Action::DeletePod { .. } | Action::KillPod { .. } => None,
        }
    }
}

/// An action and when it happens.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimedAction {
    pub at: Time,
    #[serde(flatten)]
    pub action: Action,
}

/// A fully expanded scenario run: nodes, workloads, actions (sorted by time,
/// stable for equal times), when the run ends and how often to sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    pub nodes: Vec<NodeSpec>,
    pub workloads: Vec<Workload>,
    pub actions: Vec<TimedAction>,
    pub end: Time,
    pub sample_interval: Span,
}

impl Timeline {
    pub fn workload(&self, id: WorkloadId) -> Option<&Workload> {
        self.workloads.get(id.0 as usize)
    }

    /// The spec of the pod in `slot`, if its workload exists.
    pub fn spec_of(&self, slot: PodSlot) -> Option<&PodSpec> {
        self.workload(slot.workload).map(|w| w.spec_of(slot.ordinal))
    }

    /// The [`Record::Workload`] of every workload, in id order: what a
    /// backend writes after the nodes' records.
    pub fn workload_records(&self) -> impl Iterator<Item = Record> + '_ {
        self.workloads.iter().map(|w| Record::Workload {
            workload: w.id,
            name: w.name.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{pod, workload};

    #[test]
    fn a_slot_uses_its_own_spec_when_it_has_one() {
        let mut w = workload(0, "w", pod(500, 1 << 20));
        assert_eq!(w.spec_of(3).requests.cpu_milli, 500);
        w.slot_specs = vec![pod(100, 1 << 20), pod(200, 1 << 20)];
        assert_eq!(w.spec_of(0).requests.cpu_milli, 100);
        assert_eq!(w.spec_of(1).requests.cpu_milli, 200);
        // a slot beyond the list (never created by the expansion) falls back
        assert_eq!(w.spec_of(2).requests.cpu_milli, 500);
    }
}
