//! `cost-binpack`: the plain heuristic behind a price-aware scheduler's
//! cost saving, so the lab can tell how much of AGMARL-DKS's cost win a
//! price-first order alone gets.
//!
//! For each pod:
//! 1. Feasible nodes are those passing the default profile's filters
//!    ([`crate::filters`]: NodeUnschedulable, TaintToleration with the
//!    NotReady node's unreachable taints, NodeResourcesFit). Every node is
//!    examined ([`Sampling::Every`]), not kube-scheduler's sampled share,
//!    because "cheapest" is a cluster-wide property and AGMARL-DKS also
//!    examines every node.
//! 2. Feasible nodes whose condition is Degraded (Ready, but crashing pods
//!    more often) are set aside, unless every feasible node is Degraded:
//!    then they are the candidates, so a pod that fits somewhere is not kept
//!    pending.
//! 3. Among the candidates, those with the lowest price per allocatable core
//!    ([`price_per_core`]: `hourly_price / (allocatable cpu millicores /
//!    1000)`) remain; prices per core within a relative 1e-9 of the lowest
//!    count as equal, so float rounding of the division cannot split nodes of
//!    one pool. A node with no allocatable cpu counts as infinitely expensive.
//! 4. Among those, the highest NodeResourcesFit MostAllocated score wins, as
//!    [`CostBinPackScheduler::RELEASE`] (the release of `default`, v1.20)
//!    computes it ([`node_resources_fit_as`]: the node's non-zero requested
//!    total plus the pod's non-zero requests over allocatable, cpu and memory
//!    weighted 1 and 1, int64 arithmetic).
//! 5. Remaining ties are broken as kube-scheduler's `selectHost` does
//!    ([`crate::select`]), from the run's seeded scheduler stream.
//!
//! A lone feasible node is bound without scoring, as kube-scheduler does,
//! Degraded or not. With no feasible node the pod is unschedulable with
//! kube-scheduler's "0/N nodes are available" message in v1.20's words.
//!
//! As a [`Profile`]: the default filters, every node examined, the
//! preferences [`Preference::Healthy`] then [`Preference::CheapestPerCore`]
//! (steps 2 and 3), and NodeResourcesFit MostAllocated by v1.20's rules as
//! the only score (step 4).

use crate::default::DefaultScheduler;
use crate::profile::{
    Cycle, DEFAULT_FILTERS, FitArgs, Normalize, Preference, Profile, Sampling, ScorePlugin, Scored, profile_arm,
};
use crate::release::Release;
use crate::scores::{FitStrategy, ResourceWeights};
use schedlab_core::node::NodeState;

/// Prices per core this close (relative) to the lowest count as the lowest.
const PRICE_TOLERANCE: f64 = 1e-9;

/// The `cost-binpack` arm.
pub const PROFILE: Profile = Profile {
    name: "cost-binpack",
    // `default`'s, so the two arms differ only in their order
    release: DefaultScheduler::RELEASE,
    sampling: Sampling::Every,
    filters: DEFAULT_FILTERS,
    preferences: &[Preference::Healthy, Preference::CheapestPerCore],
    preemption: true,
    scores: &[Scored {
        plugin: ScorePlugin::NodeResourcesFit(FitArgs {
            strategy: FitStrategy::MostAllocated,
            rules: DefaultScheduler::RELEASE,
            resources: ResourceWeights::CPU_MEMORY,
        }),
        weight: 1,
        normalize: Normalize::None,
    }],
};

/// Cheapest per core first, then the fullest, then a seeded tie-break.
#[derive(Debug, Clone)]
pub struct CostBinPackScheduler(Cycle);

impl CostBinPackScheduler {
    pub const NAME: &'static str = PROFILE.name;
    /// The release whose MostAllocated arithmetic and failure wording it
    /// follows: `default`'s, so the two arms differ only in their order.
    pub const RELEASE: Release = PROFILE.release;

    /// Tie-breaks draw from the run's `seed` (scheduler stream).
    pub fn new(seed: u64) -> CostBinPackScheduler {
        CostBinPackScheduler(Cycle::new(PROFILE, seed))
    }
}

profile_arm!(CostBinPackScheduler);

/// The node's hourly price per allocatable core; infinite for a node without
/// allocatable cpu.
pub fn price_per_core(node: &NodeState) -> f64 {
    let cores = node.spec.allocatable.cpu_milli as f64 / 1000.0;
    if cores == 0.0 {
        f64::INFINITY
    } else {
        node.spec.pool.hourly_price / cores
    }
}

/// Keeps, in order, the nodes of `kept` (indices into `nodes`) whose price
/// per core is within [`PRICE_TOLERANCE`] of the lowest among them.
pub fn cheapest_per_core(nodes: &[NodeState], kept: &mut Vec<usize>) {
    let cheapest = kept
        .iter()
        .map(|&i| price_per_core(&nodes[i]))
        .min_by(f64::total_cmp)
        .unwrap_or(f64::INFINITY);
    kept.retain(|&i| {
        let price = price_per_core(&nodes[i]);
        price == cheapest || price - cheapest <= PRICE_TOLERANCE * cheapest.abs()
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Scheduler;
    use crate::scores::node_resources_fit_as;
    use crate::testing::{cluster, node, pending, view};
    use schedlab_core::Placement;
    use schedlab_core::node::NodeId;
    use schedlab_core::testing::{GI, MI, pod};
    use std::collections::BTreeSet;

    fn choices(nodes: &[NodeState], spec: &schedlab_core::PodSpec, seed: u64, n: usize) -> BTreeSet<u32> {
        let mut s = CostBinPackScheduler::new(seed);
        (0..n)
            .map(|_| match s.schedule(&pending(spec), &view(nodes)) {
                Placement::Bind(NodeId(i)) => i,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn cheapest_per_core_wins_over_cheapest_per_node_and_fuller() {
        let nodes = cluster([
            // $0.10 / 2 cores = 0.05 per core, and the fullest
            node("small").cpu("2").memory("8Gi").price(0.10).requested("1", "4Gi"),
            // $0.16 / 4 cores = 0.04 per core: the cheapest per core
            node("large").cpu("4").memory("16Gi").price(0.16),
            // $0.20 / 4 = 0.05
            node("dear").cpu("4").memory("16Gi").price(0.20).requested("3", "12Gi"),
        ]);
        let spec = pod(500, GI);
        assert_eq!(choices(&nodes, &spec, 1, 20), BTreeSet::from([1]));
        assert!(price_per_core(&nodes[1]) < price_per_core(&nodes[0]));
    }

    #[test]
    fn among_the_cheapest_the_fullest_by_v1_20_most_allocated() {
        let nodes = cluster([
            node("empty").cpu("4").memory("16Gi").price(0.2),
            node("half").cpu("4").memory("16Gi").price(0.2).requested("2", "8Gi"),
            // as full as can be, but dearer
            node("dear-full")
                .cpu("4")
                .memory("16Gi")
                .price(0.3)
                .requested("3", "14Gi"),
        ]);
        let spec = pod(500, GI);
        // empty: cpu 500 * 100 / 4000 = 12, memory 1 * 100 / 16 = 6 -> 9
        // half: cpu 2500 * 100 / 4000 = 62, memory 9 * 100 / 16 = 56 -> 59
        let fit = |i: usize| node_resources_fit_as(Release::V1_20, FitStrategy::MostAllocated, &nodes[i], &spec);
        assert_eq!((fit(0), fit(1)), (9, 59));
        assert_eq!(choices(&nodes, &spec, 2, 20), BTreeSet::from([1]));
    }

    #[test]
    fn degraded_nodes_only_when_nothing_else_fits() {
        let spec = pod(1000, 2 * GI);
        let nodes = cluster([
            node("cheap-but-degraded").cpu("8").price(0.1).degraded(),
            node("healthy").cpu("4").price(0.4),
            node("healthy-too").cpu("4").price(0.4),
        ]);
        assert_eq!(choices(&nodes, &spec, 3, 40), BTreeSet::from([1, 2]));

        // the healthy nodes are full: the degraded ones take the pod, cheapest first
        let nodes = cluster([
            node("degraded-cheap").cpu("8").price(0.1).degraded(),
            node("degraded-dear").cpu("8").price(0.4).degraded(),
            node("healthy-full").cpu("4").price(0.1).requested("4", "0"),
        ]);
        assert_eq!(choices(&nodes, &spec, 3, 20), BTreeSet::from([0]));
        // a lone feasible degraded node is bound directly
        let nodes = cluster([node("degraded").degraded(), node("down").not_ready()]);
        assert_eq!(choices(&nodes, &spec, 3, 5), BTreeSet::from([0]));
    }

    #[test]
    fn equal_prices_per_core_tie_across_machine_sizes() {
        let nodes = cluster([
            node("three").cpu("3").price(0.3),
            node("one").cpu("1").price(0.1).requested("500m", "0"),
        ]);
        // the float division puts `three` a hair below 0.1 a core
        assert!(price_per_core(&nodes[0]) < price_per_core(&nodes[1]));
        // equal within the tolerance, so MostAllocated decides:
        // three: cpu 100 * 100 / 3000 = 3, memory 256Mi / 16Gi = 1 -> 2
        // one: cpu 600 * 100 / 1000 = 60, memory 1 -> 30
        let spec = pod(100, 256 * MI);
        assert_eq!(choices(&nodes, &spec, 4, 20), BTreeSet::from([1]));
    }
}
