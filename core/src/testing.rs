//! Small hand-built nodes, pods, timelines and placers for the tests of
//! every crate (the simulator's, the kube backend's against a local control
//! plane, the baselines'), behind the `testing` feature, so no crate keeps a
//! copy of its own.

use crate::behaviour::ModelConfig;
use crate::rng::stream;
use crate::sim::{Sim, SimSummary};
use crate::{
    Action, Behaviour, ClusterView, Dist, Event, EventKind, NodeId, NodePool, NodeSpec, PendingPod, Placement, PodSlot,
    PodSpec, Provisioning, Record, Resources, RestartPolicy, Span, Taint, Time, TimedAction, Timeline, Toleration,
    Workload, WorkloadId,
};
use rand::Rng;
use std::collections::BTreeMap;

pub const MI: u64 = 1 << 20;
pub const GI: u64 = 1 << 30;

pub fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

/// A node with `cpu_milli` and `memory` both as capacity and allocatable.
pub fn node(name: &str, cpu_milli: u64, memory: u64, price: f64) -> NodeSpec {
    NodeSpec {
        name: name.into(),
        pool: NodePool {
            name: "pool".into(),
            machine_type: "test".into(),
            hourly_price: price,
            provisioning: Provisioning::OnDemand,
        },
        capacity: Resources::new(cpu_milli, memory),
        allocatable: Resources::new(cpu_milli, memory),
        max_pods: 110,
        labels: BTreeMap::new(),
        taints: vec![],
    }
}

/// A long-running pod whose usage equals its requests and that never crashes.
pub fn pod(cpu_milli: u64, memory: u64) -> PodSpec {
    PodSpec {
        requests: Resources::new(cpu_milli, memory),
        limits: None,
        priority: 0,
        scheduler_name: "default-scheduler".into(),
        restart_policy: RestartPolicy::Always,
        tolerations: vec![],
        behaviour: Behaviour {
            cpu_usage: Dist::Const {
                value: cpu_milli as f64,
            },
            memory_usage: Dist::Const { value: memory as f64 },
            run_seconds: None,
            crash_rate_per_hour: 0.0,
            crash_rate_growth_per_hour: 0.0,
            unstable: false,
            memory_growth_per_hour: None,
        },
    }
}

/// Changes to a [`pod`] for tests that need more than its defaults, so a
/// test names only what it is about: `pod(100, 64 * MI).scheduler("x").crash_rate(2.0)`.
pub trait PodSpecChanges: Sized {
    fn scheduler(self, name: &str) -> Self;
    fn priority(self, priority: i32) -> Self;
    fn tolerate(self, toleration: Toleration) -> Self;
    fn limits(self, limits: Resources) -> Self;
    fn restart(self, policy: RestartPolicy) -> Self;
    /// what a container uses, drawn at each start
    fn usage(self, cpu_milli: Dist, memory_bytes: Dist) -> Self;
    fn run_seconds(self, run: Dist) -> Self;
    fn crash_rate(self, per_hour: f64) -> Self;
    fn leak(self, bytes_per_hour: Dist) -> Self;
    fn unstable(self) -> Self;
}

impl PodSpecChanges for PodSpec {
    fn scheduler(mut self, name: &str) -> PodSpec {
        self.scheduler_name = name.into();
        self
    }

    fn priority(mut self, priority: i32) -> PodSpec {
        self.priority = priority;
        self
    }

    fn tolerate(mut self, toleration: Toleration) -> PodSpec {
        self.tolerations.push(toleration);
        self
    }

    fn limits(mut self, limits: Resources) -> PodSpec {
        self.limits = Some(limits);
        self
    }

    fn restart(mut self, policy: RestartPolicy) -> PodSpec {
        self.restart_policy = policy;
        self
    }

    fn usage(mut self, cpu_milli: Dist, memory_bytes: Dist) -> PodSpec {
        self.behaviour.cpu_usage = cpu_milli;
        self.behaviour.memory_usage = memory_bytes;
        self
    }

    fn run_seconds(mut self, run: Dist) -> PodSpec {
        self.behaviour.run_seconds = Some(run);
        self
    }

    fn crash_rate(mut self, per_hour: f64) -> PodSpec {
        self.behaviour.crash_rate_per_hour = per_hour;
        self
    }

    fn leak(mut self, bytes_per_hour: Dist) -> PodSpec {
        self.behaviour.memory_growth_per_hour = Some(bytes_per_hour);
        self
    }

    fn unstable(mut self) -> PodSpec {
        self.behaviour.unstable = true;
        self
    }
}

/// Changes to a [`node`] for tests that need more than its defaults.
pub trait NodeSpecChanges: Sized {
    fn pool(self, name: &str, machine_type: &str) -> Self;
    fn allocatable(self, allocatable: Resources) -> Self;
    fn label(self, key: &str, value: &str) -> Self;
    fn max_pods(self, max_pods: u32) -> Self;
    fn taint(self, taint: Taint) -> Self;
    fn spot(self) -> Self;
}

impl NodeSpecChanges for NodeSpec {
    fn pool(mut self, name: &str, machine_type: &str) -> NodeSpec {
        self.pool.name = name.into();
        self.pool.machine_type = machine_type.into();
        self
    }

    fn allocatable(mut self, allocatable: Resources) -> NodeSpec {
        self.allocatable = allocatable;
        self
    }

    fn label(mut self, key: &str, value: &str) -> NodeSpec {
        self.labels.insert(key.into(), value.into());
        self
    }

    fn max_pods(mut self, max_pods: u32) -> NodeSpec {
        self.max_pods = max_pods;
        self
    }

    fn taint(mut self, taint: Taint) -> NodeSpec {
        self.taints.push(taint);
        self
    }

    fn spot(mut self) -> NodeSpec {
        self.pool.provisioning = Provisioning::Spot;
        self
    }
}

/// A [`Workload`] of `spec`, named `name`, that the owner recreates.
pub fn workload(id: u32, name: &str, spec: PodSpec) -> Workload {
    Workload {
        id: WorkloadId(id),
        name: name.into(),
        spec,
        recreate: true,
        slot_specs: Vec::new(),
    }
}

/// Builds a [`Timeline`] by hand.
#[derive(Debug)]
pub struct TimelineBuilder {
    timeline: Timeline,
}

impl TimelineBuilder {
    pub fn new(end_secs: f64) -> TimelineBuilder {
        TimelineBuilder {
            timeline: Timeline {
                nodes: vec![],
                workloads: vec![],
                actions: vec![],
                end: secs(end_secs),
                sample_interval: Span::from_secs(15),
            },
        }
    }

    pub fn sample_every(mut self, secs: u64) -> TimelineBuilder {
        self.timeline.sample_interval = Span::from_secs(secs);
        self
    }

    pub fn node(mut self, spec: NodeSpec) -> TimelineBuilder {
        self.timeline.nodes.push(spec);
        self
    }

    /// `count` nodes of `cpu_milli` and `memory` at one dollar an hour.
    pub fn nodes(mut self, count: usize, cpu_milli: u64, memory: u64) -> TimelineBuilder {
        for _ in 0..count {
            let i = self.timeline.nodes.len();
            self.timeline.nodes.push(node(&format!("n{i}"), cpu_milli, memory, 1.0));
        }
        self
    }

    /// Adds a workload; its id is the next index.
    pub fn workload(mut self, name: &str, spec: PodSpec, recreate: bool) -> TimelineBuilder {
        let id = WorkloadId(self.timeline.workloads.len() as u32);
        self.timeline.workloads.push(Workload {
            id,
            name: name.into(),
            spec,
            recreate,
            slot_specs: Vec::new(),
        });
        self
    }

    pub fn at(mut self, at_secs: f64, action: Action) -> TimelineBuilder {
        self.timeline.actions.push(TimedAction {
            at: secs(at_secs),
            action,
        });
        self
    }

    /// Creates slots `first..first + count` of workload `w` at `at_secs`.
    pub fn create(mut self, at_secs: f64, w: u32, first: u32, count: u32) -> TimelineBuilder {
        for ordinal in first..first + count {
            self = self.at(at_secs, Action::CreatePod { slot: slot(w, ordinal) });
        }
        self
    }

    pub fn build(mut self) -> Timeline {
        self.timeline.actions.sort_by_key(|a| a.at);
        self.timeline
    }
}

pub fn slot(w: u32, ordinal: u32) -> PodSlot {
    PodSlot {
        workload: WorkloadId(w),
        ordinal,
    }
}

/// Whether `node` can take `pod` (ready, pod count, requests).
pub fn fits(pod: &PendingPod<'_>, n: &crate::NodeState) -> bool {
    n.condition.is_ready()
        && n.pod_count < n.spec.max_pods
        && (n.requested + pod.spec.requests).fits_in(&n.spec.allocatable)
}

/// The lowest-numbered node that can take the pod.
pub fn first_feasible(pod: &PendingPod<'_>, view: &ClusterView<'_>) -> Placement {
    match view.nodes.iter().find(|n| fits(pod, n)) {
        Some(n) => Placement::Bind(n.id),
        None => Placement::Unschedulable {
            reason: "no node fits".into(),
        },
    }
}

/// First feasible, searching from where the last search ended: cheap on big
/// clusters.
pub fn next_fit() -> impl FnMut(&PendingPod<'_>, &ClusterView<'_>) -> Placement {
    let mut cursor = 0usize;
    move |pod, view| {
        let n = view.nodes.len();
        for k in 0..n {
            let i = (cursor + k) % n;
            if fits(pod, &view.nodes[i]) {
                cursor = i;
                return Placement::Bind(NodeId(i as u32));
            }
        }
        Placement::Unschedulable {
            reason: "no node fits".into(),
        }
    }
}

/// Plays `timeline` to its end with the first-feasible policy.
pub fn run(timeline: Timeline, seed: u64) -> Vec<Record> {
    run_with(timeline, seed, &mut first_feasible).0
}

pub fn run_with(timeline: Timeline, seed: u64, policy: &mut dyn crate::policy::Scheduler) -> (Vec<Record>, SimSummary) {
    let sim = Sim::new(timeline, seed, ModelConfig::default()).expect("valid timeline");
    let mut records = Vec::new();
    let summary = sim.finish(policy, &mut records);
    (records, summary)
}

/// The sample of `node` at `t`.
pub fn node_sample(records: &[Record], t: Time, node: NodeId) -> crate::record::NodeSample {
    records
        .iter()
        .find_map(|r| match r {
            Record::NodeSample(s) if s.t == t && s.node == node => Some(s.clone()),
            _ => None,
        })
        .expect("a sample of the node at that time")
}

pub fn events(records: &[Record]) -> Vec<Event> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Event(e) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

/// The events `pick` selects, with their times.
pub fn select<T>(records: &[Record], mut pick: impl FnMut(&EventKind) -> Option<T>) -> Vec<(Time, T)> {
    events(records)
        .iter()
        .filter_map(|e| pick(&e.kind).map(|v| (e.t, v)))
        .collect()
}

/// A record sink that only counts, for benchmarks.
#[derive(Debug, Default)]
pub struct CountingSink {
    pub records: u64,
    pub events: u64,
}

impl crate::RecordSink for CountingSink {
    fn record(&mut self, record: Record) {
        self.records += 1;
        if matches!(record, Record::Event(_)) {
            self.events += 1;
        }
    }
}

/// A synthetic run over `hours` hours: `nodes` nodes of 8 cpu and 32 GiB;
/// `pods` pods of three kinds (services, unstable services with a memory
/// limit they sometimes pass, and batch jobs) created over the first tenth
/// of the run; churn deleting and recreating 1 % of the service slots every
/// minute; a kill per minute; every five minutes a node failure with
/// recovery and a degradation. The pods ask for about half the cluster.
pub fn synthetic(nodes: usize, pods: u32, hours: f64, seed: u64) -> Timeline {
    let end = hours * 3600.0;
    let mut rng = stream(seed, &[crate::rng::purpose::TIMELINE, 99]);
    let mut b = TimelineBuilder::new(end).sample_every(60).nodes(nodes, 8000, 32 * GI);
    let mut service = pod(250, 512 * MI);
    service.behaviour.cpu_usage = Dist::Normal { mean: 200.0, std: 50.0 };
    service.behaviour.memory_usage = Dist::LogNormal {
        median: 400.0 * MI as f64,
        sigma: 0.3,
    };
    service.behaviour.crash_rate_per_hour = 0.05;
    let mut unstable = pod(500, GI);
    unstable.limits = Some(Resources::new(1000, 2 * GI));
    unstable.behaviour.memory_usage = Dist::LogNormal {
        median: 1.2 * GI as f64,
        sigma: 0.4,
    };
    unstable.behaviour.crash_rate_per_hour = 2.0;
    unstable.behaviour.unstable = true;
    let mut batch = pod(1000, 2 * GI);
    batch.restart_policy = RestartPolicy::OnFailure;
    batch.behaviour.run_seconds = Some(Dist::Exponential { mean: 600.0 });
    batch.priority = 10;
    b = b
        .workload("service", service, true)
        .workload("unstable", unstable, true)
        .workload("batch", batch, false);
    let counts = [pods * 6 / 10, pods * 3 / 10, pods - pods * 6 / 10 - pods * 3 / 10];
    let ramp = end / 10.0;
    for (w, &count) in counts.iter().enumerate() {
        for ordinal in 0..count {
            let at = ramp * f64::from(ordinal) / f64::from(count.max(1));
            b = b.at(
                at,
                Action::CreatePod {
                    slot: slot(w as u32, ordinal),
                },
            );
        }
    }
    let mut t = 60.0;
    while t < end {
        for (w, &count) in counts.iter().enumerate().take(2) {
            for _ in 0..(count / 100).max(1) {
                let ordinal = rng.random_range(0..count.max(1));
                b = b.at(
                    t,
                    Action::DeletePod {
                        slot: slot(w as u32, ordinal),
                        recreate: true,
                    },
                );
            }
            let ordinal = rng.random_range(0..count.max(1));
            b = b.at(
                t + 30.0,
                Action::KillPod {
                    slot: slot(w as u32, ordinal),
                },
            );
        }
        if (t as u64).is_multiple_of(300) {
            let victim = NodeId(rng.random_range(0..nodes as u32));
            b = b.at(t, Action::FailNode { node: victim });
            b = b.at(t + rng.random_range(60.0..600.0), Action::RecoverNode { node: victim });
            let flaky = NodeId(rng.random_range(0..nodes as u32));
            b = b.at(t, Action::DegradeNode { node: flaky });
            b = b.at(t + 900.0, Action::RecoverNode { node: flaky });
        }
        t += 60.0;
    }
    b.build()
}
