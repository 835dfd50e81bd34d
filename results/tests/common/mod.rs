//! Hand-written record sequences for the tests. Included by the integration
//! tests and, through `#[path]`, by the unit tests beside the code.
#![allow(dead_code)]

use results::metrics::{MetricsError, RunMetrics, RunMetricsBuilder};
use schedlab_core::record::{ClusterSample, DeleteCause, Event, EventKind, ExitReason, NodeSample, OomCause};
use schedlab_core::{NodeCondition, NodeId, PodId, PodSlot, QosClass, Record, Resources};
use schedlab_core::{Time, WorkloadId};

pub fn node(id: u32, cpu_milli: u64, memory_bytes: u64, price: f64) -> Record {
    Record::Node {
        node: NodeId(id),
        spec: schedlab_core::testing::node(&format!("node-{id}"), cpu_milli, memory_bytes, price),
    }
}

pub fn ev(t: u64, kind: EventKind) -> Record {
    Record::Event(Event { t: Time(t), kind })
}

pub fn created(t: u64, pod: u64, cpu_milli: u64, memory_bytes: u64) -> Record {
    ev(
        t,
        EventKind::PodCreated {
            pod: PodId(pod),
            slot: PodSlot {
                workload: WorkloadId(0),
                ordinal: pod as u32,
            },
            requests: Resources::new(cpu_milli, memory_bytes),
            memory_limit: None,
            priority: 0,
            qos: QosClass::Burstable,
            unstable: false,
        },
    )
}

pub fn bound(t: u64, pod: u64, node: u32) -> Record {
    ev(
        t,
        EventKind::PodBound {
            pod: PodId(pod),
            node: NodeId(node),
        },
    )
}

pub fn started(t: u64, pod: u64, node: u32, restart_count: u32) -> Record {
    ev(
        t,
        EventKind::ContainerStarted {
            pod: PodId(pod),
            node: NodeId(node),
            restart_count,
            usage: Resources::ZERO,
        },
    )
}

pub fn exited(t: u64, pod: u64, node: u32, reason: ExitReason) -> Record {
    ev(
        t,
        EventKind::ContainerExited {
            pod: PodId(pod),
            node: NodeId(node),
            reason,
            oom_cause: (reason == ExitReason::OOMKilled).then_some(OomCause::Limit),
        },
    )
}

pub fn succeeded(t: u64, pod: u64, node: u32) -> Record {
    ev(
        t,
        EventKind::PodSucceeded {
            pod: PodId(pod),
            node: NodeId(node),
        },
    )
}

pub fn failed(t: u64, pod: u64, node: u32) -> Record {
    ev(
        t,
        EventKind::PodFailed {
            pod: PodId(pod),
            node: NodeId(node),
        },
    )
}

pub fn evicted(t: u64, pod: u64, node: u32) -> Record {
    ev(
        t,
        EventKind::PodEvicted {
            pod: PodId(pod),
            node: NodeId(node),
        },
    )
}

pub fn deleted(t: u64, pod: u64) -> Record {
    ev(
        t,
        EventKind::PodDeleted {
            pod: PodId(pod),
            node: None,
            cause: DeleteCause::Scenario,
        },
    )
}

pub fn unschedulable(t: u64, pod: u64) -> Record {
    ev(
        t,
        EventKind::PodUnschedulable {
            pod: PodId(pod),
            reason: "no room".into(),
        },
    )
}

pub fn declined(t: u64, pod: u64) -> Record {
    ev(
        t,
        EventKind::PodDeclined {
            pod: PodId(pod),
            reason: "restraint".into(),
        },
    )
}

pub fn node_failed(t: u64, node: u32) -> Record {
    ev(t, EventKind::NodeFailed { node: NodeId(node) })
}

/// A node sample: requested and used as (cpu milli, memory bytes).
pub fn node_sample(
    t: u64,
    node: u32,
    requested: (u64, u64),
    used: (u64, u64),
    pods: u32,
    condition: NodeCondition,
) -> Record {
    Record::NodeSample(NodeSample {
        t: Time(t),
        node: NodeId(node),
        requested: Resources::new(requested.0, requested.1),
        used: Resources::new(used.0, used.1),
        pods,
        condition,
    })
}

/// A cluster sample; only nodes_in_use and hourly_cost feed metrics.
pub fn cluster_sample(t: u64, nodes_in_use: u32, hourly_cost: f64) -> Record {
    Record::ClusterSample(ClusterSample {
        t: Time(t),
        allocatable: Resources::ZERO,
        requested: Resources::ZERO,
        used: Resources::ZERO,
        pending: 0,
        bound: 0,
        nodes_in_use,
        nodes_ready: 0,
        hourly_cost,
    })
}

pub fn end(t: u64) -> Record {
    Record::End { t: Time(t) }
}

pub fn metrics_of(records: &[Record]) -> Result<RunMetrics, MetricsError> {
    let mut b = RunMetricsBuilder::new();
    for r in records {
        b.push(r);
    }
    b.finish()
}

/// A one-minute run on two nodes whose every metric is worked out by hand in
/// tests/metrics.rs. Node 0: 4 cores, 8000 B, $1/h; node 1: 2 cores, 4000 B,
/// $0.5/h. Node 1 fails at 25 s; its pod is evicted at 45 s and recreated.
pub fn hand_run() -> Vec<Record> {
    use ExitReason::*;
    use NodeCondition::*;
    vec![
        node(0, 4000, 8000, 1.0),
        node(1, 2000, 4000, 0.5),
        created(0, 1, 1000, 2000),
        created(0, 2, 500, 1000),
        created(0, 3, 1000, 3000),
        unschedulable(0, 3),
        node_sample(0, 0, (0, 0), (0, 0), 0, Ready),
        node_sample(0, 1, (0, 0), (0, 0), 0, Ready),
        cluster_sample(0, 0, 0.0),
        bound(1000, 1, 0),
        started(1500, 1, 0, 0),
        bound(3000, 2, 0),
        started(3500, 2, 0, 0),
        declined(5000, 3),
        created(10_000, 4, 1000, 4000),
        bound(11_000, 4, 1),
        started(11_500, 4, 1, 0),
        exited(20_000, 1, 0, Error),
        node_sample(20_000, 0, (1500, 3000), (600, 2400), 2, Ready),
        node_sample(20_000, 1, (1000, 4000), (500, 3000), 1, Ready),
        cluster_sample(20_000, 2, 1.5),
        node_failed(25_000, 1),
        started(30_000, 1, 0, 1),
        cluster_sample(40_000, 2, 1.5),
        node_sample(40_000, 0, (1500, 3000), (700, 2600), 2, Degraded),
        node_sample(40_000, 1, (1000, 4000), (0, 0), 1, NotReady),
        exited(40_000, 1, 0, OOMKilled),
        exited(45_000, 2, 0, Completed),
        succeeded(45_000, 2, 0),
        evicted(45_000, 4, 1),
        created(45_000, 5, 1000, 4000),
        bound(45_500, 5, 0),
        started(46_000, 5, 0, 0),
        started(50_000, 1, 0, 2),
        created(50_000, 6, 100, 500),
        deleted(52_000, 6),
        exited(55_000, 5, 0, Error),
        failed(55_000, 5, 0),
        end(60_000),
    ]
}

/// A small run whose numbers vary with `seed` and `crashes` (pods of the
/// first node crash that many times), for summary tests.
pub fn synthetic_run(seed: u64, crashes: u32) -> Vec<Record> {
    let mut r = vec![node(0, 4000, 8000, 1.0), node(1, 4000, 8000, 1.0)];
    let pods = 4 + seed % 3;
    for p in 0..pods {
        let node = (p % 2) as u32;
        let t0 = p * 1000;
        r.push(created(t0, p, 500, 1000 + 500 * (p % 3)));
        r.push(bound(t0 + 100 * (seed + p + 1), p, node));
        r.push(started(t0 + 100 * (seed + p + 1) + 50, p, node, 0));
        if node == 0 {
            for c in 0..crashes {
                let t = 20_000 + u64::from(c) * 1000 + p;
                r.push(exited(t, p, node, ExitReason::Error));
                r.push(started(t + 500, p, node, c + 1));
            }
        }
    }
    for (i, t) in [0u64, 30_000].into_iter().enumerate() {
        let load = if i == 0 { 0 } else { 500 * pods / 2 };
        r.push(node_sample(
            t,
            0,
            (load, 2 * load),
            (load / 2, load),
            (i as u32) * 2,
            NodeCondition::Ready,
        ));
        r.push(node_sample(
            t,
            1,
            (load, 2 * load),
            (load / 2, load),
            (i as u32) * 2,
            NodeCondition::Ready,
        ));
        r.push(cluster_sample(t, (i as u32) * 2, if i == 0 { 0.0 } else { 2.0 }));
    }
    r.push(end(60_000 + 1000 * seed));
    r
}

/// A PodCreated of template `workload` at `priority`, requesting 100 m CPU
/// and `memory_bytes`.
pub fn created_with(t: u64, pod: u64, workload: u32, priority: i32, memory_bytes: u64) -> Record {
    ev(
        t,
        EventKind::PodCreated {
            pod: PodId(pod),
            slot: PodSlot {
                workload: WorkloadId(workload),
                ordinal: pod as u32,
            },
            requests: Resources::new(100, memory_bytes),
            memory_limit: None,
            priority,
            qos: QosClass::Burstable,
            unstable: false,
        },
    )
}

/// A Workload record naming template `workload`.
pub fn workload(id: u32, name: &str) -> Record {
    Record::Workload {
        workload: WorkloadId(id),
        name: name.to_string(),
    }
}

/// A container killed by the OOM killer under node memory pressure.
pub fn oom_pressure(t: u64, pod: u64, node: u32) -> Record {
    ev(
        t,
        EventKind::ContainerExited {
            pod: PodId(pod),
            node: NodeId(node),
            reason: ExitReason::OOMKilled,
            oom_cause: Some(OomCause::NodePressure),
        },
    )
}

pub fn node_degraded(t: u64, node: u32) -> Record {
    ev(t, EventKind::NodeDegraded { node: NodeId(node) })
}

pub fn node_recovered(t: u64, node: u32) -> Record {
    ev(t, EventKind::NodeRecovered { node: NodeId(node) })
}

pub fn node_lost(t: u64, node: u32) -> Record {
    ev(t, EventKind::NodeLost { node: NodeId(node) })
}

pub fn node_replaced(t: u64, node: u32) -> Record {
    ev(t, EventKind::NodeReplaced { node: NodeId(node) })
}
