//! The simulator against small hand-built timelines.

use schedlab_core::Error;
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::record::{DeleteCause, ExitReason, OomCause};
use schedlab_core::sim::{Sim, SimError};
use schedlab_core::testing::*;
use schedlab_core::{
    Action, ClusterView, EventKind, NodeCondition, NodeId, PendingPod, Placement, PodId, PodSlot, Record, Resources,
    RestartPolicy, Time, WorkloadId,
};
use std::collections::BTreeMap;

fn created(records: &[Record]) -> Vec<(Time, PodId, PodSlot)> {
    select(records, |e| match e {
        EventKind::PodCreated { pod, slot, .. } => Some((*pod, *slot)),
        _ => None,
    })
    .into_iter()
    .map(|(t, (p, s))| (t, p, s))
    .collect()
}

fn bound(records: &[Record]) -> Vec<(Time, PodId, NodeId)> {
    select(records, |e| match e {
        EventKind::PodBound { pod, node } => Some((*pod, *node)),
        _ => None,
    })
    .into_iter()
    .map(|(t, (p, n))| (t, p, n))
    .collect()
}

fn starts(records: &[Record], of: PodId) -> Vec<(Time, u32)> {
    select(records, |e| match e {
        EventKind::ContainerStarted { pod, restart_count, .. } if *pod == of => Some(*restart_count),
        _ => None,
    })
}

fn exits(records: &[Record], of: PodId) -> Vec<(Time, ExitReason, Option<OomCause>)> {
    select(records, |e| match e {
        EventKind::ContainerExited {
            pod, reason, oom_cause, ..
        } if *pod == of => Some((*reason, *oom_cause)),
        _ => None,
    })
    .into_iter()
    .map(|(t, (r, c))| (t, r, c))
    .collect()
}

fn to_jsonl(records: &[Record]) -> String {
    records
        .iter()
        .map(|r| serde_json::to_string(r).expect("records serialise") + "\n")
        .collect()
}

#[test]
fn same_seed_same_records_other_seed_other_records() {
    let timeline = synthetic(20, 300, 0.5, 1);
    let a = run(timeline.clone(), 1);
    let b = run(timeline.clone(), 1);
    assert_eq!(a, b);
    assert_eq!(to_jsonl(&a), to_jsonl(&b));
    let c = run(timeline, 2);
    assert_ne!(a, c);
    // the run did something worth comparing
    let ev = events(&a);
    assert!(
        ev.iter()
            .any(|e| matches!(e.kind, EventKind::PodEvicted { .. } | EventKind::NodeFailed { .. }))
    );
    assert!(ev.iter().any(|e| matches!(e.kind, EventKind::ContainerExited { .. })));
    assert!(matches!(a.last(), Some(Record::End { t }) if *t == secs(1800.0)));
}

#[test]
fn running_in_steps_writes_what_one_run_writes() {
    let timeline = synthetic(10, 120, 0.25, 3);
    let whole = run(timeline.clone(), 5);
    let mut sim = Sim::new(timeline, 5, ModelConfig::default()).unwrap();
    let mut records = Vec::new();
    let mut t = Time::ZERO;
    while t < sim.end() {
        sim.run_until(t, &mut first_feasible, &mut records);
        assert_eq!(sim.now(), t);
        t = t + schedlab_core::Span::from_secs(7);
    }
    sim.finish(&mut first_feasible, &mut records);
    assert_eq!(records, whole);
}

#[test]
fn arms_of_a_seed_draw_the_same_usage_per_slot() {
    let timeline = synthetic(10, 150, 0.25, 4);
    let last_feasible = &mut |p: &PendingPod<'_>, v: &ClusterView<'_>| match v.nodes.iter().rev().find(|n| fits(p, n)) {
        Some(n) => Placement::Bind(n.id),
        None => Placement::Unschedulable { reason: "full".into() },
    };
    let first = run(timeline.clone(), 9);
    let (last, _) = run_with(timeline, 9, last_feasible);
    let first_usage = |records: &[Record]| {
        let slot_of: BTreeMap<PodId, PodSlot> = created(records).into_iter().map(|(_, p, s)| (p, s)).collect();
        let mut usage = BTreeMap::new();
        for (_, (pod, u)) in select(records, |e| match e {
            EventKind::ContainerStarted {
                pod,
                restart_count: 0,
                usage,
                ..
            } => Some((*pod, *usage)),
            _ => None,
        }) {
            usage.entry(slot_of[&pod]).or_insert(u);
        }
        usage
    };
    let (a, b) = (first_usage(&first), first_usage(&last));
    assert_ne!(bound(&first), bound(&last), "the arms should place differently");
    let common: Vec<_> = a.keys().filter(|s| b.contains_key(s)).collect();
    assert!(common.len() > 100);
    for s in common {
        assert_eq!(a[s], b[s], "{s:?}");
    }
}

#[test]
fn node_failure_evicts_after_the_toleration_and_the_owner_recreates() {
    let timeline = TimelineBuilder::new(1000.0)
        .nodes(2, 1000, GI)
        .workload("svc", pod(500, 256 * MI), true)
        .create(0.0, 0, 0, 1)
        .at(100.0, Action::FailNode { node: NodeId(0) })
        .build();
    let records = run(timeline, 1);
    let (p0, p1) = (PodId(0), PodId(1));
    assert_eq!(
        bound(&records),
        vec![(secs(0.0), p0, NodeId(0)), (secs(400.0), p1, NodeId(1))]
    );
    assert_eq!(
        select(&records, |e| matches!(e, EventKind::PodEvicted { .. })
            .then(|| e.clone())),
        vec![(
            secs(400.0),
            EventKind::PodEvicted {
                pod: p0,
                node: NodeId(0)
            }
        )]
    );
    assert_eq!(created(&records)[1], (secs(400.0), p1, slot(0, 0)));
    assert_eq!(starts(&records, p0), vec![(secs(1.0), 0)]);
    // the failed node's container stopped without an exit event
    assert!(exits(&records, p0).is_empty());
    assert_eq!(starts(&records, p1), vec![(secs(401.0), 0)]);
    let node0 = |t: f64| node_sample(&records, secs(t), NodeId(0));
    assert_eq!(node0(90.0).used, Resources::new(500, 256 * MI));
    let down = node0(105.0);
    assert_eq!(down.condition, NodeCondition::NotReady);
    assert_eq!(down.used, Resources::ZERO);
    assert_eq!(down.pods, 1);
    assert_eq!(node0(405.0).pods, 0);
    let cluster_at = |t: f64| {
        records
            .iter()
            .find_map(|r| match r {
                Record::ClusterSample(s) if s.t == secs(t) => Some(s.clone()),
                _ => None,
            })
            .unwrap()
    };
    let during = cluster_at(105.0);
    assert_eq!(during.nodes_ready, 1);
    assert_eq!(during.allocatable, Resources::new(1000, GI));
    assert_eq!(during.hourly_cost, 1.0);
    assert_eq!(during.bound, 1);
}

#[test]
fn a_node_that_recovers_in_time_restarts_its_pods() {
    let timeline = TimelineBuilder::new(1000.0)
        .nodes(2, 1000, GI)
        .workload("svc", pod(500, 256 * MI), true)
        .create(0.0, 0, 0, 1)
        .at(100.0, Action::FailNode { node: NodeId(0) })
        .at(300.0, Action::RecoverNode { node: NodeId(0) })
        .build();
    let records = run(timeline, 1);
    assert_eq!(starts(&records, PodId(0)), vec![(secs(1.0), 0), (secs(300.0), 1)]);
    assert!(
        !events(&records)
            .iter()
            .any(|e| matches!(e.kind, EventKind::PodEvicted { .. }))
    );
    assert_eq!(created(&records).len(), 1);
    assert!(
        events(&records)
            .iter()
            .any(|e| e.t == secs(300.0) && e.kind == EventKind::NodeRecovered { node: NodeId(0) })
    );
}

#[test]
fn churn_deletes_and_the_owner_recreates() {
    let timeline = TimelineBuilder::new(200.0)
        .nodes(1, 4000, 4 * GI)
        .workload("owned", pod(100, 64 * MI), true)
        .workload("bare", pod(100, 64 * MI), false)
        .workload("too-big", pod(100_000, 64 * MI), true)
        .create(0.0, 0, 0, 1)
        .create(0.0, 1, 0, 1)
        .create(0.0, 2, 0, 1)
        .at(
            50.0,
            Action::DeletePod {
                slot: slot(0, 0),
                recreate: true,
            },
        )
        .at(
            50.0,
            Action::DeletePod {
                slot: slot(1, 0),
                recreate: true,
            },
        )
        .at(
            60.0,
            Action::DeletePod {
                slot: slot(2, 0),
                recreate: true,
            },
        )
        .at(
            100.0,
            Action::DeletePod {
                slot: slot(0, 0),
                recreate: false,
            },
        )
        .build();
    let records = run(timeline, 1);
    let deleted = select(&records, |e| match e {
        EventKind::PodDeleted { pod, node, cause } => Some((*pod, *node, *cause)),
        _ => None,
    });
    // pods 0, 1, 2 at t=0; 3 replaces 0; 4 replaces 2 (pending, never bound)
    assert_eq!(
        deleted,
        vec![
            (secs(50.0), (PodId(0), Some(NodeId(0)), DeleteCause::Churn)),
            (secs(50.0), (PodId(1), Some(NodeId(0)), DeleteCause::Churn)),
            (secs(60.0), (PodId(2), None, DeleteCause::Churn)),
            (secs(100.0), (PodId(3), Some(NodeId(0)), DeleteCause::Scenario)),
        ]
    );
    assert_eq!(
        created(&records)[3..],
        [(secs(50.0), PodId(3), slot(0, 0)), (secs(60.0), PodId(4), slot(2, 0))]
    );
    assert!(bound(&records).contains(&(secs(50.0), PodId(3), NodeId(0))));
    assert_eq!(starts(&records, PodId(3)), vec![(secs(51.0), 0)]);
    // the node is empty once every bound pod is deleted
    let last_node_sample = records
        .iter()
        .rev()
        .find_map(|r| match r {
            Record::NodeSample(s) => Some(s.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(last_node_sample.pods, 0);
    assert_eq!(last_node_sample.requested, Resources::ZERO);
    assert_eq!(last_node_sample.used, Resources::ZERO);
}

#[test]
fn oom_on_the_limit_crash_loops_with_growing_gaps() {
    let mut hungry = pod(100, 100 * MI);
    hungry.limits = Some(Resources::new(200, 128 * MI));
    hungry.behaviour.memory_usage = schedlab_core::Dist::Const {
        value: (256 * MI) as f64,
    };
    let timeline = TimelineBuilder::new(3600.0)
        .nodes(1, 4000, 4 * GI)
        .workload("hungry", hungry, true)
        .create(0.0, 0, 0, 1)
        .create(600.0, 0, 1, 1)
        .build();
    let mut seen = Vec::new();
    let (records, _) = run_with(timeline, 3, &mut |p: &PendingPod<'_>, v: &ClusterView<'_>| {
        seen.push((p.id, p.history, v.nodes[0].recent));
        first_feasible(p, v)
    });
    let p0 = PodId(0);
    let exits = exits(&records, p0);
    let starts = starts(&records, p0);
    assert!(exits.len() >= 8, "{exits:?}");
    assert!(
        exits
            .iter()
            .all(|e| e.1 == ExitReason::OOMKilled && e.2 == Some(OomCause::Limit))
    );
    let gaps: Vec<u64> = exits
        .iter()
        .zip(&starts[1..])
        .map(|(exit, start)| start.0.since(exit.0).as_millis() / 1000)
        .take(8)
        .collect();
    assert_eq!(gaps, [10, 20, 40, 80, 160, 300, 300, 300]);
    assert!(starts.iter().enumerate().all(|(i, s)| s.1 == i as u32));
    // the second pod's scheduler sees the trouble on the node and in the workload
    let (_, history, recent) = seen.iter().find(|s| s.0 == PodId(1)).unwrap();
    assert_eq!(history.pods, 2);
    assert!(history.oom_kills >= 4 && history.restarts >= 4, "{history:?}");
    assert_eq!(history.failures, history.oom_kills);
    assert!(
        recent.oom_kills >= 1 && recent.oom_kills <= history.oom_kills,
        "{recent:?}"
    );
}

#[test]
fn node_out_of_memory_kills_best_effort_first() {
    let mut guaranteed = pod(100, 300 * MI);
    guaranteed.limits = Some(guaranteed.requests);
    let mut burstable = pod(100, 100 * MI);
    burstable.behaviour.memory_usage = schedlab_core::Dist::Const {
        value: (400 * MI) as f64,
    };
    let mut best_effort = pod(0, 0);
    best_effort.behaviour.memory_usage = schedlab_core::Dist::Const {
        value: (400 * MI) as f64,
    };
    let timeline = TimelineBuilder::new(30.0)
        .nodes(1, 4000, GI)
        .workload("g", guaranteed, true)
        .workload("bu", burstable, true)
        .workload("be", best_effort, true)
        .create(0.0, 0, 0, 1)
        .create(0.0, 1, 0, 1)
        .create(0.0, 2, 0, 1)
        .build();
    let records = run(timeline, 1);
    let kills = select(&records, |e| match e {
        EventKind::ContainerExited {
            pod, reason, oom_cause, ..
        } => Some((*pod, *reason, *oom_cause)),
        _ => None,
    });
    // 1100 MiB wanted on 1024: the best-effort pod (2) dies at every start
    assert_eq!(
        kills,
        vec![
            (
                secs(1.0),
                (PodId(2), ExitReason::OOMKilled, Some(OomCause::NodePressure))
            ),
            (
                secs(11.0),
                (PodId(2), ExitReason::OOMKilled, Some(OomCause::NodePressure))
            ),
        ]
    );
}

#[test]
fn pending_pods_retry_with_backoff_and_bind_once_room_appears() {
    let timeline = TimelineBuilder::new(60.0)
        .nodes(1, 1000, GI)
        .workload("w", pod(600, 100 * MI), false)
        .create(0.0, 0, 0, 2)
        .at(
            20.0,
            Action::DeletePod {
                slot: slot(0, 0),
                recreate: false,
            },
        )
        .build();
    let mut attempts = Vec::new();
    let (records, summary) = run_with(timeline, 1, &mut |p: &PendingPod<'_>, v: &ClusterView<'_>| {
        if p.id == PodId(1) {
            attempts.push((v.now, p.attempts));
        }
        first_feasible(p, v)
    });
    let expected: Vec<(Time, u32)> = [0.0, 1.0, 3.0, 7.0, 15.0, 25.0]
        .iter()
        .enumerate()
        .map(|(i, &t)| (secs(t), i as u32))
        .collect();
    assert_eq!(attempts, expected);
    assert_eq!(bound(&records).last(), Some(&(secs(25.0), PodId(1), NodeId(0))));
    let unschedulable = select(&records, |e| match e {
        EventKind::PodUnschedulable { pod, .. } => Some(*pod),
        _ => None,
    });
    assert_eq!(unschedulable, vec![(secs(0.0), PodId(1))]);
    assert_eq!(summary.scheduling_attempts, 7);
    assert_eq!(summary.binds, 2);
}

#[test]
fn answers_are_recorded_when_they_change() {
    let timeline = TimelineBuilder::new(60.0)
        .nodes(1, 1000, GI)
        .workload("w", pod(100, 100 * MI), false)
        .create(0.0, 0, 0, 1)
        .build();
    let (records, _) = run_with(
        timeline,
        1,
        &mut |p: &PendingPod<'_>, v: &ClusterView<'_>| match p.attempts {
            0 | 1 | 4 => Placement::Decline { reason: "later".into() },
            2 | 3 => Placement::Unschedulable { reason: "no".into() },
            _ => first_feasible(p, v),
        },
    );
    let answers = select(&records, |e| match e {
        EventKind::PodDeclined { .. } => Some("declined"),
        EventKind::PodUnschedulable { .. } => Some("unschedulable"),
        EventKind::PodBound { .. } => Some("bound"),
        _ => None,
    });
    assert_eq!(
        answers,
        vec![
            (secs(0.0), "declined"),
            (secs(3.0), "unschedulable"),
            (secs(15.0), "declined"),
            (secs(25.0), "bound"),
        ]
    );
}

#[test]
fn impossible_binds_are_refused_as_unschedulable() {
    let timeline = TimelineBuilder::new(60.0)
        .nodes(2, 1000, GI)
        .nodes(1, 100, GI)
        .workload("w", pod(500, 100 * MI), false)
        .at(0.0, Action::FailNode { node: NodeId(0) })
        .create(0.0, 0, 0, 1)
        .build();
    let (records, summary) = run_with(timeline, 1, &mut |p: &PendingPod<'_>, _: &ClusterView<'_>| {
        Placement::Bind(match p.attempts {
            0 => NodeId(99), // unknown
            1 => NodeId(0),  // not ready
            2 => NodeId(2),  // too small
            _ => NodeId(1),
        })
    });
    let reasons = select(&records, |e| match e {
        EventKind::PodUnschedulable { reason, .. } => Some(reason.to_string()),
        _ => None,
    });
    assert_eq!(reasons.len(), 1);
    assert!(reasons[0].1.starts_with("bind rejected"), "{reasons:?}");
    assert_eq!(summary.rejected_binds, 3);
    assert_eq!(bound(&records), vec![(secs(7.0), PodId(0), NodeId(1))]);
}

#[test]
fn higher_priority_is_placed_first() {
    let mut important = pod(600, 100 * MI);
    important.priority = 100;
    let timeline = TimelineBuilder::new(10.0)
        .nodes(1, 1000, GI)
        .workload("low", pod(600, 100 * MI), false)
        .workload("high", important, false)
        .create(0.0, 0, 0, 1)
        .create(0.0, 1, 0, 1)
        .build();
    let records = run(timeline, 1);
    assert_eq!(bound(&records), vec![(secs(0.0), PodId(1), NodeId(0))]);
}

#[test]
fn preemption_deletes_the_victims_and_holds_the_room_for_the_preemptor() {
    let mut urgent = pod(600, 100 * MI);
    urgent.priority = 100;
    let timeline = TimelineBuilder::new(60.0)
        .nodes(1, 1000, GI)
        .workload("low", pod(600, 100 * MI), true)
        .workload("urgent", urgent, false)
        .create(0.0, 0, 0, 1)
        .create(10.0, 1, 0, 1)
        .create(30.0, 1, 1, 1)
        .build();
    let mut seen_bound = Vec::new();
    let mut seen_nominated = Vec::new();
    let (records, summary) = run_with(timeline, 1, &mut |p: &PendingPod<'_>, v: &ClusterView<'_>| {
        if let Placement::Bind(n) = first_feasible(p, v) {
            // a lower-priority pod leaves a nominated pod's room alone
            let held = v
                .nominated
                .iter()
                .any(|m| m.node == n && m.priority >= p.spec.priority && m.pod != p.id);
            if !held {
                return Placement::Bind(n);
            }
            seen_nominated.push((p.id, v.nominated.to_vec()));
            return Placement::Unschedulable {
                reason: "room held".into(),
            };
        }
        if p.spec.priority == 100 {
            seen_bound.push(v.pods_on(NodeId(0)).to_vec());
            // pod 3 names a victim of its own priority: refused
            return Placement::Preempt {
                node: NodeId(0),
                victims: v.pods_on(NodeId(0)).iter().map(|b| b.id).collect(),
                reason: "no node fits".into(),
            };
        }
        Placement::Unschedulable {
            reason: "no node fits".into(),
        }
    });
    let low = pod(600, 100 * MI);
    assert_eq!(
        seen_bound[0],
        vec![schedlab_core::BoundPod {
            id: PodId(0),
            priority: 0,
            requests: low.requests,
            started: secs(0.0),
        }]
    );
    let at_10: Vec<EventKind> = events(&records)
        .into_iter()
        .filter(|e| e.t == secs(10.0))
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        at_10[1..4],
        [
            EventKind::PodNominated {
                pod: PodId(1),
                node: NodeId(0),
                victims: 1
            },
            EventKind::PodDeleted {
                pod: PodId(0),
                node: Some(NodeId(0)),
                cause: DeleteCause::Preempted
            },
            // the victim's owner recreates it
            at_10[3].clone(),
        ]
    );
    assert!(matches!(at_10[3], EventKind::PodCreated { pod: PodId(2), .. }));
    // the recreated pod found the freed room held for the preemptor
    assert_eq!(
        seen_nominated[0],
        (
            PodId(2),
            vec![schedlab_core::Nomination {
                pod: PodId(1),
                node: NodeId(0),
                priority: 100,
                requests: low.requests,
            }]
        )
    );
    // the preemptor binds after its back-off, and then holds no room
    assert_eq!(bound(&records)[1], (secs(11.0), PodId(1), NodeId(0)));
    assert_eq!(seen_nominated.len(), 1, "{seen_nominated:?}");
    // pod 3 asked to delete pod 1, of its own priority: nothing was deleted
    assert_eq!(summary.preempted, 1);
    assert!(summary.rejected_preemptions >= 1);
    assert!(
        !events(&records)
            .iter()
            .any(|e| matches!(e.kind, EventKind::PodDeleted { pod: PodId(1), .. }))
    );
}

#[test]
fn failed_pods_are_replaced_by_their_owner() {
    let mut once = pod(100, 100 * MI);
    once.restart_policy = RestartPolicy::Never;
    let timeline = TimelineBuilder::new(60.0)
        .nodes(1, 1000, GI)
        .workload("once", once, true)
        .create(0.0, 0, 0, 1)
        .at(10.0, Action::KillPod { slot: slot(0, 0) })
        .build();
    let records = run(timeline, 1);
    assert_eq!(exits(&records, PodId(0)), vec![(secs(10.0), ExitReason::Error, None)]);
    assert!(events(&records).iter().any(|e| e.t == secs(10.0)
        && e.kind
            == EventKind::PodFailed {
                pod: PodId(0),
                node: NodeId(0)
            }));
    assert_eq!(created(&records)[1], (secs(10.0), PodId(1), slot(0, 0)));
    assert_eq!(starts(&records, PodId(1)), vec![(secs(11.0), 0)]);
}

#[test]
fn samples_at_every_interval_and_the_end_record() {
    let timeline = TimelineBuilder::new(60.0)
        .sample_every(15)
        .node(node("cheap", 1000, GI, 1.0))
        .node(node("mid", 1000, GI, 2.0))
        .node(node("dear", 1000, GI, 4.0))
        .workload("w", pod(600, 100 * MI), false)
        .create(0.0, 0, 0, 1)
        .create(10.0, 0, 1, 1)
        .at(20.0, Action::FailNode { node: NodeId(2) })
        .build();
    let records = run(timeline, 1);
    assert!(records[..3].iter().all(|r| matches!(r, Record::Node { .. })));
    assert!(matches!(records.last(), Some(Record::End { t }) if *t == secs(60.0)));
    let clusters: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            Record::ClusterSample(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    let times: Vec<Time> = clusters.iter().map(|s| s.t).collect();
    assert_eq!(times, [0.0, 15.0, 30.0, 45.0, 60.0].map(secs));
    let node_samples = records.iter().filter(|r| matches!(r, Record::NodeSample(_))).count();
    assert_eq!(node_samples, 15);
    // t=0: bound, not started yet
    assert_eq!(clusters[0].bound, 1);
    assert_eq!(clusters[0].used, Resources::ZERO);
    assert_eq!(clusters[0].requested, Resources::new(600, 100 * MI));
    assert_eq!(clusters[0].hourly_cost, 1.0);
    assert_eq!(clusters[0].nodes_in_use, 1);
    // t=15: the second pod went to the second node
    assert_eq!(clusters[1].used, Resources::new(1200, 200 * MI));
    assert_eq!(clusters[1].hourly_cost, 3.0);
    assert_eq!(clusters[1].nodes_ready, 3);
    assert_eq!(clusters[1].allocatable, Resources::new(3000, 3 * GI));
    // t=30: the third node is down
    assert_eq!(clusters[2].nodes_ready, 2);
    assert_eq!(clusters[2].allocatable, Resources::new(2000, 2 * GI));
    assert_eq!(clusters[2].pending, 0);
}

#[test]
fn bad_timelines_are_refused() {
    let base = || {
        TimelineBuilder::new(10.0)
            .nodes(1, 1000, GI)
            .workload("w", pod(100, MI), false)
    };
    let unknown_node = base().at(1.0, Action::FailNode { node: NodeId(3) }).build();
    assert!(matches!(
        Sim::new(unknown_node, 1, ModelConfig::default()),
        Err(Error::Sim(SimError::UnknownNode { node: NodeId(3), .. }))
    ));
    let unknown_workload = base().create(1.0, 7, 0, 1).build();
    let err = Sim::new(unknown_workload, 1, ModelConfig::default()).unwrap_err();
    assert!(matches!(
        err,
        Error::Sim(SimError::UnknownWorkload {
            workload: WorkloadId(7),
            ..
        })
    ));
    assert!(err.to_string().contains("actions[0]"), "{err}");
    let mut no_samples = base().build();
    no_samples.sample_interval = schedlab_core::Span::ZERO;
    assert!(matches!(
        Sim::new(no_samples, 1, ModelConfig::default()),
        Err(Error::Sim(SimError::ZeroSampleInterval))
    ));
    let mut bad_dist = base().build();
    bad_dist.workloads[0].spec.behaviour.cpu_usage = schedlab_core::Dist::Exponential { mean: 0.0 };
    assert!(matches!(
        Sim::new(bad_dist, 1, ModelConfig::default()),
        Err(Error::Sim(SimError::InvalidDistribution { field: "cpu_usage", .. }))
    ));
    let bad_model = ModelConfig {
        degraded_crash_factor: f64::NAN,
        ..Default::default()
    };
    assert!(matches!(
        Sim::new(base().build(), 1, bad_model),
        Err(Error::Sim(SimError::Model(_)))
    ));
}

#[test]
fn nodes_track_kube_schedulers_non_zero_requests() {
    // a best-effort pod (no requests) and a cpu-only pod on one node; one is deleted later
    let timeline = TimelineBuilder::new(60.0)
        .nodes(1, 4000, 8 << 30)
        .workload("be", pod(0, 0), false)
        .workload("cpu", pod(500, 0), false)
        .create(0.0, 0, 0, 1)
        .create(0.0, 1, 0, 1)
        .at(
            30.0,
            Action::DeletePod {
                slot: slot(0, 0),
                recreate: false,
            },
        )
        .build();
    let mut sim = Sim::new(timeline, 1, ModelConfig::default()).unwrap();
    let mut records = Vec::new();
    sim.run_until(secs(10.0), &mut first_feasible, &mut records);
    let n = &sim.nodes()[0];
    assert_eq!(n.requested, Resources::new(500, 0));
    assert_eq!(n.non_zero_requested, Resources::new(100 + 500, 2 * (200 << 20)));
    sim.run_until(secs(40.0), &mut first_feasible, &mut records);
    let n = &sim.nodes()[0];
    assert_eq!(n.non_zero_requested, Resources::new(500, 200 << 20));
}

#[test]
fn a_lost_node_evicts_its_pods_at_once_and_comes_back_fresh_when_replaced() {
    let timeline = TimelineBuilder::new(1000.0)
        .nodes(2, 1000, GI)
        .workload("svc", pod(500, 256 * MI), true)
        .create(0.0, 0, 0, 2)
        .at(100.0, Action::LoseNode { node: NodeId(0) })
        .at(400.0, Action::ReplaceNode { node: NodeId(0) })
        .build();
    let records = run(timeline, 1);
    // both pods went to node 0 (first feasible); its loss evicts both at once,
    // their owner recreates them, and the survivor node takes them
    let evicted = select(&records, |e| match e {
        EventKind::PodEvicted { pod, node } => Some((*pod, *node)),
        _ => None,
    });
    assert_eq!(
        evicted,
        vec![
            (secs(100.0), (PodId(0), NodeId(0))),
            (secs(100.0), (PodId(1), NodeId(0)))
        ]
    );
    assert_eq!(
        bound(&records)[2..],
        [(secs(100.0), PodId(2), NodeId(1)), (secs(100.0), PodId(3), NodeId(1))]
    );
    let node_events = select(&records, |e| match e {
        EventKind::NodeLost { node } => Some(("lost", *node)),
        EventKind::NodeReplaced { node } => Some(("replaced", *node)),
        EventKind::NodeFailed { .. } | EventKind::NodeRecovered { .. } => Some(("other", NodeId(99))),
        _ => None,
    });
    assert_eq!(
        node_events,
        vec![
            (secs(100.0), ("lost", NodeId(0))),
            (secs(400.0), ("replaced", NodeId(0)))
        ]
    );
    let node0 = |t: f64| node_sample(&records, secs(t), NodeId(0));
    assert_eq!(
        (node0(105.0).condition, node0(105.0).pods),
        (NodeCondition::NotReady, 0)
    );
    assert_eq!((node0(405.0).condition, node0(405.0).pods), (NodeCondition::Ready, 0));
}

#[test]
fn a_lost_node_ignores_other_faults_until_replaced() {
    let timeline = TimelineBuilder::new(600.0)
        .nodes(1, 1000, GI)
        .at(10.0, Action::LoseNode { node: NodeId(0) })
        .at(20.0, Action::RecoverNode { node: NodeId(0) })
        .at(30.0, Action::DegradeNode { node: NodeId(0) })
        .at(40.0, Action::LoseNode { node: NodeId(0) })
        .build();
    let records = run(timeline, 1);
    let node_events: Vec<_> = events(&records).into_iter().map(|e| e.kind).collect();
    assert_eq!(node_events, vec![EventKind::NodeLost { node: NodeId(0) }]);
}

#[test]
fn a_leak_without_a_limit_ends_in_the_nodes_oom_killer() {
    let mut leaky = pod(100, 200 * MI);
    // 200 MiB growing 100 MiB a minute on a 1 GiB node: past capacity after about 8.2 min
    leaky.behaviour.memory_growth_per_hour = Some(schedlab_core::Dist::Const {
        value: (6000 * MI) as f64,
    });
    let timeline = TimelineBuilder::new(900.0)
        .nodes(1, 1000, GI)
        .workload("leak", leaky, true)
        .create(0.0, 0, 0, 1)
        .build();
    let records = run(timeline, 1);
    let p0 = PodId(0);
    let exits = exits(&records, p0);
    assert_eq!(exits.len(), 1, "{exits:?}");
    let (t, reason, cause) = exits[0];
    assert_eq!((reason, cause), (ExitReason::OOMKilled, Some(OomCause::NodePressure)));
    // started at 1 s; 824 MiB of growth at 100 MiB/min takes 494.4 s; the
    // kill comes at the first 10 s growth step past it
    assert_eq!(t, secs(501.0));
}

#[test]
fn a_node_tracks_its_unlimited_pods_their_growth_and_its_memory_trend() {
    let mut leaky = pod(100, 200 * MI);
    leaky.behaviour.memory_growth_per_hour = Some(schedlab_core::Dist::Const {
        value: (6000 * MI) as f64,
    });
    let mut limited = pod(100, 100 * MI);
    limited.limits = Some(Resources::new(100, 100 * MI));
    let timeline = TimelineBuilder::new(900.0)
        .nodes(1, 1000, GI)
        .workload("leak", leaky, true)
        .workload("limited", limited, false)
        .create(0.0, 0, 0, 1)
        .create(0.0, 1, 0, 1)
        .build();
    let mut sim = Sim::new(timeline, 1, ModelConfig::default()).unwrap();
    let mut records = Vec::new();
    sim.run_until(secs(241.0), &mut first_feasible, &mut records);
    let n = &sim.nodes()[0];
    assert_eq!((n.pod_count, n.unlimited.pods), (2, 1));
    // four minutes of 100 MiB a minute past a 200 MiB request (usage starts near it)
    assert!(
        n.unlimited.excess_bytes > 300 * MI && n.unlimited.excess_bytes < 500 * MI,
        "{:?}",
        n.unlimited
    );
    assert!(n.memory_trend_bytes() > 0.0, "{:?}", n.memory_trend);
    // the node's OOM killer takes the leak (at 501 s); its count goes with it
    sim.run_until(secs(502.0), &mut first_feasible, &mut records);
    let n = &sim.nodes()[0];
    assert!(n.unlimited.excess_bytes < 100 * MI, "{:?}", n.unlimited);
}

#[test]
fn charged_decision_time_delays_binds_and_is_measured_either_way() {
    let build = || {
        TimelineBuilder::new(60.0)
            .nodes(1, 10_000, 10 * GI)
            .workload("svc", pod(100, 10 * MI), true)
            .create(0.0, 0, 0, 3)
            .build()
    };
    let mut slow = |pod: &PendingPod<'_>, view: &ClusterView<'_>| {
        std::thread::sleep(std::time::Duration::from_millis(30));
        first_feasible(pod, view)
    };
    let sim = Sim::new(build(), 1, ModelConfig::default()).unwrap();
    let mut free = Vec::new();
    let mut sim_free = sim;
    sim_free.run_until(secs(60.0), &mut slow, &mut free);
    assert_eq!(sim_free.decision_times().len(), 3);
    // within the histogram's 3 significant digits
    assert!(sim_free.decision_times().min() >= 29_900_000);
    assert!(bound(&free).iter().all(|&(t, _, _)| t == Time::ZERO));

    let mut sim = Sim::new(build(), 1, ModelConfig::default()).unwrap();
    sim.charge_decision_time(true);
    let mut charged = Vec::new();
    sim.run_until(secs(60.0), &mut slow, &mut charged);
    let times: Vec<u64> = bound(&charged).iter().map(|&(t, _, _)| t.as_millis()).collect();
    // one serial scheduler: each bind at least 30 ms after the one before
    assert_eq!(times.len(), 3);
    assert!(
        times[0] >= 30 && times[1] >= times[0] + 30 && times[2] >= times[1] + 30,
        "{times:?}"
    );
}

#[test]
fn a_slot_with_its_own_spec_asks_for_its_own_requests() {
    // base spec: two pods of 500m fit one 1000m node; the slots' own specs
    // ask for 400m and 700m, which do not both fit
    let mut timeline = TimelineBuilder::new(100.0)
        .nodes(1, 1000, GI)
        .workload("sized", pod(500, 64 * MI), true)
        .create(0.0, 0, 0, 2)
        .build();
    timeline.workloads[0].slot_specs = vec![pod(400, 64 * MI), pod(700, 128 * MI)];
    let records = run(timeline, 1);
    let requests = select(&records, |e| match e {
        EventKind::PodCreated { slot, requests, .. } => Some((slot.ordinal, *requests)),
        _ => None,
    });
    assert_eq!(
        requests.into_iter().map(|(_, r)| r).collect::<Vec<_>>(),
        vec![(0, Resources::new(400, 64 * MI)), (1, Resources::new(700, 128 * MI))]
    );
    assert_eq!(bound(&records).len(), 1, "400m + 700m do not fit on 1000m");
    let n = node_sample(&records, secs(45.0), NodeId(0));
    assert_eq!(n.requested, Resources::new(400, 64 * MI));
}
