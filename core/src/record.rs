//! The raw records of a run: every event with its time, and samples of every
//! node and of the cluster. Backends write them; `results` computes every
//! metric from them and from nothing else.

use crate::node::{NodeCondition, NodeId, NodeSpec};
use crate::pod::{PodId, PodSlot, QosClass, WorkloadId};
use crate::resources::Resources;
use crate::time::Time;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Why a container stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ExitReason {
    /// ran to completion (exit code 0)
    Completed,
    /// crashed (non-zero exit code), by itself or killed by a fault
    Error,
    /// killed by the kernel's OOM killer
    OOMKilled,
}

/// What triggered an OOM kill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OomCause {
    /// the container passed its own memory limit
    Limit,
    /// the node ran out of memory and the container was the chosen victim
    NodePressure,
}

/// Why a pod was deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DeleteCause {
    /// the scenario's churn deleted it (its owner recreates it)
    Churn,
    /// the scenario deleted it for good
    Scenario,
    /// the scheduler deleted it to make room for a pod of higher priority
    /// (kube-scheduler's DefaultPreemption); its owner recreates it
    Preempted,
}

/// Something that happened in the cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    PodCreated {
        pod: PodId,
        slot: PodSlot,
        requests: Resources,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        memory_limit: Option<u64>,
        priority: i32,
        qos: QosClass,
        unstable: bool,
    },
    /// the scheduler found no feasible node (recorded when a pod first
    /// becomes unschedulable, not at every retry)
    PodUnschedulable {
        pod: PodId,
        reason: Cow<'static, str>,
    },
    /// the scheduler chose not to place the pod although it could have
    /// (strategic restraint; recorded when a pod is first declined)
    PodDeclined {
        pod: PodId,
        reason: Cow<'static, str>,
    },
    PodBound {
        pod: PodId,
        node: NodeId,
    },
    /// a container started; `restart_count` > 0 marks a restart
    ContainerStarted {
        pod: PodId,
        node: NodeId,
        restart_count: u32,
        usage: Resources,
    },
    ContainerExited {
        pod: PodId,
        node: NodeId,
        reason: ExitReason,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        oom_cause: Option<OomCause>,
    },
    /// all containers completed; the pod is done
    PodSucceeded {
        pod: PodId,
        node: NodeId,
    },
    /// the pod failed for good (restartPolicy Never or OnFailure exhausted)
    PodFailed {
        pod: PodId,
        node: NodeId,
    },
    /// evicted from a failed node after its toleration time
    PodEvicted {
        pod: PodId,
        node: NodeId,
    },
    PodDeleted {
        pod: PodId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<NodeId>,
        cause: DeleteCause,
    },
    /// preemption chose `node` for the pending pod and deleted its victims
    /// there (recorded before their deletions); the pod stays pending until
    /// it is bound, on that node or another
    PodNominated {
        pod: PodId,
        node: NodeId,
        victims: u32,
    },
    NodeFailed {
        node: NodeId,
    },
    NodeDegraded {
        node: NodeId,
    },
    NodeRecovered {
        node: NodeId,
    },
    /// the node left the cluster for good (a spot reclaim, a lost VM): its
    /// pods were evicted at once and it takes no pods until it is replaced
    NodeLost {
        node: NodeId,
    },
    /// a new node took a lost node's place (as a managed instance group
    /// recreates a VM): same name and spec, empty and healthy
    NodeReplaced {
        node: NodeId,
    },
}

impl EventKind {
    /// The `pod_created` event of pod `pod` in `slot`, made from its spec:
    /// one place for every backend, so a field added to the event is
    /// recorded the same way everywhere.
    pub fn pod_created(pod: PodId, slot: PodSlot, spec: &crate::pod::PodSpec) -> EventKind {
        EventKind::PodCreated {
            pod,
            slot,
            requests: spec.requests,
            memory_limit: spec.memory_limit(),
            priority: spec.priority,
            qos: spec.qos_class(),
            unstable: spec.behaviour.unstable,
        }
    }

    /// The pod the event is about, if any.
    pub fn pod(&self) -> Option<PodId> {
        use EventKind as E;
        match self {
            E::PodCreated { pod, .. }
            | E::PodUnschedulable { pod, .. }
            | E::PodDeclined { pod, .. }
            | E::PodBound { pod, .. }
            | E::ContainerStarted { pod, .. }
            | E::ContainerExited { pod, .. }
            | E::PodSucceeded { pod, .. }
            | E::PodFailed { pod, .. }
            | E::PodEvicted { pod, .. }
            | E::PodDeleted { pod, .. }
            | E::PodNominated { pod, .. } => Some(*pod),
            E::NodeFailed { .. }
            | E::NodeDegraded { .. }
            | E::NodeRecovered { .. }
            | E::NodeLost { .. }
            | E::NodeReplaced { .. } => None,
        }
    }

    /// Whether the event is a failure as schedlab counts them everywhere (the
    /// `failures` metric, a node's and a workload's recent trouble): a
    /// container that exited with an error or was OOM-killed, an eviction, a
    /// pod failed for good.
    pub fn is_failure(&self) -> bool {
        match self {
            EventKind::ContainerExited { reason, .. } => matches!(reason, ExitReason::Error | ExitReason::OOMKilled),
            EventKind::PodEvicted { .. } | EventKind::PodFailed { .. } => true,
            _ => false,
        }
    }

    /// The node the event happened on, if any.
    pub fn node(&self) -> Option<NodeId> {
        use EventKind as E;
        match self {
            E::PodBound { node, .. }
            | E::ContainerStarted { node, .. }
            | E::ContainerExited { node, .. }
            | E::PodSucceeded { node, .. }
            | E::PodFailed { node, .. }
            | E::PodEvicted { node, .. }
            | E::NodeFailed { node }
            | E::NodeDegraded { node }
            | E::NodeRecovered { node }
            | E::NodeLost { node }
            | E::NodeReplaced { node }
            | E::PodNominated { node, .. } => Some(*node),
            E::PodDeleted { node, .. } => *node,
            E::PodCreated { .. } | E::PodUnschedulable { .. } | E::PodDeclined { .. } => None,
        }
    }
}

/// An event and when it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub t: Time,
    #[serde(flatten)]
    pub kind: EventKind,
}

/// One node at one sample time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSample {
    pub t: Time,
    pub node: NodeId,
    pub requested: Resources,
    pub used: Resources,
    pub pods: u32,
    pub condition: NodeCondition,
}

/// The whole cluster at one sample time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterSample {
    pub t: Time,
    pub allocatable: Resources,
    pub requested: Resources,
    pub used: Resources,
    /// pods created and not yet bound
    pub pending: u32,
    /// pods bound to a node (running or restarting)
    pub bound: u32,
    /// nodes hosting at least one pod
    pub nodes_in_use: u32,
    pub nodes_ready: u32,
    /// cost rate of the nodes in use, US dollars per hour
    pub hourly_cost: f64,
}

/// One line of a run's raw records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// a node of the cluster, written once at the start
    Node {
        node: NodeId,
        spec: NodeSpec,
    },
    /// a workload (a scenario template) of the run, written once at the
    /// start after the nodes, so metrics can name the strata they split by
    Workload {
        workload: WorkloadId,
        name: String,
    },
    Event(Event),
    NodeSample(NodeSample),
    ClusterSample(ClusterSample),
    /// the last record of a complete run
    End {
        t: Time,
    },
}

/// Where a backend writes its records.
pub trait RecordSink {
    fn record(&mut self, record: Record);

    /// One scheduling decision's record, written when the run's policy
    /// explains its decisions (`--explain`); it goes to its own file, and a
    /// sink that keeps none ignores it.
    fn decision(&mut self, _decision: crate::decision::DecisionRecord) {}
}

impl RecordSink for Vec<Record> {
    fn record(&mut self, record: Record) {
        self.push(record);
    }
}
