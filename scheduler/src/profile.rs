//! One scheduling cycle of a kube-scheduler profile, after
//! `pkg/scheduler/schedule_one.go` `schedulePod`: find feasible nodes
//! (`findNodesThatFitPod`, sampled by `numFeasibleNodesToFind` from a
//! rotating start), bind straight away when exactly one is feasible, else
//! score them (`prioritizeNodes`) and pick the best (`selectHost`).
//!
//! The score plugins are those of the default profile that the model has
//! data for, with their default weights: NodeResourcesFit (1, with the
//! profile's [`FitStrategy`]), NodeResourcesBalancedAllocation (1) and
//! TaintToleration (3). Preemption (the DefaultPreemption PostFilter) is not
//! modelled: an unschedulable pod stays pending and nothing is evicted for it.

use crate::diagnosis::Diagnosis;
use crate::feasible::{NodeScan, num_feasible_nodes_to_find};
use crate::scores::{
    FitStrategy, MAX_NODE_SCORE, balanced_allocation, default_normalize_score_by, intolerable_prefer_no_schedule,
    node_resources_fit, weight,
};
use crate::select::select_host;
use clusters::node::NodeState;
use clusters::pod::PodSpec;
use clusters::rng::{SimRng, purpose, stream};
use clusters::{ClusterView, PendingPod, Placement};

/// The plugin scores of one feasible node (upstream's `NodePluginScores`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeScores {
    /// index of the node in the view's node list
    pub node: usize,
    /// NodeResourcesFit, 0..=100
    pub node_resources_fit: i64,
    /// NodeResourcesBalancedAllocation, 0..=100
    pub balanced_allocation: i64,
    /// TaintToleration after normalisation, 0..=100
    pub taint_toleration: i64,
    /// the weighted sum the host is picked by
    pub total: i64,
}

/// `prioritizeNodes` for the profile's plugins: scores every node of
/// `feasible` (indices into `nodes`) into `out` (cleared first), in order.
pub fn prioritize_nodes(
    strategy: FitStrategy,
    pod: &PodSpec,
    nodes: &[NodeState],
    feasible: &[usize],
    out: &mut Vec<NodeScores>,
) {
    out.clear();
    out.extend(feasible.iter().map(|&i| {
        let node = &nodes[i];
        NodeScores {
            node: i,
            node_resources_fit: node_resources_fit(strategy, node, pod),
            balanced_allocation: balanced_allocation(node, pod),
            taint_toleration: intolerable_prefer_no_schedule(&node.spec.taints, &pod.tolerations),
            total: 0,
        }
    }));
    // TaintToleration's NormalizeScore: reversed, relative to the worst node
    default_normalize_score_by(MAX_NODE_SCORE, true, out, |s| &mut s.taint_toleration);
    for s in out.iter_mut() {
        s.total = weight::NODE_RESOURCES_FIT * s.node_resources_fit
            + weight::BALANCED_ALLOCATION * s.balanced_allocation
            + weight::TAINT_TOLERATION * s.taint_toleration;
    }
}

/// A kube-scheduler profile: its NodeResourcesFit strategy, the rotating
/// start index and the tie-break stream, plus scratch buffers reused across
/// decisions.
#[derive(Debug, Clone)]
pub struct KubeProfile {
    strategy: FitStrategy,
    scan: NodeScan,
    rng: SimRng,
    feasible: Vec<usize>,
    scores: Vec<NodeScores>,
}

impl KubeProfile {
    /// A profile drawing its tie-breaks from the run's `seed`.
    pub fn new(strategy: FitStrategy, seed: u64) -> KubeProfile {
        KubeProfile {
            strategy,
            scan: NodeScan::new(),
            rng: stream(seed, &[purpose::SCHEDULER]),
            feasible: Vec::new(),
            scores: Vec::new(),
        }
    }

    pub fn strategy(&self) -> FitStrategy {
        self.strategy
    }

    /// `nextStartNodeIndex` of the next attempt.
    pub fn next_start_node_index(&self) -> usize {
        self.scan.next_start_node_index()
    }

    /// One scheduling attempt for `pod`.
    pub fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        let nodes = cluster.nodes;
        let spec = pod.spec;
        let mut diagnosis = Diagnosis::new();
        let limit = num_feasible_nodes_to_find(nodes.len());
        self.scan.find(spec, nodes, limit, &mut self.feasible, &mut diagnosis);

        let chosen = match self.feasible.as_slice() {
            [] => {
                let reason = diagnosis.message(nodes.len());
                tracing::trace!(pod = pod.id.0, %reason, "unschedulable");
                return Placement::Unschedulable { reason: reason.into() };
            }
            // "When only one node after predicate, just use it."
            [only] => *only,
            many => {
                prioritize_nodes(self.strategy, spec, nodes, many, &mut self.scores);
                let totals = self.scores.iter().map(|s| (s.node, s.total));
                // `many` is never empty, so the fallback is never taken
                select_host(totals, &mut self.rng).unwrap_or(many[0])
            }
        };
        let node = nodes[chosen].id;
        tracing::trace!(pod = pod.id.0, node = node.0, feasible = self.feasible.len(), "bind");
        Placement::Bind(node)
    }
}
