//! Feasibility: the Filter plugins of kube-scheduler's default profile that
//! the cluster model has data for (NodeUnschedulable, TaintToleration,
//! NodeResourcesFit; enabled in that order by [`crate::profile::DEFAULT_FILTERS`], after
//! `pkg/scheduler/apis/config/v1/default_plugins.go`). As in
//! `pkg/scheduler/framework/runtime/framework.go` `RunFilterPlugins`, the first
//! plugin that rejects a node decides the node's failure reasons.
//!
//! Not modelled because the model has no such data: NodeName, NodeAffinity,
//! NodePorts, the volume plugins, PodTopologySpread, InterPodAffinity.

use schedlab_core::node::{NodeState, Taint, TaintEffect};
use schedlab_core::pod::{PodSpec, Toleration};
use std::sync::LazyLock;

/// The taint key that stands for a cordoned node (`v1.TaintNodeUnschedulable`).
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
/// The taint key the node lifecycle controller puts on a node whose kubelet
/// stopped posting status (Ready condition Unknown; `v1.TaintNodeUnreachable`).
pub const TAINT_NODE_UNREACHABLE: &str = "node.kubernetes.io/unreachable";

static UNSCHEDULABLE_TAINT: LazyLock<Taint> = LazyLock::new(|| Taint {
    key: TAINT_NODE_UNSCHEDULABLE.to_string(),
    value: None,
    effect: TaintEffect::NoSchedule,
});

/// What `pkg/controller/nodelifecycle` puts on a node whose kubelet stopped
/// reporting: `UnreachableTaintTemplate` (NoSchedule, from the
/// TaintNodesByCondition path) and the NoExecute taint of taint-based
/// eviction. The model's [`schedlab_core::NodeCondition::NotReady`] is exactly that
/// case ("its kubelet stopped reporting"), hence unreachable rather than
/// `node.kubernetes.io/not-ready` (which is for Ready=False).
static NOT_READY_TAINTS: LazyLock<[Taint; 2]> = LazyLock::new(|| {
    [TaintEffect::NoSchedule, TaintEffect::NoExecute].map(|effect| Taint {
        key: TAINT_NODE_UNREACHABLE.to_string(),
        value: None,
        effect,
    })
});

/// Which resources NodeResourcesFit found short on a node; a node can be short
/// of several at once and upstream reports all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Insufficient {
    /// "Too many pods": the node is at its pod limit
    pub pods: bool,
    /// "Insufficient cpu"
    pub cpu: bool,
    /// "Insufficient memory"
    pub memory: bool,
}

impl Insufficient {
    pub fn any(self) -> bool {
        self.pods || self.cpu || self.memory
    }
}

/// Why a node is infeasible for a pod: the verdict of the first Filter plugin
/// that rejected it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterFailure<'a> {
    /// NodeUnschedulable: cordoned, and the pod does not tolerate
    /// `node.kubernetes.io/unschedulable:NoSchedule`.
    Unschedulable,
    /// TaintToleration: the first NoSchedule/NoExecute taint the pod does not
    /// tolerate (including the synthetic unreachable taints of a NotReady node).
    UntoleratedTaint(&'a Taint),
    /// NodeResourcesFit.
    Insufficient(Insufficient),
    /// A Filter plugin outside the default profile (Koordinator's
    /// LoadAwareScheduling), with its reason as that plugin words it.
    Plugin(&'static str),
}

/// Runs the default profile's filters ([`crate::profile::DEFAULT_FILTERS`]) on `node` in
/// order, as direct calls: the node scan's hot path (a test checks it
/// against the list).
pub fn run_filters<'a>(pod: &PodSpec, node: &'a NodeState) -> Result<(), FilterFailure<'a>> {
    node_unschedulable(pod, node)?;
    taint_toleration(pod, node)?;
    node_resources_fit(pod, node)
}

/// Whether `node` is feasible for `pod`.
pub fn is_feasible(pod: &PodSpec, node: &NodeState) -> bool {
    run_filters(pod, node).is_ok()
}

fn tolerates(tolerations: &[Toleration], taint: &Taint) -> bool {
    tolerations.iter().any(|t| t.tolerates(taint))
}

/// NodeUnschedulable, after
/// `pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`
/// `Filter`: a cordoned node rejects pods unless they tolerate the
/// unschedulable taint.
pub fn node_unschedulable<'a>(pod: &PodSpec, node: &'a NodeState) -> Result<(), FilterFailure<'a>> {
    if node.unschedulable && !tolerates(&pod.tolerations, &UNSCHEDULABLE_TAINT) {
        return Err(FilterFailure::Unschedulable);
    }
    Ok(())
}

/// TaintToleration, after
/// `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`
/// `Filter` (`v1helper.FindMatchingUntoleratedTaint` with
/// `DoNotScheduleTaintsFilterFunc`): the first NoSchedule or NoExecute taint
/// the pod does not tolerate rejects the node.
///
/// The Ready check lives here because upstream has no Ready filter: the
/// scheduler relies on the node lifecycle controller tainting a node that
/// stopped reporting. A NotReady node therefore carries, after its own
/// taints, the synthetic `node.kubernetes.io/unreachable` NoSchedule and
/// NoExecute taints, which only pods tolerating them pass. Degraded nodes
/// report Ready and are not tainted.
pub fn taint_toleration<'a>(pod: &PodSpec, node: &'a NodeState) -> Result<(), FilterFailure<'a>> {
    let synthetic: &'a [Taint] = if node.condition.is_ready() {
        &[]
    } else {
        NOT_READY_TAINTS.as_slice()
    };
    let untolerated = node
        .spec
        .taints
        .iter()
        .chain(synthetic)
        .filter(|t| matches!(t.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute))
        .find(|t| !tolerates(&pod.tolerations, t));
    match untolerated {
        Some(taint) => Err(FilterFailure::UntoleratedTaint(taint)),
        None => Ok(()),
    }
}

/// NodeResourcesFit, after `pkg/scheduler/framework/plugins/noderesources/fit.go`
/// `fitsRequest`: the pod count must stay within the node's pod limit, and
/// each resource the pod requests must fit in allocatable minus the real
/// requests of the node's pods. A resource the pod does not request always
/// fits (upstream skips it), so an overcommitted node still takes best-effort
/// pods.
pub fn node_resources_fit<'a>(pod: &PodSpec, node: &'a NodeState) -> Result<(), FilterFailure<'a>> {
    let mut short = Insufficient {
        pods: u64::from(node.pod_count) + 1 > u64::from(node.spec.max_pods),
        ..Insufficient::default()
    };
    let request = pod.requests;
    if !request.is_zero() {
        let free = node.spec.allocatable.saturating_sub(node.requested);
        short.cpu = request.cpu_milli > 0 && request.cpu_milli > free.cpu_milli;
        short.memory = request.memory_bytes > 0 && request.memory_bytes > free.memory_bytes;
    }
    if short.any() {
        return Err(FilterFailure::Insufficient(short));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::DEFAULT_FILTERS;
    use crate::testing::{node, taint, toleration, toleration_exists};
    use TaintEffect::{NoExecute, NoSchedule, PreferNoSchedule};
    use schedlab_core::testing::{GI, PodSpecChanges, pod};

    fn short(pods: bool, cpu: bool, memory: bool) -> Result<(), FilterFailure<'static>> {
        Err(FilterFailure::Insufficient(Insufficient { pods, cpu, memory }))
    }

    #[test]
    fn run_filters_is_the_default_filter_list() {
        let pods = [
            pod(0, 0),
            pod(3000, 8 * GI),
            pod(0, 0).tolerate(toleration_exists("", None)),
        ];
        let nodes = [
            node("free"),
            node("full").requested("4", "16Gi"),
            node("cordoned").cordoned().requested("4", "0"),
            node("tainted")
                .tainted(taint("spot", "true", NoSchedule))
                .pod_count(110),
            node("down").not_ready().cordoned(),
        ];
        for p in &pods {
            for n in nodes.iter().cloned().map(|n| n.build(0)) {
                let listed = DEFAULT_FILTERS.iter().try_for_each(|plugin| plugin.filter(p, &n));
                assert_eq!(run_filters(p, &n), listed, "{}", n.spec.name);
            }
        }
    }

    #[test]
    fn node_resources_fit_table() {
        // node: 4 cpu, 16Gi, room for 10 pods
        let base = || node("n").cpu("4").memory("16Gi").pods(10);
        let cases = [
            ("empty node fits", base(), pod(1000, GI), Ok(())),
            (
                "exact fit: 3 + 1 = 4 cpu, 12Gi + 4Gi = 16Gi",
                base().requested("3", "12Gi"),
                pod(1000, 4 * GI),
                Ok(()),
            ),
            (
                "one millicore over",
                base().requested("3", "1Gi"),
                pod(1001, GI),
                short(false, true, false),
            ),
            (
                "one byte over",
                base().requested("1", "15Gi"),
                pod(1000, GI + 1),
                short(false, false, true),
            ),
            (
                "both short",
                base().requested("4", "16Gi"),
                pod(1000, GI),
                short(false, true, true),
            ),
            (
                "pod limit: 9 running + 1 = 10 fits",
                base().pod_count(9),
                pod(1000, 0),
                Ok(()),
            ),
            (
                "pod limit: 10 running + 1 > 10",
                base().pod_count(10),
                pod(1000, 0),
                short(true, false, false),
            ),
            (
                "all three reasons at once",
                base().pod_count(10).requested("4", "16Gi"),
                pod(1000, GI),
                short(true, true, true),
            ),
            (
                "zero cpu request fits a full cpu dimension",
                base().requested("4", "1Gi"),
                pod(0, GI),
                Ok(()),
            ),
            (
                "best-effort pod fits an overcommitted node",
                base().requested("5", "20Gi"),
                pod(0, 0),
                Ok(()),
            ),
            (
                "best-effort pod still needs a pod slot",
                base().pod_count(10),
                pod(0, 0),
                short(true, false, false),
            ),
        ];
        for (name, n, p, want) in cases {
            let n = n.build(0);
            assert_eq!(node_resources_fit(&p, &n), want, "{name}");
        }
    }

    #[test]
    fn node_unschedulable_table() {
        let cases = [
            ("schedulable node", node("n"), pod(0, 0), true),
            ("cordoned node", node("n").cordoned(), pod(0, 0), false),
            (
                "cordoned, pod tolerates the unschedulable taint",
                node("n").cordoned(),
                pod(0, 0).tolerate(toleration_exists(TAINT_NODE_UNSCHEDULABLE, Some(NoSchedule))),
                true,
            ),
            (
                "cordoned, toleration for another effect",
                node("n").cordoned(),
                pod(0, 0).tolerate(toleration_exists(TAINT_NODE_UNSCHEDULABLE, Some(NoExecute))),
                false,
            ),
            (
                "cordoned, pod tolerates everything",
                node("n").cordoned(),
                pod(0, 0).tolerate(toleration_exists("", None)),
                true,
            ),
        ];
        for (name, n, p, feasible) in cases {
            let n = n.build(0);
            assert_eq!(node_unschedulable(&p, &n).is_ok(), feasible, "{name}");
            assert_eq!(is_feasible(&p, &n), feasible, "{name} (all filters)");
        }
    }

    #[test]
    fn taint_toleration_table() {
        let spot = || taint("spot", "true", NoSchedule);
        let cases = [
            ("untainted", node("n"), pod(0, 0), None),
            ("NoSchedule taint", node("n").tainted(spot()), pod(0, 0), Some("spot")),
            (
                "NoExecute taint",
                node("n").tainted(taint("gpu", "", NoExecute)),
                pod(0, 0),
                Some("gpu"),
            ),
            (
                "PreferNoSchedule does not filter",
                node("n").tainted(taint("soft", "", PreferNoSchedule)),
                pod(0, 0),
                None,
            ),
            (
                "tolerated by key and value",
                node("n").tainted(spot()),
                pod(0, 0).tolerate(toleration("spot", "true", Some(NoSchedule))),
                None,
            ),
            (
                "wrong value",
                node("n").tainted(spot()),
                pod(0, 0).tolerate(toleration("spot", "false", None)),
                Some("spot"),
            ),
            (
                "first untolerated of two is reported",
                node("n").tainted(spot()).tainted(taint("gpu", "", NoSchedule)),
                pod(0, 0).tolerate(toleration("spot", "true", None)),
                Some("gpu"),
            ),
            (
                "NotReady node",
                node("n").not_ready(),
                pod(0, 0),
                Some(TAINT_NODE_UNREACHABLE),
            ),
            (
                "NotReady: tolerating only NoSchedule leaves the NoExecute taint",
                node("n").not_ready(),
                pod(0, 0).tolerate(toleration_exists(TAINT_NODE_UNREACHABLE, Some(NoSchedule))),
                Some(TAINT_NODE_UNREACHABLE),
            ),
            (
                "NotReady tolerated for all effects",
                node("n").not_ready(),
                pod(0, 0).tolerate(toleration_exists(TAINT_NODE_UNREACHABLE, None)),
                None,
            ),
            (
                "NotReady: the default 300s NoExecute toleration alone is not enough",
                node("n").not_ready(),
                pod(0, 0).tolerate(Toleration {
                    toleration_seconds: Some(300),
                    ..toleration_exists(TAINT_NODE_UNREACHABLE, Some(NoExecute))
                }),
                Some(TAINT_NODE_UNREACHABLE),
            ),
            ("Degraded nodes are Ready", node("n").degraded(), pod(0, 0), None),
        ];
        for (name, n, p, want) in cases {
            let n = n.build(0);
            let got = match taint_toleration(&p, &n) {
                Ok(()) => None,
                Err(FilterFailure::UntoleratedTaint(t)) => Some(t.key.as_str()),
                Err(other) => panic!("{name}: unexpected {other:?}"),
            };
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn first_rejecting_filter_decides_the_reason() {
        let p = pod(8000, 0);
        let n = node("n")
            .cpu("4")
            .cordoned()
            .tainted(taint("spot", "", NoSchedule))
            .build(0);
        assert_eq!(run_filters(&p, &n), Err(FilterFailure::Unschedulable));
        let n = node("n").cpu("4").tainted(taint("spot", "", NoSchedule)).build(0);
        assert!(matches!(run_filters(&p, &n), Err(FilterFailure::UntoleratedTaint(_))));
        let n = node("n").cpu("4").build(0);
        assert_eq!(run_filters(&p, &n), short(false, true, false));
    }
}
