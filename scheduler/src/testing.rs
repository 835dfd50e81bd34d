//! Cluster-view fixtures for tests: node states with what is bound and used
//! on them, clusters of them, views and pending pods. Node and pod *specs*
//! come from the core's builders (`schedlab_core::testing`: `node`, `pod`,
//! `NodeSpecChanges`, `PodSpecChanges`), which this module builds on.
//!
//! ```
//! use scheduler::testing::*;
//! use schedlab_core::testing::{GI, pod};
//! let nodes = cluster([
//!     node("n1").cpu("4").memory("16Gi").pods(110).requested("1", "2Gi"),
//!     node("n2").not_ready(),
//! ]);
//! let spec = pod(500, GI);
//! let (pending, view) = (pending(&spec), view(&nodes));
//! # let _ = (pending, view);
//! ```
//!
//! Quantities are Kubernetes quantity strings; an invalid one is a bug in the
//! test and panics with the parse error.

use schedlab_core::node::{NodeCondition, NodeId, NodeSpec, NodeState, Taint, TaintEffect};
use schedlab_core::pod::{PodId, PodSlot, PodSpec, Toleration, TolerationOperator, WorkloadId};
use schedlab_core::resources::{Resources, parse_cpu_milli, parse_memory_bytes};
use schedlab_core::testing::{GI, MI, NodeSpecChanges};
use schedlab_core::time::Time;
use schedlab_core::view::{BoundPod, ClusterView, Nomination, PendingPod, WorkloadHistory};

#[track_caller]
fn cpu(q: &str) -> u64 {
    parse_cpu_milli(q).unwrap_or_else(|e| panic!("test cpu quantity: {e}"))
}

#[track_caller]
fn memory(q: &str) -> u64 {
    parse_memory_bytes(q).unwrap_or_else(|e| panic!("test memory quantity: {e}"))
}

/// A node state under construction: a core node spec (by default 4 cpu,
/// 16Gi, 110 pods, $0.10 an hour) and what the view shows of it (by default
/// Ready, empty, idle).
#[derive(Debug, Clone)]
pub struct NodeBuilder {
    spec: NodeSpec,
    requested: Resources,
    used: Resources,
    pod_count: u32,
    condition: NodeCondition,
    unschedulable: bool,
}

/// Starts a node called `name`.
pub fn node(name: &str) -> NodeBuilder {
    NodeBuilder::of(schedlab_core::testing::node(name, 4000, 16 * GI, 0.1))
}

impl NodeBuilder {
    /// A node state of `spec`, Ready, empty and idle.
    pub fn of(spec: NodeSpec) -> NodeBuilder {
        NodeBuilder {
            spec,
            requested: Resources::ZERO,
            used: Resources::ZERO,
            pod_count: 0,
            condition: NodeCondition::Ready,
            unschedulable: false,
        }
    }

    /// Allocatable (and capacity) cpu.
    #[track_caller]
    pub fn cpu(mut self, q: &str) -> Self {
        self.spec.capacity.cpu_milli = cpu(q);
        self.spec.allocatable.cpu_milli = cpu(q);
        self
    }
    /// Allocatable (and capacity) memory.
    #[track_caller]
    pub fn memory(mut self, q: &str) -> Self {
        self.spec.capacity.memory_bytes = memory(q);
        self.spec.allocatable.memory_bytes = memory(q);
        self
    }
    /// The pod limit (maxPods).
    pub fn pods(mut self, max_pods: u32) -> Self {
        self.spec = self.spec.max_pods(max_pods);
        self
    }
    /// The summed requests of the pods already bound.
    #[track_caller]
    pub fn requested(mut self, cpu_q: &str, memory_q: &str) -> Self {
        self.requested = Resources::new(cpu(cpu_q), memory(memory_q));
        self
    }
    /// The actual usage of the node's running containers.
    #[track_caller]
    pub fn used(mut self, cpu_q: &str, memory_q: &str) -> Self {
        self.used = Resources::new(cpu(cpu_q), memory(memory_q));
        self
    }
    /// The node pool's price, US dollars an hour.
    pub fn price(mut self, hourly_price: f64) -> Self {
        self.spec.pool.hourly_price = hourly_price;
        self
    }
    /// How many pods are already bound.
    pub fn pod_count(mut self, n: u32) -> Self {
        self.pod_count = n;
        self
    }
    pub fn tainted(mut self, taint: Taint) -> Self {
        self.spec = self.spec.taint(taint);
        self
    }
    pub fn cordoned(mut self) -> Self {
        self.unschedulable = true;
        self
    }
    pub fn not_ready(mut self) -> Self {
        self.condition = NodeCondition::NotReady;
        self
    }
    pub fn degraded(mut self) -> Self {
        self.condition = NodeCondition::Degraded;
        self
    }
    pub fn spot(mut self) -> Self {
        self.spec = self.spec.spot();
        self
    }

    /// The node with id `id`.
    pub fn build(self, id: u32) -> NodeState {
        let mut state = NodeState::new(NodeId(id), self.spec, Time::ZERO);
        state.condition = self.condition;
        state.unschedulable = self.unschedulable;
        state.requested = self.requested;
        state.used = self.used;
        state.pod_count = self.pod_count;
        state
    }
}

/// Nodes with ids 0, 1, … in the order given, as a view expects them.
pub fn cluster(nodes: impl IntoIterator<Item = NodeBuilder>) -> Vec<NodeState> {
    nodes.into_iter().enumerate().map(|(i, b)| b.build(i as u32)).collect()
}

/// Four nodes of 4 CPUs and 16 GiB, `c` a quarter used: `a`, `b` and `d`
/// alike and emptier than `c`, so that kube-scheduler's default profile
/// ties the three.
pub fn three_way_tie() -> Vec<NodeState> {
    cluster([
        node("a").cpu("4").memory("16Gi"),
        node("b").cpu("4").memory("16Gi"),
        node("c").cpu("4").memory("16Gi").requested("2", "8Gi"),
        node("d").cpu("4").memory("16Gi"),
    ])
}

/// A view of `nodes` at time zero.
pub fn view(nodes: &[NodeState]) -> ClusterView<'_> {
    ClusterView::of_nodes(Time::ZERO, nodes, 1, nodes.iter().map(|n| n.pod_count).sum())
}

/// A pod bound at `started_s` seconds that requests `cpu_milli` and no memory.
pub fn bound_pod(id: u64, priority: i32, cpu_milli: u64, started_s: u64) -> BoundPod {
    BoundPod {
        id: PodId(id),
        priority,
        requests: Resources::new(cpu_milli, 0),
        started: Time(started_s * 1000),
    }
}

/// A view of `nodes` (at time zero) with `pods[i]` bound to node i (their
/// requests and count added to the node) and the `nominated` pods: what
/// preemption looks at.
pub fn view_with_pods<'a>(
    nodes: &'a mut [NodeState],
    pods: &'a [Vec<BoundPod>],
    nominated: &'a [Nomination],
) -> ClusterView<'a> {
    for (n, list) in nodes.iter_mut().zip(pods) {
        for p in list {
            n.requested += p.requests;
            n.non_zero_requested += p.requests.non_zero_for_scoring();
            n.pod_count += 1;
        }
    }
    ClusterView {
        now: Time::ZERO,
        nodes,
        pending_pods: 1,
        bound_pods: pods.iter().map(|l| l.len() as u32).sum(),
        pods_by_node: pods,
        lowest_bound_priority: pods.iter().flatten().map(|b| b.priority).min(),
        nominated,
    }
}

/// A best-effort pod whose requests are given as quantity strings, kept for
/// the crates above that still build pods this way (the harness's and the
/// in-cluster scheduler's tests); new tests use `schedlab_core::testing::pod`.
pub fn pod() -> PodBuilder {
    PodBuilder(schedlab_core::testing::pod(0, 0))
}

/// See [`pod`].
#[derive(Debug, Clone)]
pub struct PodBuilder(PodSpec);

impl PodBuilder {
    #[track_caller]
    pub fn cpu(mut self, q: &str) -> Self {
        self.0.requests.cpu_milli = cpu(q);
        self
    }
    #[track_caller]
    pub fn memory(mut self, q: &str) -> Self {
        self.0.requests.memory_bytes = memory(q);
        self
    }
    pub fn build(self) -> PodSpec {
        self.0
    }
}

/// A first scheduling attempt of a pod with `spec`.
pub fn pending(spec: &PodSpec) -> PendingPod<'_> {
    PendingPod {
        id: PodId(1),
        slot: PodSlot {
            workload: WorkloadId(0),
            ordinal: 0,
        },
        spec,
        created: Time::ZERO,
        attempts: 0,
        history: WorkloadHistory::default(),
    }
}

/// A taint; an empty `value` means none.
pub fn taint(key: &str, value: &str, effect: TaintEffect) -> Taint {
    Taint {
        key: key.into(),
        value: (!value.is_empty()).then(|| value.into()),
        effect,
    }
}

/// An `Equal` toleration; `effect: None` tolerates every effect.
pub fn toleration(key: &str, value: &str, effect: Option<TaintEffect>) -> Toleration {
    Toleration {
        key: key.into(),
        operator: TolerationOperator::Equal,
        value: (!value.is_empty()).then(|| value.into()),
        effect,
        toleration_seconds: None,
    }
}

/// An `Exists` toleration; an empty key tolerates every key.
pub fn toleration_exists(key: &str, effect: Option<TaintEffect>) -> Toleration {
    Toleration {
        key: key.into(),
        operator: TolerationOperator::Exists,
        value: None,
        effect,
        toleration_seconds: None,
    }
}

/// A partly filled cluster of `n` nodes for benchmarks, drawn from `seed`:
/// common machine sizes and prices, 20–85% requested, usage near the
/// requests, recent restarts and OOM kills here and there; about 10% spot
/// (tainted), 2% cordoned, 1% NotReady, 3% degraded and 5% with a
/// PreferNoSchedule taint.
pub fn synthetic_cluster(n: usize, seed: u64) -> Vec<NodeState> {
    use rand::Rng;
    use schedlab_core::rng::{purpose, stream};
    let mut rng = stream(seed, &[purpose::TIMELINE, n as u64]);
    // (cpu millicores, memory GiB) allocatable and $/h of common machine types
    let shapes = [
        (1930, 6, 0.067),
        (3920, 13, 0.134),
        (7910, 27, 0.268),
        (15890, 57, 0.536),
    ];
    let mut prices = Vec::with_capacity(n);
    let mut nodes = cluster(
        (0..n)
            .map(|i| {
                let (cpu_m, mem_gi, price) = shapes[rng.random_range(0..shapes.len())];
                prices.push(price);
                let cpu_used = (cpu_m as f64 * rng.random_range(0.2..0.85)) as u64;
                let mem_used = (mem_gi as f64 * 1024.0 * rng.random_range(0.2..0.85)) as u64;
                let b = node(&format!("node-{i}"))
                    .cpu(&format!("{cpu_m}m"))
                    .memory(&format!("{mem_gi}Gi"))
                    .pods(110)
                    .requested(&format!("{cpu_used}m"), &format!("{mem_used}Mi"))
                    .pod_count(rng.random_range(5..60));
                match rng.random::<f64>() {
                    r if r < 0.10 => {
                        b.spot()
                            .tainted(taint("cloud.google.com/gke-spot", "true", TaintEffect::NoSchedule))
                    }
                    r if r < 0.12 => b.cordoned(),
                    r if r < 0.13 => b.not_ready(),
                    r if r < 0.16 => b.degraded(),
                    r if r < 0.21 => b.tainted(taint("maintenance", "", TaintEffect::PreferNoSchedule)),
                    _ => b,
                }
            })
            .collect::<Vec<_>>(),
    );
    for (node, price) in nodes.iter_mut().zip(prices) {
        node.spec.pool.hourly_price = price;
        node.used = Resources::new(
            node.requested.cpu_milli * 7 / 10,
            node.requested.memory_bytes * rng.random_range(6..11) / 10,
        );
        node.recent.restarts = if rng.random::<f64>() < 0.05 {
            rng.random_range(1..6)
        } else {
            0
        };
        node.recent.oom_kills = u32::from(rng.random::<f64>() < 0.01);
    }
    nodes
}

/// A mix of pod shapes for benchmarks, one of them tolerating spot nodes.
pub fn synthetic_pods() -> Vec<PodSpec> {
    use schedlab_core::testing::{PodSpecChanges, pod};
    vec![
        pod(100, 128 * MI),
        pod(250, 512 * MI),
        pod(500, GI),
        pod(1000, 2 * GI),
        pod(2000, 4 * GI),
        pod(0, 0),
        pod(500, GI).tolerate(toleration("cloud.google.com/gke-spot", "true", None)),
    ]
}
