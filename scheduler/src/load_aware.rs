//! `load-aware`: Koordinator's LoadAwareScheduling, which keeps pods off
//! nodes whose observed usage is already high and prefers the node that will
//! be least used once the pod runs, by actual usage rather than requests.
//!
//! Followed: koordinator-sh/koordinator v1.5.0,
//! `pkg/scheduler/plugins/loadaware/load_aware.go` (`Filter`,
//! `filterNodeUsage`, `Score`, `loadAwareSchedulingScorer`) and
//! `estimator/default_estimator.go`, with the defaults of
//! `pkg/scheduler/apis/config/v1beta3/defaults.go`:
//! - Filter ([`usage_filter`]): a node whose observed usage
//!   ([`NodeState::used`], where the plugin reads the koordlet's NodeMetric)
//!   of cpu or memory, as a percentage of allocatable rounded to a whole
//!   percent, reaches its threshold (`usageThresholds`: cpu 65, memory 95)
//!   is rejected with "node(s) cpu usage exceed threshold" (or memory). v1.5.0
//!   rejects at the threshold (`usage >= threshold`) and looks at the node's
//!   usage without the incoming pod (v1.6 added the pod's estimate and
//!   rejects only above). A resource the node has none of is skipped. The
//!   plugin walks a Go map, so which reason a node over both thresholds
//!   gets is unspecified upstream; here cpu is checked first.
//! - The pod's estimated usage ([`estimated_pod_usage`]), per resource: the
//!   limit when it exceeds the request (then unscaled), else the request
//!   scaled by `estimatedScalingFactors` (cpu 85%, memory 70%), rounded and
//!   capped at the limit when there is one; a resource with neither request
//!   nor limit is estimated at `DefaultMilliCPURequest` 250m or
//!   `DefaultMemoryRequest` 200Mi.
//! - Score ([`load_aware_score`]): over cpu and memory with
//!   `resourceWeights` 1 and 1, the weighted mean of
//!   `(allocatable - used) * 100 / allocatable` (int64 division; 0 when
//!   `used` exceeds allocatable or the node has none), where `used` is the
//!   node's observed usage plus the pod's estimate. The plugin does not
//!   normalise its scores.
//!
//! The profile is the one koord-scheduler ships (`config/manager/scheduler-config.yaml`
//! of v1.5.0): kube-scheduler's default profile with LoadAwareScheduling
//! added as a filter, after the default filters, and as a score with
//! weight 1. The default scores stay: NodeResourcesFit LeastAllocated (1),
//! BalancedAllocation (1) and TaintToleration (3), scored with v1.33's rules,
//! the closest modelled release to v1.28.7, which koord-scheduler v1.5.0 is
//! built on (v1.28 also scores BalancedAllocation for best-effort pods, which
//! v1.33 skips). Node sampling with the rotating start, the lone-node
//! shortcut, `selectHost` with the seeded tie-break and the failure message
//! (in v1.33's words, which v1.28 shares) are the framework's ([`Cycle`]).
//!
//! Not modelled: the estimate the plugin adds for pods bound since the last
//! NodeMetric report (the view has no per-pod bind times; a pod bound moments
//! ago counts once its containers run), metric expiry (the view's usage is
//! always current), prod-usage thresholds and aggregated usage (off by
//! default), and the DaemonSet exemption (the model's pods have no owners).

use crate::filters::FilterFailure;
use crate::profile::{
    Cycle, FilterPlugin, Normalize, Profile, Sampling, ScorePlugin, Scored, kube_default_scores, profile_arm,
};
use crate::release::Release;
use crate::scores::{FitStrategy, least_requested_score};
use schedlab_core::node::NodeState;
use schedlab_core::pod::PodSpec;
use schedlab_core::resources::Resources;

/// `usageThresholds` for cpu, percent of allocatable.
pub const CPU_USAGE_THRESHOLD_PERCENT: u64 = 65;
/// `usageThresholds` for memory, percent of allocatable.
pub const MEMORY_USAGE_THRESHOLD_PERCENT: u64 = 95;
/// `estimatedScalingFactors` for cpu, percent of the request.
pub const CPU_SCALING_FACTOR_PERCENT: u64 = 85;
/// `estimatedScalingFactors` for memory, percent of the request.
pub const MEMORY_SCALING_FACTOR_PERCENT: u64 = 70;
/// `DefaultMilliCPURequest`: the estimate for a pod without cpu request or limit.
pub const DEFAULT_MILLI_CPU_REQUEST: u64 = 250;
/// `DefaultMemoryRequest`: the estimate for a pod without memory request or limit.
pub const DEFAULT_MEMORY_REQUEST: u64 = 200 * 1024 * 1024;
/// `resourceWeights` for cpu and memory.
pub const CPU_WEIGHT: i64 = 1;
pub const MEMORY_WEIGHT: i64 = 1;
/// LoadAwareScheduling's score weight in koord-scheduler's profile.
pub const WEIGHT: i64 = 1;

/// The filter's reasons, as the plugin words them.
pub mod reason {
    pub const CPU_USAGE_EXCEEDS_THRESHOLD: &str = "node(s) cpu usage exceed threshold";
    pub const MEMORY_USAGE_EXCEEDS_THRESHOLD: &str = "node(s) memory usage exceed threshold";
}

/// The default profile's scores by v1.33's rules, the closest modelled
/// release to koord-scheduler v1.5.0's v1.28.7.
const DEFAULT_SCORES: [Scored; 3] = kube_default_scores(Release::V1_33, FitStrategy::LeastAllocated);

/// The `load-aware` arm: the default filters then LoadAwareScheduling's; the
/// default scores and LoadAwareScheduling's.
pub const PROFILE: Profile = Profile {
    name: "load-aware",
    release: Release::V1_33,
    sampling: Sampling::Adaptive,
    filters: &[
        FilterPlugin::NodeUnschedulable,
        FilterPlugin::TaintToleration,
        FilterPlugin::NodeResourcesFit,
        FilterPlugin::LoadAwareScheduling,
    ],
    preferences: &[],
    preemption: true,
    scores: &[
        DEFAULT_SCORES[0],
        DEFAULT_SCORES[1],
        DEFAULT_SCORES[2],
        Scored {
            plugin: ScorePlugin::LoadAwareScheduling,
            weight: WEIGHT,
            normalize: Normalize::None,
        },
    ],
};

/// koord-scheduler's profile with LoadAwareScheduling.
#[derive(Debug, Clone)]
pub struct LoadAwareScheduler(Cycle);

impl LoadAwareScheduler {
    pub const NAME: &'static str = PROFILE.name;
    /// The release whose default-profile rules and wording it follows.
    pub const RELEASE: Release = PROFILE.release;

    /// Tie-breaks draw from the run's `seed` (scheduler stream).
    pub fn new(seed: u64) -> LoadAwareScheduler {
        LoadAwareScheduler(Cycle::new(PROFILE, seed))
    }
}

profile_arm!(LoadAwareScheduler);

/// The observed usage of `used` out of `total` in whole percent, rounded
/// half away from zero as Go's `math.Round`.
fn usage_percent(used: u64, total: u64) -> u64 {
    (used as f64 / total as f64 * 100.0).round() as u64
}

/// LoadAwareScheduling's Filter on the node's observed usage.
pub fn usage_filter(node: &NodeState) -> Result<(), FilterFailure<'static>> {
    let checks = [
        (
            node.used.cpu_milli,
            node.spec.allocatable.cpu_milli,
            CPU_USAGE_THRESHOLD_PERCENT,
            reason::CPU_USAGE_EXCEEDS_THRESHOLD,
        ),
        (
            node.used.memory_bytes,
            node.spec.allocatable.memory_bytes,
            MEMORY_USAGE_THRESHOLD_PERCENT,
            reason::MEMORY_USAGE_EXCEEDS_THRESHOLD,
        ),
    ];
    for (used, total, threshold, why) in checks {
        if total > 0 && usage_percent(used, total) >= threshold {
            return Err(FilterFailure::Plugin(why));
        }
    }
    Ok(())
}

/// Whether `node` passes the profile's filters for `pod`.
pub fn is_feasible(pod: &PodSpec, node: &NodeState) -> bool {
    PROFILE.is_feasible(pod, node)
}

/// `estimatedUsedByResource` for one resource.
fn estimated_by_resource(request: u64, limit: u64, scaling_factor: u64, default: u64) -> u64 {
    let (quantity, factor) = if limit > request {
        (limit, 100)
    } else {
        (request, scaling_factor)
    };
    if quantity == 0 {
        return default;
    }
    let estimated = (quantity as f64 * factor as f64 / 100.0).round() as u64;
    if limit > 0 { estimated.min(limit) } else { estimated }
}

/// The default estimator's usage of `pod` once it runs.
pub fn estimated_pod_usage(pod: &PodSpec) -> Resources {
    let limits = pod.limits.unwrap_or(Resources::ZERO);
    Resources::new(
        estimated_by_resource(
            pod.requests.cpu_milli,
            limits.cpu_milli,
            CPU_SCALING_FACTOR_PERCENT,
            DEFAULT_MILLI_CPU_REQUEST,
        ),
        estimated_by_resource(
            pod.requests.memory_bytes,
            limits.memory_bytes,
            MEMORY_SCALING_FACTOR_PERCENT,
            DEFAULT_MEMORY_REQUEST,
        ),
    )
}

/// LoadAwareScheduling's score of `node` for `pod`, 0..=100: least used
/// after placing it, by observed usage plus the pod's estimate.
pub fn load_aware_score(node: &NodeState, pod: &PodSpec) -> i64 {
    let used = node.used + estimated_pod_usage(pod);
    let alloc = node.spec.allocatable;
    let cpu = least_requested_score(used.cpu_milli, alloc.cpu_milli);
    let memory = least_requested_score(used.memory_bytes, alloc.memory_bytes);
    (CPU_WEIGHT * cpu + MEMORY_WEIGHT * memory) / (CPU_WEIGHT + MEMORY_WEIGHT)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Scheduler;
    use crate::testing::{cluster, node, pending, view};
    use schedlab_core::Placement;
    use schedlab_core::node::NodeId;
    use schedlab_core::testing::{GI, PodSpecChanges, pod};

    #[test]
    fn estimates_the_pod_from_requests_and_limits() {
        // 500m * 0.85 = 425; 1Gi * 0.7 = 751619276.8 -> 751619277
        assert_eq!(estimated_pod_usage(&pod(500, GI)), Resources::new(425, 751_619_277));
        // a limit above the request is taken whole
        assert_eq!(
            estimated_pod_usage(&pod(500, GI).limits(Resources::new(2000, GI))),
            Resources::new(2000, 751_619_277)
        );
        // best-effort: the defaults, unscaled
        assert_eq!(
            estimated_pod_usage(&pod(0, 0)),
            Resources::new(DEFAULT_MILLI_CPU_REQUEST, 200 << 20)
        );
        // 333m * 0.85 = 283.05 -> 283
        assert_eq!(estimated_pod_usage(&pod(333, 0)).cpu_milli, 283);
    }

    #[test]
    fn filter_rejects_at_the_rounded_threshold() {
        let at = |cpu: &str, mem: &str| usage_filter(&node("n").cpu("4").memory("100Gi").used(cpu, mem).build(0));
        let cpu_over = Err(FilterFailure::Plugin(reason::CPU_USAGE_EXCEEDS_THRESHOLD));
        let mem_over = Err(FilterFailure::Plugin(reason::MEMORY_USAGE_EXCEEDS_THRESHOLD));
        assert_eq!(at("2800m", "0"), cpu_over); // 70%
        assert_eq!(at("2600m", "0"), cpu_over); // 65%: v1.5.0 rejects at the threshold
        assert_eq!(at("2582m", "0"), cpu_over); // 64.55% rounds to 65
        assert_eq!(at("2578m", "0"), Ok(())); // 64.45% rounds to 64
        assert_eq!(at("0", "96Gi"), mem_over);
        assert_eq!(at("0", "94Gi"), Ok(()));
        assert_eq!(at("4", "100Gi"), cpu_over); // over both: cpu is reported
        // the pod itself does not count (v1.5.0)
        let n = node("n").cpu("4").used("2400m", "0").build(0);
        assert!(is_feasible(&pod(2000, 0), &n));
    }

    #[test]
    fn filters_the_hot_node_and_picks_the_least_used() {
        // requests alike, so the default scores tie and usage decides
        let nodes = cluster([
            node("hot").used("2800m", "1Gi"),  // 70% cpu: filtered
            node("warm").used("1600m", "4Gi"), // cpu 2025 -> 49, memory 4.7Gi -> 70: 59
            node("cool").used("400m", "2Gi"),  // cpu 825 -> 79, memory 2.7Gi -> 83: 81
        ]);
        let spec = pod(500, GI);
        assert_eq!(load_aware_score(&nodes[1], &spec), 59);
        assert_eq!(load_aware_score(&nodes[2], &spec), 81);
        let mut s = LoadAwareScheduler::new(7);
        for _ in 0..10 {
            assert_eq!(s.schedule(&pending(&spec), &view(&nodes)), Placement::Bind(NodeId(2)));
        }
    }

    #[test]
    fn usage_outweighs_a_small_request_difference() {
        // `requested` is slightly emptier by requests but far busier in use
        let nodes = cluster([
            node("requested").requested("0", "0").used("2400m", "8Gi"),
            node("busy-on-paper").requested("400m", "1Gi").used("200m", "1Gi"),
        ]);
        let spec = pod(500, GI);
        let scores = crate::default::PROFILE_V1_33.node_scores(&spec, &nodes, &[0, 1]);
        let default_totals: Vec<i64> = scores.iter().map(|s| s.total).collect();
        assert!(default_totals[0] > default_totals[1], "{default_totals:?}");
        let mut s = LoadAwareScheduler::new(8);
        assert_eq!(s.schedule(&pending(&spec), &view(&nodes)), Placement::Bind(NodeId(1)));
        assert!(
            load_aware_score(&nodes[1], &spec) - load_aware_score(&nodes[0], &spec)
                > default_totals[0] - default_totals[1]
        );
    }

    #[test]
    fn unschedulable_names_the_usage_reasons() {
        let nodes = cluster([
            node("hot").used("3", "0"),
            node("full").memory("10Gi").used("0", "10Gi"),
            node("cordoned").cordoned().used("4", "0"),
        ]);
        let spec = pod(100, 0);
        match LoadAwareScheduler::new(1).schedule(&pending(&spec), &view(&nodes)) {
            Placement::Unschedulable { reason } => assert_eq!(
                reason,
                "0/3 nodes are available: 1 node(s) cpu usage exceed threshold, \
                 1 node(s) memory usage exceed threshold, 1 node(s) were unschedulable."
            ),
            other => panic!("{other:?}"),
        }
    }
}
