//! `target-load`: scheduler-plugins' Trimaran TargetLoadPacking, which packs
//! nodes up to a target cpu utilisation and spreads once they are past it,
//! scoring the cpu the node actually uses rather than what its pods request.
//!
//! Followed: kubernetes-sigs/scheduler-plugins v0.33.5,
//! `pkg/trimaran/targetloadpacking/targetloadpacking.go` (`Score`,
//! `PredictUtilisation`) with the defaults of `apis/config/v1/defaults.go`:
//! - the pod's predicted cpu ([`predicted_cpu_milli`]): its cpu limit when
//!   it has one, else its cpu request times `DefaultRequestsMultiplier` 1.5
//!   (rounded), else `DefaultRequestsMilliCores` 1000m;
//! - the node's predicted utilisation `U = 100 * (used + predicted) /
//!   capacity` (cpu capacity, not allocatable, as the plugin divides by);
//!   `used` is the view's observed usage of the node's running containers
//!   ([`NodeState::used`]), where the plugin reads load-watcher's metric;
//! - with the target `T` = `DefaultTargetUtilizationPercent` 40: for `U <= T`
//!   the score is `round((100 - T) * U / T + T)`, rising linearly from 40 on
//!   an idle node to 100 at the target; for `T < U <= 100` it is
//!   `round(T * (100 - U) / (100 - T))`, falling from 40 just past the target
//!   to 0 at 100%; above 100% it is 0. Rounding is Go's `math.Round` (half
//!   away from zero). The plugin does not normalise its scores.
//!
//! The profile is the one the plugin's README configures: kube-scheduler's
//! default profile with the NodeResourcesFit (LeastAllocated) and
//! NodeResourcesBalancedAllocation scores disabled and TargetLoadPacking
//! (weight 1) enabled; of the remaining default scores the model has data
//! for, TaintToleration's PreferNoSchedule score stays (weight 3). Filters,
//! node sampling with the rotating start, the lone-node shortcut, `selectHost`
//! with the seeded tie-break and the failure message are the framework's
//! ([`Cycle`]), as v1.33 words it: v0.33.5 is built on kube-scheduler
//! v1.33.5.
//!
//! Not modelled: pod overhead (the model has none), and the plugin's
//! allowance for pods bound within the last metrics interval whose usage the
//! metric does not show yet (the view has no per-pod bind times; a pod bound
//! moments ago counts once its containers run).

use crate::profile::{
    Cycle, DEFAULT_FILTERS, Normalize, Profile, Sampling, ScorePlugin, Scored, kube_default_scores, profile_arm,
};
use crate::release::Release;
use crate::scores::FitStrategy;
use schedlab_core::node::NodeState;
use schedlab_core::pod::PodSpec;

/// `DefaultTargetUtilizationPercent`.
pub const TARGET_UTILIZATION_PERCENT: f64 = 40.0;
/// `DefaultRequestsMilliCores`: the predicted cpu of a pod with neither a cpu
/// limit nor a cpu request.
pub const DEFAULT_REQUESTS_MILLI_CORES: u64 = 1000;
/// `DefaultRequestsMultiplier`: a pod without a cpu limit is predicted to use
/// this many times its request (Burstable pods use more than they ask).
pub const DEFAULT_REQUESTS_MULTIPLIER: f64 = 1.5;
/// TargetLoadPacking's score weight in the README's profile.
pub const WEIGHT: i64 = 1;

/// The `target-load` arm: the default filters; TargetLoadPacking and, of
/// v1.33's default scores, TaintToleration.
pub const PROFILE: Profile = Profile {
    name: "target-load",
    // v0.33.5 is built on kube-scheduler v1.33.5
    release: Release::V1_33,
    sampling: Sampling::Adaptive,
    filters: DEFAULT_FILTERS,
    preferences: &[],
    preemption: true,
    scores: &[
        Scored {
            plugin: ScorePlugin::TargetLoadPacking,
            weight: WEIGHT,
            normalize: Normalize::None,
        },
        kube_default_scores(Release::V1_33, FitStrategy::LeastAllocated)[2],
    ],
};

/// Trimaran's TargetLoadPacking profile.
#[derive(Debug, Clone)]
pub struct TargetLoadScheduler(Cycle);

impl TargetLoadScheduler {
    pub const NAME: &'static str = PROFILE.name;
    /// The kube-scheduler release the followed plugin version is built on.
    pub const RELEASE: Release = PROFILE.release;

    /// Tie-breaks draw from the run's `seed` (scheduler stream).
    pub fn new(seed: u64) -> TargetLoadScheduler {
        TargetLoadScheduler(Cycle::new(PROFILE, seed))
    }
}

profile_arm!(TargetLoadScheduler);

/// `PredictUtilisation` for the model's single-container pod: the cpu limit,
/// else the cpu request times 1.5, else 1000m.
pub fn predicted_cpu_milli(pod: &PodSpec) -> u64 {
    match pod.limits.map(|l| l.cpu_milli).filter(|&limit| limit > 0) {
        Some(limit) => limit,
        None if pod.requests.cpu_milli > 0 => {
            (pod.requests.cpu_milli as f64 * DEFAULT_REQUESTS_MULTIPLIER).round() as u64
        }
        None => DEFAULT_REQUESTS_MILLI_CORES,
    }
}

/// The node's predicted cpu utilisation in percent once `pod` runs there;
/// 0 for a node without cpu capacity, as the plugin leaves it.
pub fn predicted_utilization_percent(node: &NodeState, pod: &PodSpec) -> f64 {
    let capacity = node.spec.capacity.cpu_milli as f64;
    if capacity == 0.0 {
        return 0.0;
    }
    100.0 * (node.used.cpu_milli as f64 + predicted_cpu_milli(pod) as f64) / capacity
}

/// TargetLoadPacking's score of `node` for `pod`, 0..=100.
pub fn target_load_packing_score(node: &NodeState, pod: &PodSpec) -> i64 {
    let u = predicted_utilization_percent(node, pod);
    let t = TARGET_UTILIZATION_PERCENT;
    let score = if u <= t {
        (100.0 - t) * u / t + t
    } else if u <= 100.0 {
        t * (100.0 - u) / (100.0 - t)
    } else {
        0.0
    };
    score.round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Scheduler;
    use crate::testing::{cluster, node, pending, taint, view};
    use schedlab_core::Placement;
    use schedlab_core::node::{NodeId, TaintEffect};
    use schedlab_core::resources::Resources;
    use schedlab_core::testing::{GI, PodSpecChanges, pod};

    #[test]
    fn predicted_pod_cpu() {
        assert_eq!(predicted_cpu_milli(&pod(400, 0)), 600);
        assert_eq!(predicted_cpu_milli(&pod(333, 0)), 500); // 499.5 rounds up
        assert_eq!(predicted_cpu_milli(&pod(400, 0).limits(Resources::new(2000, 0))), 2000);
        // a memory-only limit leaves cpu to the request
        assert_eq!(predicted_cpu_milli(&pod(400, 0).limits(Resources::new(0, GI))), 600);
        assert_eq!(predicted_cpu_milli(&pod(0, GI)), 1000);
        assert_eq!(predicted_cpu_milli(&pod(0, 0)), 1000);
    }

    #[test]
    fn score_rises_to_the_target_then_falls() {
        // 10 cores, pod predicted 1000m (best-effort): U = used% + 10
        let spec = pod(0, 0);
        let at = |used: &str| target_load_packing_score(&node("n").cpu("10").used(used, "0").build(0), &spec);
        // U 10: 60 * 10 / 40 + 40 = 55
        assert_eq!(at("0"), 55);
        // U 30: 60 * 30 / 40 + 40 = 85
        assert_eq!(at("2"), 85);
        // U 40, the target: 100
        assert_eq!(at("3"), 100);
        // U 41: 40 * 59 / 60 = 39.33 -> 39
        assert_eq!(at("3100m"), 39);
        // U 70: 40 * 30 / 60 = 20
        assert_eq!(at("6"), 20);
        // U 100: 0; beyond: 0
        assert_eq!(at("9"), 0);
        assert_eq!(at("12"), 0);
        // U 15: 62.5 rounds half away from zero, as Go's math.Round
        assert_eq!(at("500m"), 63);
        assert_eq!(target_load_packing_score(&node("n").cpu("0").build(0), &spec), 40);
    }

    #[test]
    fn prefers_the_node_closest_below_target_and_avoids_the_one_above() {
        // 4 cores each; the pod asks 400m and is predicted 600m (15%)
        let nodes = cluster([
            node("idle"),                   // U 15 -> 60 * 15 / 40 + 40 = 62.5 -> 63
            node("warm").used("800m", "0"), // U 35 -> 92.5 -> 93
            node("near").used("900m", "0"), // U 37.5 -> 96.25 -> 96
            node("hot").used("1200m", "0"), // U 45 -> 40 * 55 / 60 = 36.7 -> 37
            node("busy").used("3", "0"),    // U 90 -> 6.7 -> 7
        ]);
        let spec = pod(400, 0);
        let scores: Vec<i64> = nodes.iter().map(|n| target_load_packing_score(n, &spec)).collect();
        assert_eq!(scores, [63, 93, 96, 37, 7]);
        let mut s = TargetLoadScheduler::new(5);
        for _ in 0..10 {
            assert_eq!(s.schedule(&pending(&spec), &view(&nodes)), Placement::Bind(NodeId(2)));
        }
        // requests do not count, only usage: a node fully requested but idle
        // and a node with the same usage as `near` but nothing requested tie
        let nodes = cluster([
            node("requested-idle").requested("3", "0").used("900m", "0"),
            node("near").used("900m", "0"),
        ]);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..40 {
            if let Placement::Bind(id) = s.schedule(&pending(&spec), &view(&nodes)) {
                seen.insert(id);
            }
        }
        assert_eq!(seen.len(), 2);
    }

    #[test]
    fn an_untolerated_prefer_no_schedule_taint_weighs_three() {
        let nodes = cluster([
            node("at-target")
                .used("1", "0")
                .tainted(taint("soft", "", TaintEffect::PreferNoSchedule)),
            node("idle"),
        ]);
        // at-target: U 40 -> 100 + 3 * 0; idle: U 15 -> 63 + 3 * 100
        let spec = pod(400, 0);
        let mut s = TargetLoadScheduler::new(6);
        assert_eq!(s.schedule(&pending(&spec), &view(&nodes)), Placement::Bind(NodeId(1)));
    }
}
