//! The names schedlab writes into API objects. Everything a run creates
//! carries [`RUN`], so teardown can find it and nothing else.

use schedlab_core::verdict::Answer;

/// On every object of a run: the run's id.
pub const RUN: &str = "schedlab.io/run";

/// On nodes: the node's index in the timeline ([`schedlab_core::NodeId`]).
pub const NODE_ID: &str = "schedlab.io/node-id";
/// On nodes: the node pool's name, machine type and provisioning.
pub const POOL: &str = "schedlab.io/pool";
pub const MACHINE_TYPE: &str = "node.kubernetes.io/instance-type";
pub const PROVISIONING: &str = "schedlab.io/provisioning";
/// On nodes (annotation): US dollars per hour, as a decimal.
pub const HOURLY_PRICE: &str = "schedlab.io/hourly-price";
/// On nodes: "true" when the node emulator plays the node's kubelet.
pub const EMULATED: &str = "schedlab.io/emulated";

/// On pods: the pod's [`schedlab_core::PodId`], its slot and incarnation.
pub const POD_ID: &str = "schedlab.io/pod-id";
pub const WORKLOAD: &str = "schedlab.io/workload";
pub const ORDINAL: &str = "schedlab.io/ordinal";
pub const INCARNATION: &str = "schedlab.io/incarnation";
/// On pods: "true" for the scenario's unstable pods (schedulers may read it).
pub const UNSTABLE: &str = "schedlab.io/unstable";
/// On pods (annotation): the pod's [`schedlab_core::Behaviour`] as JSON, so the node
/// emulator needs nothing but the API object to play the pod.
pub const BEHAVIOUR: &str = "schedlab.io/behaviour";
/// On pods (annotation): the run's seed (the behaviour model's draws are keyed by it).
pub const SEED: &str = "schedlab.io/seed";

/// Pod condition type the node emulator keeps with the running container's
/// usage in its message, as [`crate::objects::format_usage`] writes it.
pub const USAGE_CONDITION: &str = "schedlab.io/Usage";
/// Node condition type: True while the node is Degraded (Ready, but its pods
/// crash more often). The default scheduler does not read it.
pub const DEGRADED_CONDITION: &str = "schedlab.io/Degraded";
/// PodScheduled=False reason a policy writes when it declines a pod
/// (strategic restraint); kube-scheduler's own reason is `Unschedulable`.
pub const DECLINED_REASON: &str = "Declined";
pub const UNSCHEDULABLE_REASON: &str = "Unschedulable";

/// `status.reason` of a pod the node emulator evicts from a failed node
/// before deleting it (as kubelet and the taint manager say it).
pub const EVICTED_REASON: &str = "Evicted";
/// `lastState.terminated.message` of an OOM kill: what triggered it.
pub const OOM_LIMIT_MESSAGE: &str = "limit";
pub const OOM_NODE_PRESSURE_MESSAGE: &str = "node-pressure";

/// The taints the node-lifecycle controller puts on a node that stopped
/// reporting; the node emulator puts them itself when no controller runs.
pub const UNREACHABLE_TAINT: &str = "node.kubernetes.io/unreachable";
pub const NOT_READY_TAINT: &str = "node.kubernetes.io/not-ready";

/// The namespace of node Leases.
pub const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

/// The field manager of every server-side apply and patch schedlab makes.
pub const FIELD_MANAGER: &str = "schedlab";

/// The label selector of everything of run `run`.
pub fn run_selector(run: &str) -> String {
    format!("{RUN}={run}")
}

/// An answer as the PodScheduled condition's reason says it.
pub fn condition_reason(answer: Answer) -> &'static str {
    match answer {
        Answer::Unschedulable => UNSCHEDULABLE_REASON,
        Answer::Declined => DECLINED_REASON,
    }
}

/// The answer a PodScheduled condition's reason says, if it is one of ours.
pub fn answer_of_reason(reason: &str) -> Option<Answer> {
    match reason {
        UNSCHEDULABLE_REASON => Some(Answer::Unschedulable),
        DECLINED_REASON => Some(Answer::Declined),
        _ => None,
    }
}
