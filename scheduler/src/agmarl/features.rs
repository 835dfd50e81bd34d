//! What each node agent observes: its node's features, the pending pod's
//! features, all normalised to about [0, 1].
//!
//! Every quantity is made scale-free so one trained network serves clusters
//! of any size and machine mix: fractions of the node's own capacity, sizes
//! relative to the largest node of the cluster, counts squashed with
//! `1 - exp(-x / k)` (0 at none, 0.63 at `k`, saturating towards 1).
//!
//! Changing the meaning, order or number of any feature must bump
//! [`FEATURE_SCHEMA_VERSION`]: checkpoints record the version they were
//! trained on and refuse to load under another.

use schedlab_core::node::{NodeCondition, NodeState, Provisioning, RecentTrouble, UnlimitedMemory};
use schedlab_core::pod::QosClass;
use schedlab_core::resources::Resources;
use schedlab_core::time::Time;
use schedlab_core::{ClusterView, PendingPod};
use std::sync::LazyLock;

/// Version of the feature layout below; stored in every checkpoint.
/// Version 2 put the two pod-dependent node columns last and counts a
/// node's age in whole minutes, so that the first [`STATE_FEATURES`]
/// columns of a node change only when the node does (see
/// [`crate::agmarl::scoring`]). Version 3 added where-it-lands risk: the
/// node's pods without memory limits and their growth, its memory trend,
/// how long it has been degraded, and recent failures in its failure
/// domain; and gave every row its failure domain ([`Observation::domains`]).
/// Version 4 moved the domain's recent failures out of the node rows into
/// one row per domain ([`Observation::domain_features`]): in a node's row,
/// a failure anywhere in its domain changed every row of the domain, and
/// the scorer re-encoded thousands of nodes for it.
pub const FEATURE_SCHEMA_VERSION: u32 = 4;

/// Features per node agent.
pub const NODE_FEATURES: usize = 22;
/// The leading node columns that describe the node alone, whatever pod is
/// being placed: the input of the node encoder.
pub const STATE_FEATURES: usize = 20;
/// The trailing node columns that depend on the pod being placed.
pub const PLACEMENT_FEATURES: usize = NODE_FEATURES - STATE_FEATURES;
/// Features of the pending pod (shared by every agent).
pub const POD_FEATURES: usize = 10;
/// The scheduling queue's summary ([`Observation::queue`]): what the
/// centralised critic sees beside the agents (the actor does not use it).
pub const QUEUE_FEATURES: usize = 2;
/// Features per failure domain ([`Observation::domain_features`]).
pub const DOMAIN_FEATURES: usize = 1;

/// Column indices of [`Observation::node_features`].
pub mod node {
    /// requested cpu ÷ allocatable cpu (capped at 1)
    pub const CPU_REQUESTED: usize = 0;
    /// requested memory ÷ allocatable memory (capped at 1)
    pub const MEMORY_REQUESTED: usize = 1;
    /// cpu the node's containers use ÷ allocatable (capped at 1)
    pub const CPU_USED: usize = 2;
    /// memory the node's containers use ÷ allocatable (capped at 1): memory
    /// pressure, where OOM kills and evictions come from
    pub const MEMORY_USED: usize = 3;
    /// allocatable cpu ÷ the largest allocatable cpu in the cluster
    pub const CPU_ALLOCATABLE: usize = 4;
    /// allocatable memory ÷ the largest allocatable memory in the cluster
    pub const MEMORY_ALLOCATABLE: usize = 5;
    /// pods bound ÷ the node's pod limit (capped at 1)
    pub const PODS: usize = 6;
    /// 1 when the node reports Ready (Degraded nodes do), else 0
    pub const READY: usize = 7;
    /// 1 when the node is Degraded (Ready, but pods crash more), else 0
    pub const DEGRADED: usize = 8;
    /// 1 unless the node is cordoned
    pub const SCHEDULABLE: usize = 9;
    /// container restarts on the node over the recent window, squashed
    pub const RECENT_RESTARTS: usize = 10;
    /// OOM kills on the node over the recent window, squashed
    pub const RECENT_OOM_KILLS: usize = 11;
    /// pod failures on the node over the recent window, squashed
    pub const RECENT_FAILURES: usize = 12;
    /// hourly price ÷ the highest hourly price in the cluster
    pub const PRICE: usize = 13;
    /// 1 for a spot node, else 0
    pub const SPOT: usize = 14;
    /// whole minutes since the node joined, squashed with a one-hour scale
    /// (whole minutes, so the row does not change between a node's events)
    pub const AGE: usize = 15;
    /// the node's pods without a memory limit ÷ its pods (0 with none)
    pub const UNLIMITED_PODS: usize = 16;
    /// memory those pods use above their requests ÷ allocatable memory
    /// (capped at 1): growth nothing stops but the node running short
    pub const UNLIMITED_GROWTH: usize = 17;
    /// memory in use minus its five-minute smoothed value, ÷ allocatable,
    /// mapped from [−20%, +20%] onto [0, 1] (0.5: flat)
    pub const MEMORY_TREND: usize = 18;
    /// while Degraded: whole minutes since it became so, plus one, squashed
    /// with a ten-minute scale; 0 otherwise
    pub const DEGRADED_FOR: usize = 19;
    /// (requested + the pod's cpu request) ÷ allocatable (capped at 1): the
    /// node's cpu allocation right after placing the pod here, the quantity
    /// the utilisation objective is measured by
    pub const CPU_AFTER: usize = 20;
    /// the same for memory
    pub const MEMORY_AFTER: usize = 21;
}

/// Columns of [`Observation::domain_features`].
pub mod domain {
    /// recent pod failures per node of the failure domain (its pool and
    /// zone, [`super::Observation::domains`]), squashed with scale 1
    pub const FAILURES: usize = 0;
}

/// Indices of [`Observation::pod_features`].
pub mod pod {
    /// cpu request ÷ the largest allocatable cpu in the cluster (capped at 1)
    pub const CPU_REQUEST: usize = 0;
    /// memory request ÷ the largest allocatable memory in the cluster (capped at 1)
    pub const MEMORY_REQUEST: usize = 1;
    /// priority on a signed log scale: 0.5 at priority 0, 1 at the
    /// system-critical 2·10⁹, 0 at the most negative
    pub const PRIORITY: usize = 2;
    /// 1 for a Guaranteed pod
    pub const GUARANTEED: usize = 3;
    /// 1 for a BestEffort pod
    pub const BEST_EFFORT: usize = 4;
    /// the workload's restarts per pod created so far, squashed
    pub const RESTART_RATE: usize = 5;
    /// the workload's OOM kills per pod created so far, squashed
    pub const OOM_RATE: usize = 6;
    /// the workload's failures per pod created so far, squashed
    pub const FAILURE_RATE: usize = 7;
    /// how much history the rates rest on: pods created, squashed with scale 10
    pub const HISTORY_DEPTH: usize = 8;
    /// scheduling attempts before this one, squashed with scale 3
    pub const ATTEMPTS: usize = 9;
}

/// Names of the node features, in column order (for reports and debugging).
pub const NODE_FEATURE_NAMES: [&str; NODE_FEATURES] = [
    "cpu_requested",
    "memory_requested",
    "cpu_used",
    "memory_used",
    "cpu_allocatable",
    "memory_allocatable",
    "pods",
    "ready",
    "degraded",
    "schedulable",
    "recent_restarts",
    "recent_oom_kills",
    "recent_failures",
    "price",
    "spot",
    "age",
    "unlimited_pods",
    "unlimited_growth",
    "memory_trend",
    "degraded_for",
    "cpu_after",
    "memory_after",
];

/// Names of the domain features, in order.
pub const DOMAIN_FEATURE_NAMES: [&str; DOMAIN_FEATURES] = ["domain_failures"];

/// Names of the pod features, in order.
pub const POD_FEATURE_NAMES: [&str; POD_FEATURES] = [
    "cpu_request",
    "memory_request",
    "priority",
    "guaranteed",
    "best_effort",
    "restart_rate",
    "oom_rate",
    "failure_rate",
    "history_depth",
    "attempts",
];

/// Squashing scales, `k` in `1 - exp(-x / k)`. The node counts cover
/// [`NodeState::RECENT_WINDOW`] (ten minutes): a few restarts are routine
/// (crash-looping pods restart with back-off), while a single OOM kill or
/// failure is already a signal, hence the smaller scales.
const RECENT_RESTARTS_SCALE: f32 = 3.0;
const RECENT_OOM_KILLS_SCALE: f32 = 2.0;
const RECENT_FAILURES_SCALE: f32 = 2.0;
/// Per-pod rates of the workload: one restart per pod created is already bad.
const RATE_SCALE: f32 = 1.0;
const HISTORY_DEPTH_SCALE: f32 = 10.0;
const ATTEMPTS_SCALE: f32 = 3.0;
/// Node age scale in seconds (one hour).
const AGE_SCALE_SECS: f64 = 3600.0;
/// Minutes of degradation that count as long (`1 − e⁻¹` at ten).
const DEGRADED_SCALE_MINUTES: f32 = 10.0;
/// The memory trend, as a fraction of allocatable, that saturates the column.
const TREND_RANGE: f64 = 0.2;
/// Recent failures per node of a domain that count as many.
const DOMAIN_FAILURES_SCALE: f32 = 1.0;
/// The well-known zone label; with the pool it names a node's failure domain.
pub const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
/// `ln(1 + 2·10⁹)`: the system-critical priority maps to 1.
const PRIORITY_LOG_MAX: f64 = 21.416_413;

/// One decision's observation: a row of [`NODE_FEATURES`] per node of the
/// view (in the view's node order) and the pod's [`POD_FEATURES`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Observation {
    /// number of nodes (rows)
    pub n: usize,
    /// `n × NODE_FEATURES`, row-major, normalised
    pub node_features: Vec<f32>,
    /// `POD_FEATURES`
    pub pod_features: Vec<f32>,
    /// the failure domain of each row: nodes of the same pool and the same
    /// zone label (no label is a zone of its own) share one, the unit that
    /// fails together (a zone outage, a reclaimed spot pool, a bad machine
    /// type). Numbered 0, 1, … in order of first row.
    pub domains: Vec<u32>,
    /// the number of distinct domains
    pub domain_count: usize,
    /// `domain_count × DOMAIN_FEATURES`, row-major: what each domain's
    /// nodes have in common, entering the actor once per domain
    pub domain_features: Vec<f32>,
    /// the pending queue: pending ÷ (pending + bound) pods, and pending pods
    /// per node squashed with scale 1 (0 with nothing pending)
    pub queue: [f32; QUEUE_FEATURES],
}

impl Observation {
    /// The feature row of node `i`, if there is one.
    pub fn node(&self, i: usize) -> Option<&[f32]> {
        self.node_features.get(i * NODE_FEATURES..(i + 1) * NODE_FEATURES)
    }
}

/// `1 - exp(-x / k)` for x ≥ 0 (0 for anything else, NaN included). Most
/// counts are 0, where no exponential needs computing.
fn squash(x: f32, k: f32) -> f32 {
    if x > 0.0 { 1.0 - (-x / k).exp() } else { 0.0 }
}

/// Whole minutes of age the table of [`age_feature`] covers (a week).
const AGE_TABLE_MINUTES: usize = 7 * 24 * 60;

/// The age feature of a node `minutes` old: `1 - exp(-minutes / 60)`,
/// looked up for the first week (one exponential per node and decision is
/// a noticeable share of a decision at thousands of nodes).
fn age_feature(minutes: u64) -> f32 {
    static TABLE: LazyLock<Vec<f32>> = LazyLock::new(|| (0..=AGE_TABLE_MINUTES as u64).map(age_formula).collect());
    match usize::try_from(minutes) {
        Ok(m) if m <= AGE_TABLE_MINUTES => TABLE[m],
        _ => age_formula(minutes),
    }
}

fn age_formula(minutes: u64) -> f32 {
    (1.0 - (-(minutes as f64) * 60.0 / AGE_SCALE_SECS).exp()) as f32
}

/// `a / b` capped to [0, 1]; 0 when `b` is 0 (nothing to be a fraction of).
fn fraction(a: f64, b: f64) -> f32 {
    if b > 0.0 { (a / b).clamp(0.0, 1.0) as f32 } else { 0.0 }
}

/// The cluster-wide maxima that sizes and prices are normalised by.
#[derive(Debug, Clone, Copy)]
struct Scale {
    cpu: f64,
    memory: f64,
    price: f64,
}

impl Scale {
    fn of(nodes: &[NodeState]) -> Scale {
        nodes.iter().fold(
            Scale {
                cpu: 0.0,
                memory: 0.0,
                price: 0.0,
            },
            |s, n| Scale {
                cpu: s.cpu.max(n.spec.allocatable.cpu_milli as f64),
                memory: s.memory.max(n.spec.allocatable.memory_bytes as f64),
                price: s.price.max(n.spec.pool.hourly_price),
            },
        )
    }
}

/// The failure domains of a cluster's nodes, remembered from one decision
/// to the next: a node keeps its domain while it is the same node (same id,
/// same join time), so a decision compares two numbers per node instead of
/// its pool name and labels.
#[derive(Debug, Clone, Default)]
struct DomainIndex {
    /// (pool name, zone label) of every domain seen so far
    names: Vec<(String, Option<String>)>,
    /// per row: the node it was computed for, and its index in `names`
    rows: Vec<(schedlab_core::node::NodeId, schedlab_core::time::Time, u32)>,
    /// scratch: `names` index → this observation's number, or `u32::MAX`
    renumber: Vec<u32>,
    /// scratch: per domain of this observation, its nodes and their failures
    counts: Vec<(u32, u32)>,
}

impl DomainIndex {
    /// The index in `names` of node `n`'s domain.
    fn named(&mut self, n: &NodeState) -> u32 {
        let zone = n.spec.labels.get(ZONE_LABEL);
        let pool = n.spec.pool.name.as_str();
        if let Some(i) = self.names.iter().position(|(p, z)| p == pool && z.as_ref() == zone) {
            return i as u32;
        }
        self.names.push((pool.to_string(), zone.cloned()));
        (self.names.len() - 1) as u32
    }

    /// Numbers the domains of `nodes` into `out.domains`, counts each
    /// domain's nodes and recent failures, and writes `out.domain_features`.
    fn number(&mut self, nodes: &[NodeState], out: &mut Observation) {
        self.rows.truncate(nodes.len());
        out.domains.clear();
        self.renumber.iter_mut().for_each(|r| *r = u32::MAX);
        self.counts.clear();
        for (i, n) in nodes.iter().enumerate() {
            let named = match self.rows.get(i) {
                Some(&(id, since, named)) if id == n.id && since == n.since => named,
                _ => {
                    let named = self.named(n);
                    let entry = (n.id, n.since, named);
                    match self.rows.get_mut(i) {
                        Some(row) => *row = entry,
                        None => self.rows.push(entry),
                    }
                    named
                }
            };
            if self.renumber.len() <= named as usize {
                self.renumber.resize(named as usize + 1, u32::MAX);
            }
            let slot = &mut self.renumber[named as usize];
            if *slot == u32::MAX {
                *slot = self.counts.len() as u32;
                self.counts.push((0, 0));
            }
            let d = *slot;
            let c = &mut self.counts[d as usize];
            c.0 += 1;
            c.1 = c.1.saturating_add(n.recent.failures);
            out.domains.push(d);
        }
        out.domain_count = self.counts.len();
        out.domain_features.clear();
        out.domain_features.extend(
            self.counts
                .iter()
                .map(|&(nodes, failures)| squash(failures as f32 / nodes.max(1) as f32, DOMAIN_FAILURES_SCALE)),
        );
    }
}

/// What an observer remembers from one observation to the next, so that a
/// decision's work on a node that did not change is a comparison: the
/// nodes' failure domains and their state rows. A scheduler keeps one;
/// nothing it remembers changes an observation, only how fast it is made.
#[derive(Debug, Clone, Default)]
pub struct ObservationMemory {
    domains: DomainIndex,
    rows: StateRows,
}

/// Everything a node's state columns (the first [`STATE_FEATURES`]) are
/// computed from, besides the cluster's [`Scale`]: two nodes with equal
/// inputs have bit-identical state columns, whichever node they are.
#[derive(Debug, Clone, Copy, PartialEq)]
struct StateInputs {
    requested: Resources,
    used: Resources,
    allocatable: Resources,
    pod_count: u32,
    max_pods: u32,
    condition: NodeCondition,
    unschedulable: bool,
    recent: RecentTrouble,
    hourly_price: f64,
    spot: bool,
    /// whole minutes since the node joined
    age_minutes: u64,
    unlimited: UnlimitedMemory,
    smoothed_memory_bytes: f64,
    /// whole minutes since the node became Degraded (0 when it is not)
    degraded_minutes: u64,
}

impl StateInputs {
    fn of(n: &NodeState, now: Time) -> StateInputs {
        let degraded = n.condition == NodeCondition::Degraded;
        StateInputs {
            requested: n.requested,
            used: n.used,
            allocatable: n.spec.allocatable,
            pod_count: n.pod_count,
            max_pods: n.spec.max_pods,
            condition: n.condition,
            unschedulable: n.unschedulable,
            recent: n.recent,
            hourly_price: n.spec.pool.hourly_price,
            spot: n.spec.pool.provisioning == Provisioning::Spot,
            age_minutes: now.since(n.since).as_millis() / 60_000,
            unlimited: n.unlimited,
            smoothed_memory_bytes: n.memory_trend.smoothed_bytes,
            degraded_minutes: if degraded {
                now.since(n.condition_since).as_millis() / 60_000
            } else {
                0
            },
        }
    }

    /// The node's state columns: a function of the inputs and the scale
    /// alone, which is what makes remembering them exact.
    fn row(&self, scale: Scale) -> [f32; STATE_FEATURES] {
        let (alloc_cpu, alloc_mem) = (self.allocatable.cpu_milli as f64, self.allocatable.memory_bytes as f64);
        let degraded = self.condition == NodeCondition::Degraded;
        let degraded_for = if degraded {
            squash((self.degraded_minutes + 1) as f32, DEGRADED_SCALE_MINUTES)
        } else {
            0.0
        };
        let trend = if alloc_mem > 0.0 {
            let trend_bytes = self.used.memory_bytes as f64 - self.smoothed_memory_bytes;
            let t = (trend_bytes / alloc_mem / TREND_RANGE).clamp(-1.0, 1.0);
            if t.is_nan() { 0.0 } else { t }
        } else {
            0.0
        };
        [
            fraction(self.requested.cpu_milli as f64, alloc_cpu),
            fraction(self.requested.memory_bytes as f64, alloc_mem),
            fraction(self.used.cpu_milli as f64, alloc_cpu),
            fraction(self.used.memory_bytes as f64, alloc_mem),
            fraction(alloc_cpu, scale.cpu),
            fraction(alloc_mem, scale.memory),
            fraction(f64::from(self.pod_count), f64::from(self.max_pods)),
            f32::from(u8::from(self.condition.is_ready())),
            f32::from(u8::from(degraded)),
            f32::from(u8::from(!self.unschedulable)),
            squash(self.recent.restarts as f32, RECENT_RESTARTS_SCALE),
            squash(self.recent.oom_kills as f32, RECENT_OOM_KILLS_SCALE),
            squash(self.recent.failures as f32, RECENT_FAILURES_SCALE),
            fraction(self.hourly_price, scale.price),
            f32::from(u8::from(self.spot)),
            age_feature(self.age_minutes),
            fraction(f64::from(self.unlimited.pods), f64::from(self.pod_count)),
            fraction(self.unlimited.excess_bytes as f64, alloc_mem),
            (0.5 + 0.5 * trend) as f32,
            degraded_for,
        ]
    }
}

/// The state columns of the last observation, per row, with their inputs.
#[derive(Debug, Clone, Default)]
struct StateRows {
    /// the scale they were computed with (None: nothing remembered)
    scale: Option<[u64; 3]>,
    rows: Vec<(StateInputs, [f32; STATE_FEATURES])>,
    /// rows taken from memory so far (for tests)
    reused: u64,
}

impl StateRows {
    /// Row `i`'s state columns for `inputs`, computed only when row `i`'s
    /// remembered inputs differ.
    fn row(&mut self, i: usize, inputs: StateInputs, scale: Scale) -> &[f32; STATE_FEATURES] {
        if i >= self.rows.len() {
            self.rows.push((inputs, inputs.row(scale)));
        } else if self.rows[i].0 != inputs {
            self.rows[i] = (inputs, inputs.row(scale));
        } else {
            self.reused += 1;
        }
        &self.rows[i].1
    }

    /// Forgets every row when the scale changed (bit for bit) since the last
    /// observation, and rows past `n`.
    fn prepare(&mut self, scale: Scale, n: usize) {
        let bits = [scale.cpu.to_bits(), scale.memory.to_bits(), scale.price.to_bits()];
        if self.scale != Some(bits) {
            self.rows.clear();
            self.scale = Some(bits);
        }
        self.rows.truncate(n);
    }
}

/// The observation of `pod` against `view`.
pub fn observe(pod: &PendingPod<'_>, view: &ClusterView<'_>) -> Observation {
    let mut obs = Observation::default();
    observe_into(pod, view, &mut ObservationMemory::default(), &mut obs);
    obs
}

/// [`observe`] into `out`, reusing its buffers (no allocation once they are
/// large enough) and what `memory` remembers of the nodes' failure domains
/// and state rows (the observation is the same with or without it).
pub fn observe_into(
    pod: &PendingPod<'_>,
    view: &ClusterView<'_>,
    memory: &mut ObservationMemory,
    out: &mut Observation,
) {
    let scale = Scale::of(view.nodes);
    out.n = view.nodes.len();
    memory.domains.number(view.nodes, out);
    memory.rows.prepare(scale, out.n);
    out.node_features.clear();
    out.node_features.reserve(out.n * NODE_FEATURES);
    let request = pod.spec.requests;
    for (i, n) in view.nodes.iter().enumerate() {
        let state = memory.rows.row(i, StateInputs::of(n, view.now), scale);
        out.node_features.extend_from_slice(state);
        let alloc = n.spec.allocatable;
        let (alloc_cpu, alloc_mem) = (alloc.cpu_milli as f64, alloc.memory_bytes as f64);
        out.node_features.extend_from_slice(&[
            fraction(n.requested.cpu_milli as f64 + request.cpu_milli as f64, alloc_cpu),
            fraction(n.requested.memory_bytes as f64 + request.memory_bytes as f64, alloc_mem),
        ]);
    }
    out.pod_features.clear();
    out.pod_features.extend_from_slice(&pod_row(pod, scale));
    let (pending, bound) = (f64::from(view.pending_pods), f64::from(view.bound_pods));
    out.queue = [
        fraction(pending, pending + bound),
        squash((pending / view.nodes.len().max(1) as f64) as f32, 1.0),
    ];
}

fn pod_row(pod: &PendingPod<'_>, scale: Scale) -> [f32; POD_FEATURES] {
    let spec = pod.spec;
    let h = pod.history;
    let created = f64::from(h.pods.max(1));
    let rate = |count: u32| squash((f64::from(count) / created) as f32, RATE_SCALE);
    let qos = spec.qos_class();
    [
        fraction(spec.requests.cpu_milli as f64, scale.cpu),
        fraction(spec.requests.memory_bytes as f64, scale.memory),
        priority(spec.priority),
        f32::from(u8::from(qos == QosClass::Guaranteed)),
        f32::from(u8::from(qos == QosClass::BestEffort)),
        rate(h.restarts),
        rate(h.oom_kills),
        rate(h.failures),
        squash(h.pods as f32, HISTORY_DEPTH_SCALE),
        squash(pod.attempts as f32, ATTEMPTS_SCALE),
    ]
}

/// Priorities span from negative values through user classes (hundreds to
/// millions) up to the system-critical 2·10⁹; a signed log keeps each of
/// these magnitudes distinguishable.
fn priority(p: i32) -> f32 {
    let p = f64::from(p);
    let signed_log = p.signum() * p.abs().ln_1p() / PRIORITY_LOG_MAX;
    (0.5 + 0.5 * signed_log).clamp(0.0, 1.0) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cluster, node, pending, view};
    use schedlab_core::testing::{GI, PodSpecChanges, pod};
    use schedlab_core::time::Time;

    fn approx(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-5
    }

    #[test]
    fn node_rows_are_normalised_per_node_and_per_cluster() {
        let mut nodes = cluster([
            node("small")
                .cpu("2")
                .memory("8Gi")
                .pods(10)
                .requested("1", "2Gi")
                .pod_count(5),
            node("big").cpu("8").memory("32Gi").spot().degraded().cordoned(),
            node("down").not_ready(),
        ]);
        nodes[0].used = schedlab_core::Resources::new(500, 6 << 30);
        nodes[0].recent.restarts = 3;
        nodes[0].recent.oom_kills = 2;
        nodes[1].spec.pool.hourly_price = 0.4;
        nodes[2].since = Time(3_600_000);
        let spec = pod(1000, 4 * GI);
        let mut v = view(&nodes);
        v.now = Time(7_200_000);
        let obs = observe(&pending(&spec), &v);
        assert_eq!(obs.n, 3);
        assert_eq!(obs.node_features.len(), 3 * NODE_FEATURES);
        let small = obs.node(0).unwrap();
        assert!(approx(small[node::CPU_REQUESTED], 0.5));
        assert!(approx(small[node::MEMORY_REQUESTED], 0.25));
        assert!(approx(small[node::CPU_USED], 0.25));
        assert!(approx(small[node::MEMORY_USED], 0.75));
        assert!(approx(small[node::CPU_AFTER], 1.0));
        assert!(approx(small[node::MEMORY_AFTER], 0.75));
        assert!(approx(small[node::CPU_ALLOCATABLE], 0.25));
        assert!(approx(small[node::MEMORY_ALLOCATABLE], 0.25));
        assert!(approx(small[node::PODS], 0.5));
        assert_eq!(
            (small[node::READY], small[node::DEGRADED], small[node::SCHEDULABLE]),
            (1.0, 0.0, 1.0)
        );
        assert!(approx(small[node::RECENT_RESTARTS], 1.0 - (-1.0f32).exp()));
        assert!(approx(small[node::RECENT_OOM_KILLS], 1.0 - (-1.0f32).exp()));
        assert_eq!(small[node::RECENT_FAILURES], 0.0);
        assert!(approx(small[node::PRICE], 0.25));
        assert_eq!(small[node::SPOT], 0.0);
        assert!(approx(small[node::AGE], 1.0 - (-2.0f32).exp()));

        let big = obs.node(1).unwrap();
        assert_eq!(big[node::CPU_ALLOCATABLE], 1.0);
        assert_eq!(
            (big[node::READY], big[node::DEGRADED], big[node::SCHEDULABLE]),
            (1.0, 1.0, 0.0)
        );
        assert_eq!((big[node::PRICE], big[node::SPOT]), (1.0, 1.0));
        let down = obs.node(2).unwrap();
        assert_eq!((down[node::READY], down[node::DEGRADED]), (0.0, 0.0));
        assert!(approx(down[node::AGE], 1.0 - (-1.0f32).exp()));
        assert!(obs.node(3).is_none());
    }

    #[test]
    fn age_counts_whole_minutes_and_the_queue_is_summarised() {
        let nodes = cluster([node("a"), node("b")]);
        let spec = pod(1000, 0);
        let mut v = view(&nodes);
        let age_at = |v: &ClusterView<'_>| observe(&pending(&spec), v).node(0).unwrap()[node::AGE];
        v.now = Time(60_000);
        let one_minute = age_at(&v);
        v.now = Time(119_999);
        assert_eq!(age_at(&v), one_minute);
        v.now = Time(120_000);
        assert!(age_at(&v) > one_minute);
        assert!(approx(one_minute, 1.0 - (-1.0f32 / 60.0).exp()));
        // past the table, the same formula
        assert_eq!(
            age_feature(AGE_TABLE_MINUTES as u64),
            age_formula(AGE_TABLE_MINUTES as u64)
        );
        assert!(age_feature(AGE_TABLE_MINUTES as u64 + 1) >= age_feature(AGE_TABLE_MINUTES as u64));
        assert_eq!(squash(f32::NAN, 1.0), 0.0);
        assert_eq!(squash(-1.0, 1.0), 0.0);
        v.pending_pods = 3;
        v.bound_pods = 9;
        let q = observe(&pending(&spec), &v).queue;
        assert!(approx(q[0], 0.25));
        assert!(approx(q[1], 1.0 - (-1.5f32).exp()));
        v.pending_pods = 0;
        assert_eq!(observe(&pending(&spec), &v).queue, [0.0, 0.0]);
    }

    #[test]
    fn every_feature_stays_in_the_unit_interval() {
        // overcommitted node, zero-sized node, huge pod, extreme history
        let mut nodes = cluster([
            node("over")
                .cpu("1")
                .memory("1Gi")
                .pods(2)
                .requested("3", "3Gi")
                .pod_count(5),
            node("empty").cpu("0").memory("0").pods(0),
        ]);
        nodes[0].used = schedlab_core::Resources::new(9000, 9 << 30);
        nodes[0].recent.failures = 1000;
        nodes[0].spec.pool.hourly_price = 0.0;
        nodes[1].spec.pool.hourly_price = 0.0;
        let spec = pod(64_000, 1024 * GI).priority(i32::MAX);
        let mut p = pending(&spec);
        p.history = schedlab_core::WorkloadHistory {
            pods: 1,
            restarts: 500,
            oom_kills: 500,
            failures: 500,
        };
        p.attempts = 1000;
        let obs = observe(&p, &view(&nodes));
        for (i, x) in obs
            .node_features
            .iter()
            .chain(&obs.pod_features)
            .chain(&obs.domain_features)
            .enumerate()
        {
            assert!(x.is_finite() && (0.0..=1.0).contains(x), "feature {i} = {x}");
        }
        assert_eq!(obs.pod_features[pod::CPU_REQUEST], 1.0);
        assert_eq!(obs.pod_features[pod::PRIORITY], 1.0);
    }

    #[test]
    fn pod_features() {
        let nodes = cluster([node("a").cpu("4").memory("16Gi")]);
        let spec = pod(1000, 4 * GI);
        let mut p = pending(&spec);
        p.history = schedlab_core::WorkloadHistory {
            pods: 10,
            restarts: 10,
            oom_kills: 0,
            failures: 5,
        };
        p.attempts = 3;
        let f = observe(&p, &view(&nodes)).pod_features;
        assert_eq!(f.len(), POD_FEATURES);
        assert!(approx(f[pod::CPU_REQUEST], 0.25));
        assert!(approx(f[pod::MEMORY_REQUEST], 0.25));
        assert!(approx(f[pod::PRIORITY], 0.5));
        // requests without limits: Burstable
        assert_eq!((f[pod::GUARANTEED], f[pod::BEST_EFFORT]), (0.0, 0.0));
        assert!(approx(f[pod::RESTART_RATE], 1.0 - (-1.0f32).exp()));
        assert_eq!(f[pod::OOM_RATE], 0.0);
        assert!(approx(f[pod::FAILURE_RATE], 1.0 - (-0.5f32).exp()));
        assert!(approx(f[pod::HISTORY_DEPTH], 1.0 - (-1.0f32).exp()));
        assert!(approx(f[pod::ATTEMPTS], 1.0 - (-1.0f32).exp()));
        let best_effort = pod(0, 0);
        let f = observe(&pending(&best_effort), &view(&nodes)).pod_features;
        assert_eq!(f[pod::BEST_EFFORT], 1.0);
        assert_eq!(f[pod::HISTORY_DEPTH], 0.0);
    }

    #[test]
    fn priority_is_monotone() {
        let ps = [i32::MIN, -1000, -1, 0, 1, 100, 1_000_000, 2_000_000_000];
        let fs: Vec<f32> = ps.iter().map(|&p| priority(p)).collect();
        assert!(fs.windows(2).all(|w| w[0] < w[1]), "{fs:?}");
        assert_eq!(priority(0), 0.5);
        assert!(approx(priority(2_000_000_000), 1.0));
        assert_eq!(priority(i32::MIN), 0.0);
    }

    #[test]
    fn risk_columns_read_the_node_and_its_domain() {
        let mut nodes = cluster([
            node("a").memory("16Gi").pod_count(4),
            node("b").memory("16Gi").degraded(),
            node("c").memory("16Gi"),
            node("d").memory("16Gi"),
        ]);
        // a and b share pool "pool" without a zone; c is in zone z1, d in z2
        nodes[2].spec.labels.insert(ZONE_LABEL.into(), "z1".into());
        nodes[3].spec.labels.insert(ZONE_LABEL.into(), "z2".into());
        nodes[0].unlimited.pods = 1;
        nodes[0].unlimited.excess_bytes = 4 * GI;
        nodes[1].recent.failures = 3;
        nodes[1].condition_since = Time(60_000);
        // memory climbed from 0 to 8Gi a moment ago: far above its smoothed value
        nodes[0].set_used(schedlab_core::Resources::new(0, 8 * GI), Time(10));
        let spec = pod(100, GI);
        let mut v = view(&nodes);
        v.now = Time(60_000 * 5 + 1);
        let obs = observe(&pending(&spec), &v);
        assert_eq!(obs.domains, vec![0, 0, 1, 2]);
        assert_eq!(obs.domain_count, 3);
        let (a, b, c) = (obs.node(0).unwrap(), obs.node(1).unwrap(), obs.node(2).unwrap());
        assert!(approx(a[node::UNLIMITED_PODS], 0.25));
        assert!(approx(a[node::UNLIMITED_GROWTH], 0.25));
        assert_eq!(a[node::MEMORY_TREND], 1.0);
        assert_eq!(c[node::MEMORY_TREND], 0.5);
        assert_eq!((a[node::DEGRADED_FOR], c[node::DEGRADED_FOR]), (0.0, 0.0));
        // degraded at minute 1, now minute 5: four whole minutes, plus one
        assert!(approx(b[node::DEGRADED_FOR], 1.0 - (-0.5f32).exp()));
        // a and b's domain: three failures over two nodes; c's none
        assert_eq!(obs.domain_features.len(), 3 * DOMAIN_FEATURES);
        assert!(approx(obs.domain_features[domain::FAILURES], 1.0 - (-1.5f32).exp()));
        assert_eq!(obs.domain_features[DOMAIN_FEATURES + domain::FAILURES], 0.0);
        // a remembering index numbers the same, and follows a replaced node
        let mut index = ObservationMemory::default();
        let mut again = Observation::default();
        observe_into(&pending(&spec), &v, &mut index, &mut again);
        assert_eq!(again, obs);
        nodes[3].spec.labels.insert(ZONE_LABEL.into(), "z1".into());
        nodes[3].since = Time(1);
        let mut v = view(&nodes);
        v.now = Time(60_000 * 5 + 1);
        observe_into(&pending(&spec), &v, &mut index, &mut again);
        assert_eq!(again.domains, vec![0, 0, 1, 1]);
        assert_eq!(again, observe(&pending(&spec), &v));
    }

    #[test]
    fn observe_into_reuses_and_overwrites() {
        let nodes = cluster([node("a"), node("b")]);
        let spec = pod(1000, 0);
        let mut obs = observe(&pending(&spec), &view(&nodes));
        let one = cluster([node("a").cpu("2")]);
        observe_into(
            &pending(&spec),
            &view(&one),
            &mut ObservationMemory::default(),
            &mut obs,
        );
        assert_eq!(obs, observe(&pending(&spec), &view(&one)));
        assert_eq!(obs.node_features.len(), NODE_FEATURES);
        assert_eq!(NODE_FEATURE_NAMES.len(), NODE_FEATURES);
    }

    /// A long random walk of node changes (usage, requests, conditions,
    /// troubles, prices, joins and departures, a larger node changing the
    /// scale, time passing): an observer with a memory sees bit for bit
    /// what a fresh one sees at every step.
    #[test]
    fn a_remembering_observer_sees_exactly_what_a_fresh_one_sees() {
        use rand::Rng;
        use schedlab_core::node::NodeCondition;
        let mut rng = schedlab_core::rng::stream(3, &[17]);
        let mut nodes = cluster((0..30).map(|i| node(&format!("n{i}")).cpu("4").memory("16Gi")));
        let mut memory = ObservationMemory::default();
        let mut seen = Observation::default();
        let mut now = Time(0);
        let mut observed = 0;
        for step in 0..3_000 {
            let i = rng.random_range(0..nodes.len());
            match rng.random_range(0..10) {
                0 => nodes[i].used.memory_bytes = rng.random_range(0..16 * GI),
                1 => nodes[i].requested.cpu_milli = rng.random_range(0..4000),
                2 => nodes[i].recent.failures = rng.random_range(0..4),
                3 => {
                    nodes[i].condition = [NodeCondition::Ready, NodeCondition::Degraded, NodeCondition::NotReady]
                        [rng.random_range(0..3)];
                    nodes[i].condition_since = now;
                }
                4 => nodes[i].memory_trend.smoothed_bytes = rng.random_range(0.0..1e10),
                5 => nodes[i].unlimited.pods = rng.random_range(0..3),
                6 => nodes[i].spec.pool.hourly_price = rng.random_range(0.0..2.0),
                7 if nodes.len() > 2 => {
                    nodes.remove(i);
                }
                8 => {
                    let big = if rng.random_bool(0.2) { "64" } else { "4" };
                    let mut n = node(&format!("m{step}"))
                        .cpu(big)
                        .memory("16Gi")
                        .build(nodes.len() as u32);
                    n.since = now;
                    nodes.push(n);
                }
                _ => now = Time(now.0 + rng.random_range(0..120_000)),
            }
            let spec = pod(rng.random_range(0..2000), rng.random_range(0..GI));
            let mut v = view(&nodes);
            v.now = now;
            observe_into(&pending(&spec), &v, &mut memory, &mut seen);
            let fresh = observe(&pending(&spec), &v);
            let bits = |o: &Observation| o.node_features.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&seen), bits(&fresh), "step {step}");
            assert_eq!(seen, fresh, "step {step}");
            observed += nodes.len() as u64;
        }
        // most steps change one node: most rows come from memory
        assert!(
            memory.rows.reused * 2 > observed,
            "{} of {observed}",
            memory.rows.reused
        );
    }
}
