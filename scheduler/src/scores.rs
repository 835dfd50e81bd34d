//! Score plugins of kube-scheduler's default profile, each on the 0..=100
//! scale (`framework.MaxNodeScore`), with upstream's integer arithmetic.
//!
//! - NodeResourcesFit, LeastAllocated or MostAllocated over cpu and memory
//!   (`pkg/scheduler/framework/plugins/noderesources/least_allocated.go`,
//!   `most_allocated.go`, `resource_allocation.go`).
//! - NodeResourcesBalancedAllocation (`balanced_allocation.go`).
//! - TaintToleration's PreferNoSchedule score and its reversed normalisation
//!   (`tainttoleration/taint_toleration.go`, `plugins/helper/normalize_score.go`).
//!
//! The request totals differ between plugins, as upstream: NodeResourcesFit
//! scores with the node's `NonZeroRequested` plus the pod's non-zero requests
//! (`useRequested: false`); BalancedAllocation scores with the real requests
//! (`useRequested: true`) and skips best-effort pods (kubernetes#130260,
//! v1.33); filtering always uses the real requests.
//!
//! The plain functions follow v1.33; the `_as` variants take the
//! [`Release`] (v1.20 scores BalancedAllocation differently, see
//! [`crate::release`]).
//!
//! Upstream's `NonZeroRequested` node total, in which each bound pod's
//! missing cpu or memory request counts as 100m or 200Mi, comes from the
//! backend ([`NodeState::non_zero_requested`], see [`node_non_zero_requested`]).
//! A backend that does not track it leaves it zero, and the real sum stands
//! in: NodeResourcesFit then sees nodes with best-effort pods as emptier than
//! kube-scheduler does, which the twin test shows decides many close calls.

use crate::release::Release;
use schedlab_core::node::{NodeState, Taint, TaintEffect};
use schedlab_core::pod::{PodSpec, Toleration};
use schedlab_core::resources::Resources;

/// `framework.MaxNodeScore`.
pub const MAX_NODE_SCORE: i64 = 100;
pub use schedlab_core::resources::{DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST};

/// The pod's requests with a zero cpu or memory request replaced by the
/// scoring default (`schedutil.GetNonzeroRequests`). Upstream replaces only
/// a *missing* request; the model cannot tell a missing request from an
/// explicit zero and treats both as missing.
pub fn non_zero_requests(requests: Resources) -> Resources {
    requests.non_zero_for_scoring()
}

/// The node's `NonZeroRequested` as far as the backend tracks it: per
/// resource, the larger of [`NodeState::non_zero_requested`] and the real
/// sum (the non-zero total is never below the real one, and a backend that
/// does not track it leaves it zero).
pub fn node_non_zero_requested(node: &NodeState) -> Resources {
    Resources {
        cpu_milli: node.non_zero_requested.cpu_milli.max(node.requested.cpu_milli),
        memory_bytes: node.non_zero_requested.memory_bytes.max(node.requested.memory_bytes),
    }
}

/// The `scoringStrategy.type` of NodeResourcesFit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum FitStrategy {
    /// The default: prefer the emptiest node (spreading).
    LeastAllocated,
    /// Bin packing: prefer the fullest node that fits.
    MostAllocated,
    /// A broken-linear function of each resource's utilisation
    /// (`requestedToCapacityRatio.shape`, points in increasing utilisation).
    RequestedToCapacityRatio(&'static [ShapePoint]),
}

impl FitStrategy {
    /// The name `scoringStrategy.type` gives it.
    pub fn type_name(self) -> &'static str {
        match self {
            FitStrategy::LeastAllocated => "LeastAllocated",
            FitStrategy::MostAllocated => "MostAllocated",
            FitStrategy::RequestedToCapacityRatio(_) => "RequestedToCapacityRatio",
        }
    }
}

/// One point of RequestedToCapacityRatio's `shape`: at `utilization`
/// percent (0..=100) a resource scores `score` (0..=10, scaled to 0..=100 as
/// upstream's `MaxNodeScore / MaxCustomPriorityScore`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ShapePoint {
    pub utilization: i64,
    pub score: i64,
}

/// `MaxCustomPriorityScore`: the top of a shape point's score.
pub const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;

/// NodeResourcesFit's `scoringStrategy.resources` over the resources the
/// cluster model has: each one's weight, 0 for a resource not listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ResourceWeights {
    pub cpu: i64,
    pub memory: i64,
}

impl ResourceWeights {
    /// The default: cpu and memory, weighted 1 and 1.
    pub const CPU_MEMORY: ResourceWeights = ResourceWeights { cpu: 1, memory: 1 };
}

/// `helper.BuildBrokenLinearFunction` over `shape` at utilisation `p`, the
/// shape's scores scaled to 0..=100.
fn broken_linear(shape: &[ShapePoint], p: i64) -> i64 {
    let scale = MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE;
    for (i, point) in shape.iter().enumerate() {
        if p <= point.utilization {
            if i == 0 {
                return point.score * scale;
            }
            let prev = shape[i - 1];
            let (s0, s1) = (prev.score * scale, point.score * scale);
            return s0 + (s1 - s0) * (p - prev.utilization) / (point.utilization - prev.utilization);
        }
    }
    shape.last().map_or(0, |last| last.score * scale)
}

/// `requestedToCapacityRatioScorer` over `resources` (weight, requested,
/// allocatable): the weighted mean, rounded, of the resources scoring above
/// 0; a resource requested beyond its capacity (or with none) scores as at
/// 100% utilisation. v1.33 skips a resource the node has none of.
fn requested_to_capacity_ratio(release: Release, shape: &[ShapePoint], resources: [(i64, u64, u64); 2]) -> i64 {
    let (mut node_score, mut weight_sum) = (0i64, 0i64);
    for (weight, req, alloc) in resources {
        if weight == 0 || (alloc == 0 && release == Release::V1_33) {
            continue;
        }
        let utilization = if alloc == 0 || req > alloc {
            MAX_NODE_SCORE
        } else {
            (u128::from(req) * MAX_NODE_SCORE as u128 / u128::from(alloc)) as i64
        };
        let score = broken_linear(shape, utilization);
        if score > 0 {
            node_score += score * weight;
            weight_sum += weight;
        }
    }
    if weight_sum == 0 {
        return 0;
    }
    // Go's math.Round rounds half away from zero, as f64::round does
    (node_score as f64 / weight_sum as f64).round() as i64
}

/// `leastRequestedScore`: free share of capacity after placing the pod.
pub fn least_requested_score(requested: u64, capacity: u64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    scaled(capacity - requested, capacity)
}

/// `mostRequestedScore`: used share of capacity after placing the pod
/// (requested is capped at capacity: non-zero defaults can push it over).
pub fn most_requested_score(requested: u64, capacity: u64) -> i64 {
    if capacity == 0 {
        return 0;
    }
    scaled(requested.min(capacity), capacity)
}

/// `part * MaxNodeScore / whole`, int64 division as upstream; computed wide
/// so byte-sized memory quantities cannot overflow.
fn scaled(part: u64, whole: u64) -> i64 {
    let v = u128::from(part) * MAX_NODE_SCORE as u128 / u128::from(whole);
    v as i64 // part <= whole, so v <= 100
}

/// v1.20's `mostRequestedScore`: a resource requested beyond capacity scores
/// 0 (later releases cap the request at capacity instead).
fn most_requested_score_v1_20(requested: u64, capacity: u64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    scaled(requested, capacity)
}

impl FitStrategy {
    /// The scorer over cpu and memory with resource weights 1 and 1
    /// (`leastResourceScorer`/`mostResourceScorer`) as of v1.33: the weighted
    /// mean of the per-resource scores, int64 division, skipping resources the
    /// node has none of.
    pub fn score(self, requested: Resources, allocatable: Resources) -> i64 {
        self.score_as(Release::V1_33, requested, allocatable)
    }

    /// The scorer as `release` has it. v1.20 keeps the weight of a resource
    /// the node has none of (it scores 0 there) and scores a MostAllocated
    /// resource requested beyond capacity 0.
    pub fn score_as(self, release: Release, requested: Resources, allocatable: Resources) -> i64 {
        self.score_weighted(release, ResourceWeights::CPU_MEMORY, requested, allocatable)
    }

    /// [`FitStrategy::score_as`] with the resource weights `weights`: the
    /// weighted mean (int64 division) of the listed resources' scores;
    /// RequestedToCapacityRatio's is rounded and leaves out resources
    /// scoring 0, as upstream.
    #[inline]
    pub fn score_weighted(
        self,
        release: Release,
        weights: ResourceWeights,
        requested: Resources,
        allocatable: Resources,
    ) -> i64 {
        let resources = [
            (weights.cpu, requested.cpu_milli, allocatable.cpu_milli),
            (weights.memory, requested.memory_bytes, allocatable.memory_bytes),
        ];
        let per_resource = match (self, release) {
            (FitStrategy::LeastAllocated, _) => least_requested_score,
            (FitStrategy::MostAllocated, Release::V1_20) => most_requested_score_v1_20,
            (FitStrategy::MostAllocated, Release::V1_33) => most_requested_score,
            (FitStrategy::RequestedToCapacityRatio(shape), _) => {
                return requested_to_capacity_ratio(release, shape, resources);
            }
        };
        let (mut node_score, mut weight_sum) = (0i64, 0i64);
        for (weight, req, alloc) in resources {
            if weight == 0 || (alloc == 0 && release == Release::V1_33) {
                continue;
            }
            node_score += per_resource(req, alloc) * weight;
            weight_sum += weight;
        }
        if weight_sum == 0 { 0 } else { node_score / weight_sum }
    }
}

/// NodeResourcesFit's score of `node` for `pod`: the node's non-zero
/// requested total ([`node_non_zero_requested`]) plus the pod's non-zero
/// requests.
pub fn node_resources_fit(strategy: FitStrategy, node: &NodeState, pod: &PodSpec) -> i64 {
    node_resources_fit_as(Release::V1_33, strategy, node, pod)
}

/// [`node_resources_fit`] as `release` scores it.
pub fn node_resources_fit_as(release: Release, strategy: FitStrategy, node: &NodeState, pod: &PodSpec) -> i64 {
    node_resources_fit_weighted(release, strategy, ResourceWeights::CPU_MEMORY, node, pod)
}

/// [`node_resources_fit_as`] with the resource weights `weights`.
#[inline]
pub fn node_resources_fit_weighted(
    release: Release,
    strategy: FitStrategy,
    weights: ResourceWeights,
    node: &NodeState,
    pod: &PodSpec,
) -> i64 {
    strategy.score_weighted(
        release,
        weights,
        node_non_zero_requested(node) + non_zero_requests(pod.requests),
        node.spec.allocatable,
    )
}

/// `balancedResourceScorer` for cpu and memory: `(1 - std) * 100` truncated,
/// where the fractions requested/allocatable are capped at 1 and, for two
/// resources, `std = |cpu - memory| / 2`. With one resource (the node has
/// none of the other) std is 0.
pub fn balanced_resource_score(requested: Resources, allocatable: Resources) -> i64 {
    let mut fractions = [0.0f64; 2];
    let mut len = 0;
    for (req, alloc) in [
        (requested.cpu_milli, allocatable.cpu_milli),
        (requested.memory_bytes, allocatable.memory_bytes),
    ] {
        if alloc == 0 {
            continue;
        }
        fractions[len] = (req as f64 / alloc as f64).min(1.0);
        len += 1;
    }
    let std = if len == 2 {
        ((fractions[0] - fractions[1]) / 2.0).abs()
    } else {
        0.0
    };
    // Go's int64(float) truncates toward zero, as `as` does
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// NodeResourcesBalancedAllocation's score of `node` for `pod`: real requests
/// of node and pod; 0 for a best-effort pod, whose scoring upstream skips.
pub fn balanced_allocation(node: &NodeState, pod: &PodSpec) -> i64 {
    if pod.requests.is_zero() {
        return 0;
    }
    balanced_resource_score(node.requested + pod.requests, node.spec.allocatable)
}

/// v1.20's `balancedResourceScorer` (no volumes): with the fractions
/// requested/allocatable of cpu and memory (1 for a resource the node has
/// none of), 0 once either reaches 1, else `(1 - abs(cpu - memory)) * 100`
/// truncated. Twice as steep as v1.33's `(1 - std) * 100`.
pub fn balanced_resource_score_v1_20(requested: Resources, allocatable: Resources) -> i64 {
    let fraction = |req: u64, alloc: u64| {
        if alloc == 0 { 1.0 } else { req as f64 / alloc as f64 }
    };
    let cpu = fraction(requested.cpu_milli, allocatable.cpu_milli);
    let memory = fraction(requested.memory_bytes, allocatable.memory_bytes);
    if cpu >= 1.0 || memory >= 1.0 {
        return 0;
    }
    ((1.0 - (cpu - memory).abs()) * MAX_NODE_SCORE as f64) as i64
}

/// NodeResourcesBalancedAllocation's score of `node` for `pod` as `release`
/// scores it: v1.33 is [`balanced_allocation`]; v1.20 scores every pod, with
/// the non-zero requests NodeResourcesFit also uses (`calculateResourceAllocatableRequest`).
pub fn balanced_allocation_as(release: Release, node: &NodeState, pod: &PodSpec) -> i64 {
    match release {
        Release::V1_20 => balanced_resource_score_v1_20(
            node_non_zero_requested(node) + non_zero_requests(pod.requests),
            node.spec.allocatable,
        ),
        Release::V1_33 => balanced_allocation(node, pod),
    }
}

/// TaintToleration's raw score (`countIntolerableTaintsPreferNoSchedule`):
/// PreferNoSchedule taints of the node that the pod does not tolerate.
/// Lower is better; [`default_normalize_score`] reverses it.
pub fn intolerable_prefer_no_schedule(taints: &[Taint], tolerations: &[Toleration]) -> i64 {
    taints
        .iter()
        .filter(|t| t.effect == TaintEffect::PreferNoSchedule)
        .filter(|t| !tolerations.iter().any(|tol| tol.tolerates(t)))
        .count() as i64
}

/// TaintToleration's score of each of `feasible` (indices into `nodes`) for
/// `pod` after its NormalizeScore, into `out` (cleared first), in order:
/// 100 for the nodes with the fewest untolerated PreferNoSchedule taints
/// relative to the worst.
pub fn taint_toleration_scores(pod: &PodSpec, nodes: &[NodeState], feasible: &[usize], out: &mut Vec<i64>) {
    out.clear();
    out.extend(
        feasible
            .iter()
            .map(|&i| intolerable_prefer_no_schedule(&nodes[i].spec.taints, &pod.tolerations)),
    );
    default_normalize_score(MAX_NODE_SCORE, true, out);
}

/// `helper.DefaultNormalizeScore`: scales scores to `0..=max_priority` by the
/// largest one (int64 division); `reverse` turns "more is worse" into a
/// score. All zero: every node gets `max_priority` when reversed, 0 otherwise.
pub fn default_normalize_score(max_priority: i64, reverse: bool, scores: &mut [i64]) {
    default_normalize_score_by(max_priority, reverse, scores, |s| s);
}

/// [`default_normalize_score`] over the score field `score` of each item.
pub fn default_normalize_score_by<T>(
    max_priority: i64,
    reverse: bool,
    items: &mut [T],
    mut score: impl FnMut(&mut T) -> &mut i64,
) {
    let max_count = items.iter_mut().map(|t| *score(t)).fold(0, i64::max);
    for item in items {
        let s = score(item);
        *s = match (max_count, reverse) {
            (0, true) => max_priority,
            (0, false) => *s,
            (_, true) => max_priority - max_priority * *s / max_count,
            (_, false) => max_priority * *s / max_count,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, taint, toleration};
    use schedlab_core::testing::pod;

    const GI: u64 = 1 << 30;
    const MI: u64 = 1 << 20;

    #[test]
    fn least_allocated_table() {
        // (node allocatable, node requested, pod requests) -> expected
        let cases = [
            (
                "empty 4 cpu / 16Gi node, pod 1 cpu / 4Gi",
                node("n").cpu("4").memory("16Gi"),
                pod(1000, 4 * GI),
                // cpu: (4000 - 1000) * 100 / 4000 = 75; mem: (16 - 4) * 100 / 16 = 75; (75 + 75) / 2 = 75
                75,
            ),
            (
                "half-full node",
                node("n").cpu("4").memory("16Gi").requested("2", "6Gi"),
                pod(500, GI),
                // cpu: (4000 - 2500) * 100 / 4000 = 37.5 -> 37; mem: (16 - 7) * 100 / 16 = 56.25 -> 56
                // (37 + 56) / 2 = 46.5 -> 46
                46,
            ),
            (
                "best-effort pod counts as 100m / 200Mi",
                node("n").cpu("1").memory("1000Mi"),
                pod(0, 0),
                // cpu: (1000 - 100) * 100 / 1000 = 90; mem: (1000 - 200) * 100 / 1000 = 80; (90 + 80) / 2 = 85
                85,
            ),
            (
                "over capacity scores 0 on that resource",
                node("n").cpu("2").memory("8Gi").requested("2", "2Gi"),
                pod(0, 2 * GI),
                // cpu: 2000 + 100 > 2000 -> 0; mem: (8 - 4) * 100 / 8 = 50; (0 + 50) / 2 = 25
                25,
            ),
            (
                "uneven thirds",
                node("n").cpu("3").memory("3Gi"),
                pod(1000, GI),
                // cpu: 2000 * 100 / 3000 = 66.7 -> 66; mem: 2Gi * 100 / 3Gi -> 66; (66 + 66) / 2 = 66
                66,
            ),
        ];
        for (name, n, p, want) in cases {
            let n = n.build(0);
            assert_eq!(node_resources_fit(FitStrategy::LeastAllocated, &n, &p), want, "{name}");
        }
    }

    #[test]
    fn most_allocated_table() {
        let cases = [
            (
                "empty node",
                node("n").cpu("4").memory("16Gi"),
                pod(1000, 4 * GI),
                // cpu: 1000 * 100 / 4000 = 25; mem: 4 * 100 / 16 = 25; 25
                25,
            ),
            (
                "half-full node",
                node("n").cpu("4").memory("16Gi").requested("2", "6Gi"),
                pod(500, GI),
                // cpu: 2500 * 100 / 4000 = 62.5 -> 62; mem: 7 * 100 / 16 = 43.75 -> 43; (62 + 43) / 2 = 52.5 -> 52
                52,
            ),
            (
                "requested capped at capacity",
                node("n").cpu("2").memory("8Gi").requested("2", "2Gi"),
                pod(0, 2 * GI),
                // cpu: min(2100, 2000) * 100 / 2000 = 100; mem: 4 * 100 / 8 = 50; 75
                75,
            ),
        ];
        for (name, n, p, want) in cases {
            let n = n.build(0);
            assert_eq!(node_resources_fit(FitStrategy::MostAllocated, &n, &p), want, "{name}");
        }
    }

    #[test]
    fn zero_allocatable_resources_are_skipped() {
        let alloc = Resources::new(0, 10 * GI);
        // only memory counts: (10 - 5) * 100 / 10 = 50
        assert_eq!(
            FitStrategy::LeastAllocated.score(Resources::new(500, 5 * GI), alloc),
            50
        );
        assert_eq!(
            FitStrategy::LeastAllocated.score(Resources::new(1, 1), Resources::ZERO),
            0
        );
        // a single resource has no spread
        assert_eq!(balanced_resource_score(Resources::new(500, 9 * GI), alloc), 100);
    }

    #[test]
    fn balanced_allocation_table() {
        let cases = [
            (
                "equal fractions",
                node("n").cpu("4").memory("16Gi"),
                pod(1000, 4 * GI),
                // cpu 1/4 = 0.25, mem 4/16 = 0.25; std 0; (1 - 0) * 100 = 100
                100,
            ),
            (
                "uses the real requests of node and pod",
                node("n").cpu("4").memory("16Gi").requested("1", "2Gi"),
                pod(1000, 2 * GI),
                // cpu 2000/4000 = 0.5, mem 4Gi/16Gi = 0.25; std = 0.125; (1 - 0.125) * 100 = 87.5 -> 87
                87,
            ),
            (
                "zero cpu request is not replaced by the default",
                node("n").cpu("4").memory("16Gi"),
                pod(0, 8 * GI),
                // cpu 0, mem 0.5; std 0.25; 75
                75,
            ),
            (
                "fractions capped at 1",
                node("n").cpu("2").memory("16Gi").requested("3", "0"),
                pod(1000, 4 * GI),
                // cpu 4000/2000 -> 1, mem 0.25; std 0.375; 62.5 -> 62
                62,
            ),
            (
                "truncation, not rounding",
                node("n").cpu("3").memory("3Gi"),
                pod(1000, 2 * GI),
                // cpu 1/3, mem 2/3; std = 1/6; (1 - 1/6) * 100 = 83.33 -> 83
                83,
            ),
            (
                "best-effort pod: plugin skipped",
                node("n").cpu("4").memory("16Gi").requested("3", "1Gi"),
                pod(0, 0),
                0,
            ),
        ];
        for (name, n, p, want) in cases {
            let n = n.build(0);
            assert_eq!(balanced_allocation(&n, &p), want, "{name}");
        }
    }

    #[test]
    fn balanced_allocation_v1_20_table() {
        let cases = [
            (
                "equal fractions",
                node("n").cpu("4").memory("16Gi"),
                pod(1000, 4 * GI),
                100,
            ),
            (
                "twice as steep as v1.33",
                node("n").cpu("4").memory("16Gi").requested("1", "2Gi"),
                pod(1000, 2 * GI),
                // cpu 0.5, mem 0.25; (1 - 0.25) * 100 = 75 (v1.33: 87)
                75,
            ),
            (
                "best-effort pod scored with its defaults",
                node("n").cpu("4").memory("16Gi"),
                pod(0, 0),
                // cpu 100/4000 = 0.025, mem 200Mi/16Gi = 0.0122; (1 - 0.0128) * 100 -> 98
                98,
            ),
            (
                "memory-only pod: cpu counts as 100m",
                node("n").cpu("1").memory("1Gi"),
                pod(0, 512 * MI),
                // cpu 0.1, mem 0.5; (1 - 0.4) * 100 = 60
                60,
            ),
            (
                "a fraction reaching 1 scores 0",
                node("n").cpu("2").memory("16Gi").requested("1", "0"),
                pod(1000, 4 * GI),
                0,
            ),
        ];
        for (name, n, p, want) in cases {
            let n = n.build(0);
            assert_eq!(balanced_allocation_as(Release::V1_20, &n, &p), want, "{name}");
        }
        let (n, p) = (node("n").cpu("4").memory("16Gi").build(0), pod(0, 0));
        assert_eq!(
            balanced_allocation_as(Release::V1_33, &n, &p),
            balanced_allocation(&n, &p)
        );
    }

    #[test]
    fn non_zero_requested_of_bound_pods_counts_in_v1_20_scores() {
        // two best-effort pods bound: requested 0, NonZeroRequested 200m / 400Mi
        let mut n = node("n").cpu("1").memory("1000Mi").pod_count(2).build(0);
        let p = pod(100, 100 * MI);
        // fit: cpu (1000 - 100) * 100 / 1000 = 90, mem (1000 - 100) * 100 / 1000 = 90
        assert_eq!(node_resources_fit(FitStrategy::LeastAllocated, &n, &p), 90);
        n.non_zero_requested = Resources::new(200, 400 * MI);
        assert_eq!(node_non_zero_requested(&n), Resources::new(200, 400 * MI));
        // cpu (1000 - 300) * 100 / 1000 = 70, mem (1000 - 500) * 100 / 1000 = 50; (70 + 50) / 2
        for release in [Release::V1_20, Release::V1_33] {
            assert_eq!(
                node_resources_fit_as(release, FitStrategy::LeastAllocated, &n, &p),
                60,
                "{release}"
            );
        }
        // v1.20 balances the non-zero totals (0.3 vs 0.5), v1.33 the real ones (0.1 vs 0.1)
        assert_eq!(balanced_allocation_as(Release::V1_20, &n, &p), 80);
        assert_eq!(balanced_allocation_as(Release::V1_33, &n, &p), 100);
        // a backend that does not track it: the real sum stands in, per resource
        n.non_zero_requested = Resources::ZERO;
        n.requested = Resources::new(300, 0);
        assert_eq!(node_non_zero_requested(&n), Resources::new(300, 0));
    }

    #[test]
    fn fit_scorers_of_v1_20() {
        let alloc = Resources::new(0, 10 * GI);
        // a resource the node has none of keeps its weight: (0 + 50) / 2
        assert_eq!(
            FitStrategy::LeastAllocated.score_as(Release::V1_20, Resources::new(500, 5 * GI), alloc),
            25
        );
        assert_eq!(
            FitStrategy::LeastAllocated.score_as(Release::V1_33, Resources::new(500, 5 * GI), alloc),
            50
        );
        // MostAllocated over capacity scores 0 in v1.20 and is capped later:
        // v1.20 (0 + 25) / 2 = 12, v1.33 (100 + 25) / 2 = 62
        let (req, alloc) = (Resources::new(3000, GI), Resources::new(2000, 4 * GI));
        assert_eq!(FitStrategy::MostAllocated.score_as(Release::V1_20, req, alloc), 12);
        assert_eq!(FitStrategy::MostAllocated.score_as(Release::V1_33, req, alloc), 62);
        assert_eq!(FitStrategy::MostAllocated.score(req, alloc), 62);
    }

    #[test]
    fn non_zero_defaults() {
        assert_eq!(non_zero_requests(Resources::ZERO), Resources::new(100, 200 * MI));
        assert_eq!(non_zero_requests(Resources::new(5, 0)), Resources::new(5, 200 * MI));
        assert_eq!(non_zero_requests(Resources::new(0, 7)), Resources::new(100, 7));
    }

    #[test]
    fn prefer_no_schedule_counts() {
        let taints = [
            taint("a", "", TaintEffect::PreferNoSchedule),
            taint("b", "x", TaintEffect::PreferNoSchedule),
            taint("c", "", TaintEffect::NoSchedule),
        ];
        assert_eq!(intolerable_prefer_no_schedule(&taints, &[]), 2);
        let tol_b = [toleration("b", "x", None)];
        assert_eq!(intolerable_prefer_no_schedule(&taints, &tol_b), 1);
        let tol_a_noschedule = [toleration("a", "", Some(TaintEffect::NoSchedule))];
        assert_eq!(intolerable_prefer_no_schedule(&taints, &tol_a_noschedule), 2);
    }

    #[test]
    fn normalize_table() {
        let cases: [(&[i64], bool, &[i64]); 5] = [
            // max 4: 100 - 100*0/4 = 100, 100 - 100*1/4 = 75, 100 - 100*4/4 = 0
            (&[0, 1, 4], true, &[100, 75, 0]),
            // max 3: 100*1/3 = 33 -> 67, 100*2/3 = 66 -> 34
            (&[1, 2, 3], true, &[67, 34, 0]),
            (&[0, 0], true, &[100, 100]),
            (&[0, 0], false, &[0, 0]),
            (&[1, 2, 3], false, &[33, 66, 100]),
        ];
        for (input, reverse, want) in cases {
            let mut s = input.to_vec();
            default_normalize_score(MAX_NODE_SCORE, reverse, &mut s);
            assert_eq!(s, want, "{input:?} reverse={reverse}");
        }
    }

    fn res(cpu_milli: u64, memory_bytes: u64) -> Resources {
        Resources {
            cpu_milli,
            memory_bytes,
        }
    }

    #[test]
    fn resource_weights_weigh_the_mean() {
        // cpu 3000/4000 (least 25, most 75), memory 4Gi/16Gi (least 75, most 25)
        let (req, alloc) = (res(3000, 4 * GI), res(4000, 16 * GI));
        let score = |strategy: FitStrategy, cpu, memory| {
            strategy.score_weighted(Release::V1_20, ResourceWeights { cpu, memory }, req, alloc)
        };
        assert_eq!(score(FitStrategy::LeastAllocated, 1, 1), 50);
        assert_eq!(
            score(FitStrategy::LeastAllocated, 1, 1),
            FitStrategy::LeastAllocated.score_as(Release::V1_20, req, alloc)
        );
        // (25 * 3 + 75) / 4 = 37.5 -> 37; (75 * 3 + 25) / 4 = 62.5 -> 62
        assert_eq!(score(FitStrategy::LeastAllocated, 3, 1), 37);
        assert_eq!(score(FitStrategy::MostAllocated, 3, 1), 62);
        // a resource not listed does not count
        assert_eq!(score(FitStrategy::LeastAllocated, 1, 0), 25);
        assert_eq!(score(FitStrategy::MostAllocated, 0, 5), 25);
    }

    #[test]
    fn requested_to_capacity_ratio_follows_its_shape() {
        const RISING: &[ShapePoint] = &[
            ShapePoint {
                utilization: 0,
                score: 0,
            },
            ShapePoint {
                utilization: 100,
                score: 10,
            },
        ];
        const HALF: &[ShapePoint] = &[
            ShapePoint {
                utilization: 0,
                score: 0,
            },
            ShapePoint {
                utilization: 50,
                score: 10,
            },
        ];
        let score = |shape, cpu, memory, req| {
            FitStrategy::RequestedToCapacityRatio(shape).score_weighted(
                Release::V1_20,
                ResourceWeights { cpu, memory },
                req,
                res(4000, 16 * GI),
            )
        };
        // utilisation cpu 75, memory 25 on a rising line: (75 + 25) / 2
        assert_eq!(score(RISING, 1, 1, res(3000, 4 * GI)), 50);
        // past the last point the last score: cpu 100, memory 25 * 100 / 50 = 50;
        // weighted 1 and 2: (100 + 100) / 3 = 66.7, rounded to 67
        assert_eq!(score(HALF, 1, 2, res(3000, 4 * GI)), 67);
        // a resource scoring 0 is left out of the mean: memory alone, 25
        assert_eq!(score(RISING, 1, 1, res(0, 4 * GI)), 25);
        // beyond capacity scores as full
        assert_eq!(score(RISING, 1, 0, res(5000, 0)), 100);
        assert_eq!(score(RISING, 1, 1, res(0, 0)), 0);
    }
}
