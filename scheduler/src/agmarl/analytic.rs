//! The scores of the `agmarl-analytic` control: hand-written formulas in
//! place of the actor network, fed to the same controller (stress order,
//! lexicographic selection, restraint, explanations). They read the same
//! [`Observation`] the network reads, so the control sees exactly what the
//! network sees, and each mirrors the realised target the network is
//! trained to predict ([`crate::agmarl::train::realised`]) as far as the
//! decision's features allow. What the trained arm does beyond this control
//! is what learning adds over formulas a person could write down.
//!
//! Every score is in [0, 1], higher better, in the score order used
//! everywhere: `[fault tolerance, utilisation, cost]`. Column names are those
//! of [`crate::agmarl::features`]; `n.X` is the node's feature `X`, `p.X` the
//! pod's.
//!
//! **The pod's requests, rescaled to the node.** The pod's features are
//! fractions of the cluster's largest allocatable (`p.CPU_REQUEST` = pod cpu
//! ÷ largest allocatable cpu), the node's size is its allocatable over the
//! same largest (`n.CPU_ALLOCATABLE`), so the pod's request as a fraction of
//! this node's allocatable is `a_cpu = n.CPU_AFTER − n.CPU_REQUESTED`
//! (= `p.CPU_REQUEST ÷ n.CPU_ALLOCATABLE`: on a candidate, which the filters
//! passed, requested + request ≤ allocatable, so neither column is capped
//! and both expressions are exact), `a_mem` likewise.
//!
//! - **cost** = `1 − n.PRICE × share`, where `share` is the mean over cpu and
//!   memory of the pod's share of the node's requests after placing it:
//!   `share_cpu = a_cpu ÷ n.CPU_AFTER` (the pod's request over the node's
//!   requested total after placement, both as fractions of the node's
//!   allocatable), 0 when the pod requests no cpu; memory likewise. This is
//!   the realised cost's bill split (`1 − C ÷ (p_max × |W|)`, the node's price
//!   divided among its pods by requests) at the moment of the bind, with the
//!   node's other pods staying as they are over the horizon: a pod alone on
//!   a node pays the whole price (`share` = 1), on the priciest node the
//!   cost score is then 0. The realised target's spot-reclaim term has no
//!   counterpart here (nothing in the features says a reclaim is coming).
//! - **utilisation** = `½ × (min(1, n.CPU_USED + a_cpu) + min(1,
//!   n.MEMORY_USED + a_mem))`: the node's measured use now plus the pod's
//!   requests as the use it adds, each capped at 1 as the realised target
//!   caps each resource's measured use ÷ allocatable before averaging them.
//! - **fault tolerance** = `(1 − ½·n.DEGRADED) × n.READY × (1 −
//!   n.RECENT_FAILURES) × (1 − n.RECENT_OOM_KILLS) × (1 − p.FAILURE_RATE) ×
//!   (1 − ½ × max(0, n.MEMORY_USED − 0.8) ÷ 0.2)`: node health (a Degraded
//!   node halves it, a NotReady one zeroes it), recent trouble on the node
//!   (the squashed counts of failures and OOM kills over the last ten
//!   minutes), the workload's own history (its squashed failures per pod)
//!   and memory pressure. The realised target is 0 when the pod's container
//!   errs or is OOM-killed, the pod is evicted or fails, or the node fails;
//!   each factor is one of those risks. The memory-pressure term is 1 up to
//!   80% of allocatable memory used and falls linearly to ½ at 100%
//!   (`MEMORY_USED` is capped at 1, so the term stays in [½, 1]): 80% is
//!   where a node's memory is nearly spoken for and the kubelet's eviction
//!   threshold and OOM kills come close; it is kept as given, as it is well
//!   defined on every feature value.
//!
//! Every factor and term is clamped to [0, 1], so features outside their
//! documented range cannot push a score out of it.

use crate::agmarl::features::{NODE_FEATURES, Observation, POD_FEATURES, node as n, pod as p};

/// Memory used (fraction of allocatable) above which the fault-tolerance
/// score starts to fall.
pub const MEMORY_PRESSURE_FROM: f32 = 0.8;
/// How much of the fault-tolerance score full memory takes away.
pub const MEMORY_PRESSURE_WEIGHT: f32 = 0.5;
/// How much of the fault-tolerance score a Degraded node takes away.
pub const DEGRADED_WEIGHT: f32 = 0.5;

fn unit(x: f32) -> f32 {
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

/// The pod's request of one resource as a fraction of the node's
/// allocatable: `after − requested`.
fn added(after: f32, requested: f32) -> f32 {
    unit(after - requested)
}

/// The pod's share of the node's requests of one resource after placement.
fn share_of(after: f32, requested: f32) -> f32 {
    let pod = added(after, requested);
    if pod > 0.0 && after > 0.0 {
        unit(pod / after)
    } else {
        0.0
    }
}

/// The cost score of placing the pod on the node (see the module docs).
pub fn cost(node: &[f32; NODE_FEATURES]) -> f32 {
    let share = 0.5
        * (share_of(node[n::CPU_AFTER], node[n::CPU_REQUESTED])
            + share_of(node[n::MEMORY_AFTER], node[n::MEMORY_REQUESTED]));
    unit(1.0 - unit(node[n::PRICE]) * share)
}

/// The utilisation score of placing the pod on the node (see the module docs).
pub fn utilisation(node: &[f32; NODE_FEATURES]) -> f32 {
    let cpu = unit(node[n::CPU_USED] + added(node[n::CPU_AFTER], node[n::CPU_REQUESTED]));
    let memory = unit(node[n::MEMORY_USED] + added(node[n::MEMORY_AFTER], node[n::MEMORY_REQUESTED]));
    0.5 * (cpu + memory)
}

/// The fault-tolerance score of placing the pod on the node (see the module docs).
pub fn fault_tolerance(node: &[f32; NODE_FEATURES], pod: &[f32; POD_FEATURES]) -> f32 {
    let health = (1.0 - DEGRADED_WEIGHT * unit(node[n::DEGRADED])) * unit(node[n::READY]);
    let trouble = (1.0 - unit(node[n::RECENT_FAILURES])) * (1.0 - unit(node[n::RECENT_OOM_KILLS]));
    let history = 1.0 - unit(pod[p::FAILURE_RATE]);
    let over = unit((node[n::MEMORY_USED] - MEMORY_PRESSURE_FROM) / (1.0 - MEMORY_PRESSURE_FROM));
    let pressure = 1.0 - MEMORY_PRESSURE_WEIGHT * over;
    unit(health * trouble * history * pressure)
}

/// `[fault tolerance, utilisation, cost]` of placing the pod on the node.
pub fn scores(node: &[f32; NODE_FEATURES], pod: &[f32; POD_FEATURES]) -> [f32; 3] {
    [fault_tolerance(node, pod), utilisation(node), cost(node)]
}

/// The scores of `candidates` (indices into the observation's nodes) into
/// `out`, in the candidates' order. A candidate without a feature row (which
/// the controller never passes) scores neutrally, as a failing network does.
pub fn scores_into(obs: &Observation, candidates: &[usize], out: &mut Vec<[f32; 3]>) {
    out.clear();
    let pod: Option<&[f32; POD_FEATURES]> = obs.pod_features.as_slice().try_into().ok();
    out.extend(candidates.iter().map(|&i| {
        let node: Option<&[f32; NODE_FEATURES]> = obs.node(i).and_then(|row| row.try_into().ok());
        match (node, pod) {
            (Some(node), Some(pod)) => scores(node, pod),
            _ => [0.5; 3],
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::features::observe;
    use crate::testing::{cluster, node, pending, view};
    use schedlab_core::testing::{GI, pod};
    use schedlab_core::view::WorkloadHistory;

    fn close(a: f32, b: f64) -> bool {
        (f64::from(a) - b).abs() < 1e-5
    }

    /// The analytic scores of `spec` on every node of `nodes`, through the observation.
    fn scored(nodes: &[schedlab_core::node::NodeState], pending: &schedlab_core::PendingPod<'_>) -> Vec<[f32; 3]> {
        let obs = observe(pending, &view(nodes));
        let all: Vec<usize> = (0..nodes.len()).collect();
        let mut out = Vec::new();
        scores_into(&obs, &all, &mut out);
        out
    }

    #[test]
    fn scores_equal_their_formulas_from_the_raw_quantities() {
        // the largest node (8 cpu, 32Gi, $0.40/h) sets the cluster's scale
        let mut nodes = cluster([
            node("big").cpu("8").memory("32Gi").price(0.4),
            node("busy")
                .cpu("4")
                .memory("16Gi")
                .price(0.2)
                .requested("1", "4Gi")
                .used("2", "14Gi"),
            node("sick")
                .cpu("4")
                .memory("16Gi")
                .price(0.1)
                .requested("3", "8Gi")
                .used("1", "8Gi")
                .degraded(),
        ]);
        nodes[2].recent.failures = 1;
        nodes[2].recent.oom_kills = 2;
        let spec = pod(1000, 2 * GI);
        let mut p = pending(&spec);
        p.history = WorkloadHistory {
            pods: 4,
            restarts: 0,
            oom_kills: 0,
            failures: 2,
        };
        let s = scored(&nodes, &p);
        let rate = 1.0 - (-0.5f64).exp();

        // big: empty, the pod alone pays the whole (highest) price
        // share = ½ (1000/1000 + 2/2) = 1; cost = 1 − 1 × 1
        assert!(close(s[0][2], 0.0), "{:?}", s[0]);
        // use: nothing used; the pod adds 1/8 cpu and 2/32 memory
        assert!(close(s[0][1], 0.5 * (0.125 + 0.0625)), "{:?}", s[0]);
        // healthy, idle: only the workload's history
        assert!(close(s[0][0], 1.0 - rate), "{:?}", s[0]);

        // busy: price ½ of the highest; share ½ (1/(1+1) + 2/(4+2))
        let share = 0.5 * (0.5 + 2.0 / 6.0);
        assert!(close(s[1][2], 1.0 - 0.5 * share), "{:?}", s[1]);
        // use: cpu 2/4 + 1/4, memory 14/16 + 2/16 = 1 (capped at 1)
        assert!(close(s[1][1], 0.5 * (0.75 + 1.0)), "{:?}", s[1]);
        // memory 14/16 = 0.875 used: (0.875 − 0.8)/0.2 = 0.375 over, × ½
        let pressure = 1.0 - 0.5 * 0.375;
        assert!(close(s[1][0], (1.0 - rate) * pressure), "{:?}", s[1]);

        // sick: price ¼; share ½ (1/(3+1) + 2/(8+2))
        let share = 0.5 * (0.25 + 0.2);
        assert!(close(s[2][2], 1.0 - 0.25 * share), "{:?}", s[2]);
        assert!(close(s[2][1], 0.5 * (0.25 + 0.25 + 0.5 + 0.125)), "{:?}", s[2]);
        // Degraded halves it; one failure and two OOM kills in the window
        let failures = (-0.5f64).exp();
        let ooms = (-1.0f64).exp();
        assert!(close(s[2][0], 0.5 * failures * ooms * (1.0 - rate)), "{:?}", s[2]);
    }

    #[test]
    fn a_pod_without_requests_pays_nothing_and_a_notready_node_is_not_tolerant() {
        let nodes = cluster([
            node("a").price(1.0).requested("1", "1Gi"),
            node("b").price(0.5).not_ready(),
        ]);
        let spec = pod(0, 0);
        let s = scored(&nodes, &pending(&spec));
        assert!(close(s[0][2], 1.0) && close(s[1][2], 1.0), "{s:?}");
        assert!(close(s[0][1], 0.0), "{s:?}");
        assert!(close(s[0][0], 1.0) && close(s[1][0], 0.0), "{s:?}");
        // memory only: the pod's cpu half of the share is 0
        let spec = pod(0, GI);
        let s = scored(&nodes, &pending(&spec));
        assert!(close(s[0][2], 1.0 - 0.5 * 0.5), "{s:?}");
    }

    #[test]
    fn scores_stay_in_range_on_any_feature_values() {
        let mut node = [0.0f32; NODE_FEATURES];
        let mut pod = [0.0f32; POD_FEATURES];
        for v in [-3.0, 0.0, 0.3, 1.0, 7.0, f32::NAN] {
            node.iter_mut().for_each(|x| *x = v);
            pod.iter_mut().for_each(|x| *x = v);
            let s = scores(&node, &pod);
            assert!(s.iter().all(|x| (0.0..=1.0).contains(x)), "{v}: {s:?}");
        }
    }
}
