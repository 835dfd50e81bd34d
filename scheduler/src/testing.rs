//! Fluent builders of nodes, pods and cluster views for tests:
//!
//! ```
//! use scheduler::testing::*;
//! let nodes = cluster([
//!     node("n1").cpu("4").memory("16Gi").pods(110).requested("1", "2Gi"),
//!     node("n2").not_ready(),
//! ]);
//! let spec = pod().cpu("500m").memory("1Gi").build();
//! let (pending, view) = (pending(&spec), view(&nodes));
//! # let _ = (pending, view);
//! ```
//!
//! Quantities are Kubernetes quantity strings; an invalid one is a bug in the
//! test and panics with the parse error.

use schedlab_core::dist::Dist;
use schedlab_core::node::{NodeCondition, NodeId, NodePool, NodeSpec, NodeState, Provisioning, Taint, TaintEffect};
use schedlab_core::pod::{
    Behaviour, PodId, PodSlot, PodSpec, RestartPolicy, Toleration, TolerationOperator, WorkloadId,
};
use schedlab_core::resources::{Resources, parse_cpu_milli, parse_memory_bytes};
use schedlab_core::time::Time;
use schedlab_core::view::{ClusterView, PendingPod, WorkloadHistory};
use std::collections::BTreeMap;

#[track_caller]
fn cpu(q: &str) -> u64 {
    parse_cpu_milli(q).unwrap_or_else(|e| panic!("test cpu quantity: {e}"))
}

#[track_caller]
fn memory(q: &str) -> u64 {
    parse_memory_bytes(q).unwrap_or_else(|e| panic!("test memory quantity: {e}"))
}

/// A node under construction; by default Ready, 4 cpu, 16Gi, 110 pods, empty,
/// idle, $0.10 an hour.
#[derive(Debug, Clone)]
pub struct NodeBuilder {
    name: String,
    allocatable: Resources,
    max_pods: u32,
    requested: Resources,
    used: Resources,
    hourly_price: f64,
    pod_count: u32,
    taints: Vec<Taint>,
    condition: NodeCondition,
    unschedulable: bool,
    provisioning: Provisioning,
}

/// Starts a node called `name`.
pub fn node(name: &str) -> NodeBuilder {
    NodeBuilder {
        name: name.to_string(),
        allocatable: Resources::new(4000, 16 << 30),
        max_pods: 110,
        requested: Resources::ZERO,
        used: Resources::ZERO,
        hourly_price: 0.1,
        pod_count: 0,
        taints: Vec::new(),
        condition: NodeCondition::Ready,
        unschedulable: false,
        provisioning: Provisioning::OnDemand,
    }
}

impl NodeBuilder {
    /// Allocatable (and capacity) cpu.
    #[track_caller]
    pub fn cpu(mut self, q: &str) -> Self {
        self.allocatable.cpu_milli = cpu(q);
        self
    }
    /// Allocatable (and capacity) memory.
    #[track_caller]
    pub fn memory(mut self, q: &str) -> Self {
        self.allocatable.memory_bytes = memory(q);
        self
    }
    /// The pod limit (maxPods).
    pub fn pods(mut self, max_pods: u32) -> Self {
        self.max_pods = max_pods;
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
        self.hourly_price = hourly_price;
        self
    }
    /// How many pods are already bound.
    pub fn pod_count(mut self, n: u32) -> Self {
        self.pod_count = n;
        self
    }
    pub fn tainted(mut self, taint: Taint) -> Self {
        self.taints.push(taint);
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
        self.provisioning = Provisioning::Spot;
        self
    }

    /// The node with id `id`.
    pub fn build(self, id: u32) -> NodeState {
        let spec = NodeSpec {
            name: self.name,
            pool: NodePool {
                name: "test".into(),
                machine_type: "test".into(),
                hourly_price: self.hourly_price,
                provisioning: self.provisioning,
            },
            capacity: self.allocatable,
            allocatable: self.allocatable,
            max_pods: self.max_pods,
            labels: BTreeMap::new(),
            taints: self.taints,
        };
        let mut state = NodeState::new(NodeId(id), spec, Time::ZERO);
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

/// A view of `nodes` at time zero.
pub fn view(nodes: &[NodeState]) -> ClusterView<'_> {
    ClusterView::of_nodes(Time::ZERO, nodes, 1, nodes.iter().map(|n| n.pod_count).sum())
}

/// A pod under construction; by default best-effort (no requests).
#[derive(Debug, Clone, Default)]
pub struct PodBuilder {
    requests: Resources,
    limits: Option<Resources>,
    tolerations: Vec<Toleration>,
    priority: i32,
}

/// Starts a pod.
pub fn pod() -> PodBuilder {
    PodBuilder::default()
}

impl PodBuilder {
    #[track_caller]
    pub fn cpu(mut self, q: &str) -> Self {
        self.requests.cpu_milli = cpu(q);
        self
    }
    #[track_caller]
    pub fn memory(mut self, q: &str) -> Self {
        self.requests.memory_bytes = memory(q);
        self
    }
    /// Limits; "0" leaves that resource unlimited.
    #[track_caller]
    pub fn limits(mut self, cpu_q: &str, memory_q: &str) -> Self {
        self.limits = Some(Resources::new(cpu(cpu_q), memory(memory_q)));
        self
    }
    pub fn tolerates(mut self, toleration: Toleration) -> Self {
        self.tolerations.push(toleration);
        self
    }
    pub fn priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }
    pub fn build(self) -> PodSpec {
        PodSpec {
            requests: self.requests,
            limits: self.limits,
            priority: self.priority,
            scheduler_name: "default-scheduler".into(),
            restart_policy: RestartPolicy::Always,
            tolerations: self.tolerations,
            behaviour: Behaviour {
                cpu_usage: Dist::Const { value: 0.0 },
                memory_usage: Dist::Const { value: 0.0 },
                run_seconds: None,
                crash_rate_per_hour: 0.0,
                crash_rate_growth_per_hour: 0.0,
                unstable: false,
                memory_growth_per_hour: None,
            },
        }
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
    vec![
        pod().cpu("100m").memory("128Mi").build(),
        pod().cpu("250m").memory("512Mi").build(),
        pod().cpu("500m").memory("1Gi").build(),
        pod().cpu("1").memory("2Gi").build(),
        pod().cpu("2").memory("4Gi").build(),
        pod().build(),
        pod()
            .cpu("500m")
            .memory("1Gi")
            .tolerates(toleration("cloud.google.com/gke-spot", "true", None))
            .build(),
    ]
}
