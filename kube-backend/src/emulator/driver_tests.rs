use super::*;
use crate::objects::{self, PodIdentity};
use schedlab_core::dist::Dist;
use schedlab_core::node::NodeSpec;
use schedlab_core::pod::{PodSlot, RestartPolicy, Toleration, TolerationOperator, WorkloadId};
use schedlab_core::record::{ExitReason, OomCause, Record};
use schedlab_core::sim::Sim;
use schedlab_core::testing::{self, NodeSpecChanges, PodSpecChanges};
use schedlab_core::time::Span;
use schedlab_core::timeline::{Action, TimedAction, Timeline, Workload};
use schedlab_core::view::{ClusterView, PendingPod, Placement};
use std::collections::BTreeMap;

const MI: u64 = 1 << 20;
const GI: u64 = 1 << 30;
const RUN: &str = "r";
const NS: &str = "r";
const SEED: u64 = 7;

fn node_spec(name: &str, memory: u64) -> NodeSpec {
    NodeSpec::plain(name, Resources::new(8000, memory), 1.0).allocatable(Resources::new(8000, memory - memory / 8))
}

fn spec(request_mi: u64, limit_mi: Option<u64>, usage: Dist, crash_per_hour: f64) -> PodSpec {
    let spec = testing::pod(100, request_mi * MI)
        .usage(Dist::Const { value: 50.0 }, usage)
        .crash_rate(crash_per_hour);
    match limit_mi {
        Some(l) => spec.limits(Resources::new(0, l * MI)),
        None => spec,
    }
}

fn workload(id: u32, name: &str, spec: PodSpec, recreate: bool) -> Workload {
    Workload {
        id: WorkloadId(id),
        name: name.into(),
        spec,
        recreate,
        slot_specs: Vec::new(),
    }
}

fn slot(w: u32, ordinal: u32) -> PodSlot {
    PodSlot {
        workload: WorkloadId(w),
        ordinal,
    }
}

fn node_object(id: u32, spec: &NodeSpec) -> core::Node {
    objects::node_object(RUN, NodeId(id), spec, true)
}

/// The pod object of `ident` of `w`, bound to `node`, with uid `uid`.
fn pod_object(w: &Workload, ident: PodIdentity, node: Option<&str>) -> core::Pod {
    let mut pod = objects::pod_object(RUN, NS, &ident, w, SEED);
    pod.metadata.uid = Some(format!("uid-{}", ident.pod.0));
    if let Some(spec) = pod.spec.as_mut() {
        spec.node_name = node.map(str::to_string);
    }
    pod
}

fn ident(pod: u64, slot: PodSlot, incarnation: u32) -> PodIdentity {
    PodIdentity {
        pod: PodId(pod),
        slot,
        incarnation,
    }
}

fn deleting(mut pod: core::Pod) -> core::Pod {
    pod.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        jiff::Timestamp::now(),
    ));
    pod
}

fn key(pod: &core::Pod) -> PodKey {
    PodKey::of(pod)
}

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

fn drained(d: &mut Driver) -> Vec<Output> {
    let mut out = Vec::new();
    d.drain(&mut out);
    out
}

fn statuses(out: &[Output]) -> Vec<&PodView> {
    out.iter()
        .filter_map(|o| match o {
            Output::PodStatus(v) => Some(v),
            _ => None,
        })
        .collect()
}

// ---- the simulator and the driver agree ------------------------------------

/// A timeline with everything the driver has to get right: crashes, limit
/// and node-pressure OOM kills, memory pressure, completions, kills, a node
/// failure with evictions and recreation, a degraded node, deletions.
fn busy_timeline() -> Timeline {
    let nodes = vec![node_spec("a", 4 * GI), node_spec("b", 4 * GI), node_spec("c", 3 * GI)];
    let crashy = spec(
        256,
        None,
        Dist::Uniform {
            min: 100.0 * MI as f64,
            max: 700.0 * MI as f64,
        },
        20.0,
    );
    let hog = spec(
        512,
        Some(1024),
        Dist::Uniform {
            min: 600.0 * MI as f64,
            max: 1400.0 * MI as f64,
        },
        2.0,
    );
    let mut batch = spec(
        128,
        None,
        Dist::Const {
            value: 200.0 * MI as f64,
        },
        6.0,
    );
    batch.restart_policy = RestartPolicy::OnFailure;
    batch.behaviour.run_seconds = Some(Dist::Uniform { min: 60.0, max: 600.0 });
    let mut best_effort = spec(
        0,
        None,
        Dist::Uniform {
            min: 0.0,
            max: 900.0 * MI as f64,
        },
        1.0,
    );
    best_effort.requests = Resources::ZERO;
    best_effort.restart_policy = RestartPolicy::Never;
    let mut patient = spec(
        64,
        None,
        Dist::Const {
            value: 64.0 * MI as f64,
        },
        0.0,
    );
    patient.tolerations = vec![Toleration {
        key: schedlab_core::behaviour::eviction::UNREACHABLE_TAINT_KEY.into(),
        operator: TolerationOperator::Exists,
        value: None,
        effect: Some(schedlab_core::node::TaintEffect::NoExecute),
        toleration_seconds: Some(40),
    }];
    let workloads = vec![
        workload(0, "crashy", crashy, true),
        workload(1, "hog", hog, true),
        workload(2, "batch", batch, false),
        workload(3, "besteffort", best_effort, true),
        workload(4, "patient", patient, true),
    ];
    let mut actions = Vec::new();
    let mut at = |t: f64, action: Action| {
        actions.push(TimedAction { at: secs(t), action });
    };
    let counts = [9u32, 6, 6, 4, 3];
    for (w, &n) in counts.iter().enumerate() {
        for o in 0..n {
            at(
                0.25 + w as f64 * 3.0 + o as f64 * 0.5,
                Action::CreatePod {
                    slot: slot(w as u32, o),
                },
            );
        }
    }
    at(200.3, Action::KillPod { slot: slot(0, 1) });
    at(210.7, Action::KillPod { slot: slot(1, 2) });
    at(300.1, Action::DegradeNode { node: NodeId(2) });
    at(600.2, Action::FailNode { node: NodeId(1) });
    at(
        700.9,
        Action::DeletePod {
            slot: slot(0, 3),
            recreate: true,
        },
    );
    at(
        710.4,
        Action::DeletePod {
            slot: slot(3, 0),
            recreate: false,
        },
    );
    at(1000.6, Action::RecoverNode { node: NodeId(1) });
    at(1200.8, Action::RecoverNode { node: NodeId(2) });
    actions.sort_by_key(|a| a.at);
    Timeline {
        nodes,
        workloads,
        actions,
        end: secs(1800.0),
        sample_interval: Span::from_secs(60),
    }
}

/// Binds every pod to the next ready node in turn, ignoring requests: the
/// test is about what happens after the bind.
fn round_robin() -> impl FnMut(&PendingPod<'_>, &ClusterView<'_>) -> Placement {
    let mut next = 0usize;
    move |_pod, view| {
        let n = view.nodes.len();
        for k in 0..n {
            let i = (next + k) % n;
            if view.nodes[i].condition.is_ready() {
                next = i + 1;
                return Placement::Bind(NodeId(i as u32));
            }
        }
        Placement::Unschedulable {
            reason: "no ready node".into(),
        }
    }
}

/// The lifecycle's events per pod, PodDeleted's cause left out (the player
/// knows it, the emulator does not).
fn per_pod(events: impl IntoIterator<Item = (Time, EventKind)>) -> BTreeMap<PodId, Vec<(Time, EventKind)>> {
    let mut map: BTreeMap<PodId, Vec<(Time, EventKind)>> = BTreeMap::new();
    for (t, e) in events {
        let (pod, e) = match e {
            EventKind::ContainerStarted { pod, .. }
            | EventKind::ContainerExited { pod, .. }
            | EventKind::PodSucceeded { pod, .. }
            | EventKind::PodFailed { pod, .. }
            | EventKind::PodEvicted { pod, .. } => (pod, e),
            EventKind::PodDeleted {
                pod, node: Some(node), ..
            } => (
                pod,
                EventKind::PodDeleted {
                    pod,
                    node: Some(node),
                    cause: DeleteCause::Scenario,
                },
            ),
            _ => continue,
        };
        map.entry(pod).or_default().push((t, e));
    }
    map
}

/// What happens at one instant of a replay: the timeline's actions, then binds.
type Inputs = (Vec<Action>, Vec<(PodId, NodeId)>);

/// Replays what the simulator did to its pods from the outside, as the
/// emulator sees it through the API: binds (from the records), faults and
/// deletions (from the timeline), at the same scenario times.
fn replay(timeline: &Timeline, records: &[Record]) -> Vec<(Time, EventKind)> {
    let mut d = Driver::new(ModelConfig::default());
    d.keep_log();
    let names: Vec<String> = timeline.nodes.iter().map(|s| objects::node_name(RUN, s)).collect();
    for (i, s) in timeline.nodes.iter().enumerate() {
        d.node_seen(&node_object(i as u32, s), Time::ZERO);
    }
    // pod objects by id, current pod per slot, binds per time
    let mut created: BTreeMap<PodId, PodIdentity> = BTreeMap::new();
    let mut incarnations: BTreeMap<PodSlot, u32> = BTreeMap::new();
    let mut inputs: BTreeMap<Time, Inputs> = BTreeMap::new();
    for r in records {
        let Record::Event(ev) = r else { continue };
        match ev.kind {
            EventKind::PodCreated { pod, slot, .. } => {
                let inc = incarnations.entry(slot).or_default();
                created.insert(pod, ident(pod.0, slot, *inc));
                *inc += 1;
            }
            EventKind::PodBound { pod, node } => inputs.entry(ev.t).or_default().1.push((pod, node)),
            _ => {}
        }
    }
    for a in &timeline.actions {
        if !matches!(a.action, Action::CreatePod { .. }) {
            inputs.entry(a.at).or_default().0.push(a.action.clone());
        }
    }
    let mut bound: BTreeMap<PodSlot, core::Pod> = BTreeMap::new();
    for (t, (actions, binds)) in inputs {
        if t > Time::ZERO {
            d.advance(Time(t.0 - 1));
        }
        for action in actions {
            match action {
                Action::KillPod { slot } => {
                    if let Some(p) = bound.get(&slot) {
                        d.kill(&key(p), t);
                    }
                }
                Action::DeletePod { slot, .. } => {
                    if let Some(p) = bound.remove(&slot) {
                        d.pod_seen(&deleting(p), t).unwrap();
                    }
                }
                Action::FailNode { node } => {
                    d.set_condition(&names[node.index()], NodeCondition::NotReady, t);
                }
                Action::RecoverNode { node } => {
                    d.set_condition(&names[node.index()], NodeCondition::Ready, t);
                }
                Action::DegradeNode { node } => {
                    d.set_condition(&names[node.index()], NodeCondition::Degraded, t);
                }
                Action::LoseNode { node } => {
                    d.set_condition(&names[node.index()], NodeCondition::NotReady, t);
                    d.evict_all(&names[node.index()], t);
                }
                Action::ReplaceNode { node } => {
                    d.set_condition(&names[node.index()], NodeCondition::Ready, t);
                }
                Action::CreatePod { .. } => {}
            }
        }
        d.advance(t);
        for (pod, node) in binds {
            let id = created[&pod];
            let w = &timeline.workloads[id.slot.workload.0 as usize];
            let obj = pod_object(w, id, Some(&names[node.index()]));
            d.pod_seen(&obj, t).unwrap();
            bound.insert(id.slot, obj);
        }
        d.advance(t);
    }
    d.advance(timeline.end);
    d.take_log()
}

#[test]
fn the_driver_plays_pods_exactly_as_the_simulator() {
    let timeline = busy_timeline();
    let mut records: Vec<Record> = Vec::new();
    let sim = Sim::new(timeline.clone(), SEED, ModelConfig::default()).unwrap();
    let mut placer = round_robin();
    sim.finish(&mut placer, &mut records);
    let from_sim = per_pod(records.iter().filter_map(|r| match r {
        Record::Event(e) => Some((e.t, e.kind.clone())),
        _ => None,
    }));
    let from_driver = per_pod(replay(&timeline, &records));
    // the run exercised what it is meant to
    let all: Vec<&EventKind> = from_sim.values().flatten().map(|(_, e)| e).collect();
    let count = |f: &dyn Fn(&EventKind) -> bool| all.iter().filter(|e| f(e)).count();
    assert!(
        count(&|e| matches!(
            e,
            EventKind::ContainerExited {
                reason: ExitReason::Error,
                ..
            }
        )) > 5
    );
    assert!(
        count(&|e| matches!(
            e,
            EventKind::ContainerExited {
                oom_cause: Some(OomCause::Limit),
                ..
            }
        )) > 0
    );
    assert!(
        count(&|e| matches!(
            e,
            EventKind::ContainerExited {
                oom_cause: Some(OomCause::NodePressure),
                ..
            }
        )) > 0
    );
    assert!(count(&|e| matches!(e, EventKind::PodEvicted { .. })) > 0);
    assert!(count(&|e| matches!(e, EventKind::PodSucceeded { .. })) > 0);
    assert!(count(&|e| matches!(e, EventKind::PodDeleted { .. })) > 0);
    assert_eq!(
        from_sim.keys().collect::<Vec<_>>(),
        from_driver.keys().collect::<Vec<_>>()
    );
    for (pod, events) in &from_sim {
        assert_eq!(Some(events), from_driver.get(pod), "pod {pod:?}");
    }
}

// ---- what the I/O layer is told ---------------------------------------------

fn one_node(memory: u64) -> (Driver, String) {
    let mut d = Driver::new(ModelConfig::default());
    let spec = node_spec("n", memory);
    d.node_seen(&node_object(0, &spec), Time::ZERO);
    (d, objects::node_name(RUN, &spec))
}

fn steady(memory_mi: u64) -> Workload {
    workload(
        0,
        "steady",
        spec(
            memory_mi,
            None,
            Dist::Const {
                value: (memory_mi * MI) as f64,
            },
            0.0,
        ),
        true,
    )
}

#[test]
fn a_bound_pod_is_reported_creating_then_running_with_one_status_per_drain() {
    let (mut d, node) = one_node(4 * GI);
    let w = steady(256);
    let pod = pod_object(&w, ident(0, slot(0, 0), 0), Some(&node));
    d.pod_seen(&pod, secs(10.0)).unwrap();
    assert_eq!(d.pods(), 1);
    let out = drained(&mut d);
    let s = statuses(&out);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].phase, PodPhase::Starting);
    assert_eq!(s[0].containers.bound_at, secs(10.0));
    assert_eq!(d.next_timer(), Some(secs(11.0)));
    // an echo of the pod changes nothing
    d.pod_seen(&pod, secs(10.5)).unwrap();
    assert!(drained(&mut d).is_empty());
    d.advance(secs(11.0));
    let out = drained(&mut d);
    let s = statuses(&out);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].phase, PodPhase::Running);
    assert!(s[0].containers.ready);
    assert_eq!(s[0].containers.usage.memory_bytes, 256 * MI);
    assert_eq!(d.node_used(&node).unwrap().memory_bytes, 256 * MI);
}

#[test]
fn pods_seen_before_their_node_start_when_it_is_adopted() {
    let mut d = Driver::new(ModelConfig::default());
    let spec = node_spec("late", 4 * GI);
    let name = objects::node_name(RUN, &spec);
    let w = steady(128);
    d.pod_seen(&pod_object(&w, ident(0, slot(0, 0), 0), Some(&name)), secs(1.0))
        .unwrap();
    assert_eq!(d.pods(), 0);
    assert!(drained(&mut d).is_empty());
    d.node_seen(&node_object(0, &spec), secs(2.0));
    assert_eq!(d.pods(), 1);
    d.advance(secs(3.0));
    assert_eq!(d.node_used(&name).unwrap().memory_bytes, 128 * MI);
}

#[test]
fn deletions_are_finalised_once_and_release_the_node() {
    let (mut d, node) = one_node(4 * GI);
    let w = steady(512);
    let pod = pod_object(&w, ident(3, slot(0, 0), 0), Some(&node));
    d.pod_seen(&pod, secs(0.0)).unwrap();
    d.advance(secs(5.0));
    drained(&mut d);
    assert_eq!(d.node_used(&node).unwrap().memory_bytes, 512 * MI);
    let gone = deleting(pod);
    d.pod_seen(&gone, secs(6.0)).unwrap();
    d.pod_seen(&gone, secs(6.1)).unwrap();
    let out = drained(&mut d);
    assert_eq!(
        out,
        vec![Output::Delete {
            key: key(&gone),
            uid: "uid-3".into()
        }]
    );
    assert_eq!(d.node_used(&node).unwrap(), Resources::ZERO);
    assert_eq!(d.pods(), 0);
    d.pod_gone(&key(&gone), secs(6.2));
    assert!(d.pod_view(&key(&gone)).is_none());
}

#[test]
fn pods_of_other_nodes_and_pods_already_over_are_left_alone() {
    let (mut d, node) = one_node(4 * GI);
    let w = steady(64);
    // deleted while bound to a node nobody here plays: not ours to finalise
    let elsewhere = deleting(pod_object(&w, ident(1, slot(0, 1), 0), Some("real-node")));
    d.pod_seen(&elsewhere, secs(1.0)).unwrap();
    // ended before this emulator started
    let mut over = pod_object(&w, ident(2, slot(0, 2), 0), Some(&node));
    over.status = Some(core::PodStatus {
        phase: Some("Succeeded".into()),
        ..Default::default()
    });
    d.pod_seen(&over, secs(1.0)).unwrap();
    // pending: nothing to play yet
    d.pod_seen(&pod_object(&w, ident(4, slot(0, 4), 0), None), secs(1.0))
        .unwrap();
    assert!(drained(&mut d).is_empty());
    assert_eq!(d.pods(), 0);
    // an ended pod being deleted is finalised
    d.pod_seen(&deleting(over.clone()), secs(2.0)).unwrap();
    assert_eq!(
        drained(&mut d),
        vec![Output::Delete {
            key: key(&over),
            uid: "uid-2".into()
        }]
    );
    // a pod without the run's labels is refused, not played
    let mut foreign = pod_object(&w, ident(5, slot(0, 5), 0), Some(&node));
    foreign.metadata.labels = None;
    assert!(matches!(d.pod_seen(&foreign, secs(3.0)), Err(Skipped::NotARunPod(_))));
}

#[test]
fn the_oom_killer_takes_the_best_effort_pod_on_a_full_node() {
    let (mut d, node) = one_node(GI);
    let guaranteed = {
        let mut s = spec(
            600,
            Some(600),
            Dist::Const {
                value: (600 * MI) as f64,
            },
            0.0,
        );
        s.limits = Some(Resources::new(100, 600 * MI));
        workload(0, "g", s, true)
    };
    let mut be = spec(
        0,
        None,
        Dist::Const {
            value: (500 * MI) as f64,
        },
        0.0,
    );
    be.requests = Resources::ZERO;
    let be = workload(1, "be", be, true);
    let g_pod = pod_object(&guaranteed, ident(0, slot(0, 0), 0), Some(&node));
    let be_pod = pod_object(&be, ident(1, slot(1, 0), 0), Some(&node));
    d.pod_seen(&g_pod, secs(0.0)).unwrap();
    d.pod_seen(&be_pod, secs(0.0)).unwrap();
    d.advance(secs(1.0));
    let out = drained(&mut d);
    let be_view = statuses(&out).into_iter().find(|v| v.key == key(&be_pod)).unwrap();
    let exit = be_view.containers.last_exit.unwrap();
    assert_eq!(
        (exit.reason, exit.oom_cause),
        (ExitReason::OOMKilled, Some(OomCause::NodePressure))
    );
    assert_eq!(be_view.phase, PodPhase::BackOff);
    let g_view = d.pod_view(&key(&g_pod)).unwrap();
    assert_eq!(g_view.phase, PodPhase::Running);
    assert_eq!(d.node_used(&node).unwrap().memory_bytes, 600 * MI);
}

#[test]
fn memory_pressure_follows_the_nodes_use() {
    let (mut d, node) = one_node(GI);
    // allocatable is 7/8 GiB; pressure above 90 % of it
    let w = steady(820);
    let pod = pod_object(&w, ident(0, slot(0, 0), 0), Some(&node));
    d.pod_seen(&pod, secs(0.0)).unwrap();
    assert_eq!(d.node_pressure(&node), Some(false));
    d.advance(secs(1.0));
    assert_eq!(d.node_pressure(&node), Some(true));
    d.pod_gone(&key(&pod), secs(2.0));
    assert_eq!(d.node_pressure(&node), Some(false));
    assert_eq!(d.node_used(&node), Some(Resources::ZERO));
}

#[test]
fn a_failed_node_stops_its_pods_and_evicts_them_after_their_toleration() {
    let (mut d, node) = one_node(4 * GI);
    let w = steady(100);
    let pod = pod_object(&w, ident(0, slot(0, 0), 0), Some(&node));
    d.pod_seen(&pod, secs(0.0)).unwrap();
    d.advance(secs(2.0));
    drained(&mut d);
    assert!(d.set_condition(&node, NodeCondition::NotReady, secs(10.0)));
    let out = drained(&mut d);
    assert!(out.contains(&Output::NodeCondition {
        name: node.clone(),
        condition: NodeCondition::NotReady
    }));
    let v = statuses(&out)[0].clone();
    assert_eq!(v.phase, PodPhase::NodeDown);
    assert!(!v.containers.ready);
    assert_eq!(d.node_used(&node), Some(Resources::ZERO));
    // the admission default: 300 s
    assert_eq!(d.next_timer(), Some(secs(310.0)));
    d.advance(secs(309.0));
    assert!(drained(&mut d).is_empty());
    d.advance(secs(310.0));
    let out = drained(&mut d);
    assert_eq!(out.len(), 1);
    match &out[0] {
        Output::Evict(v) => {
            assert_eq!(v.uid, "uid-0");
            assert_eq!(v.phase, PodPhase::Ended(PodEnd::Evicted));
        }
        other => panic!("expected an eviction, got {other:?}"),
    }
    // its deletion echo is not finalised again
    d.pod_seen(&deleting(pod.clone()), secs(311.0)).unwrap();
    assert!(drained(&mut d).is_empty());
    // unknown nodes are refused; degrading a failed node is ignored as in sim
    assert!(!d.set_condition("nope", NodeCondition::NotReady, secs(312.0)));
    d.set_condition(&node, NodeCondition::Degraded, secs(312.0));
    assert_eq!(d.node_condition(&node), Some(NodeCondition::NotReady));
}

#[test]
fn a_recovered_node_starts_the_stopped_container_again() {
    let (mut d, node) = one_node(4 * GI);
    let w = steady(100);
    let pod = pod_object(&w, ident(0, slot(0, 0), 0), Some(&node));
    d.pod_seen(&pod, secs(0.0)).unwrap();
    d.advance(secs(2.0));
    d.set_condition(&node, NodeCondition::NotReady, secs(10.0));
    d.set_condition(&node, NodeCondition::Ready, secs(20.0));
    let v = d.pod_view(&key(&pod)).unwrap();
    assert_eq!(v.phase, PodPhase::Running);
    assert_eq!(v.containers.restart_count(), 1);
    // no exit for the container the node failure stopped
    assert_eq!(v.containers.last_exit, None);
    assert_eq!(d.node_used(&node).unwrap().memory_bytes, 100 * MI);
}

#[test]
fn kills_crash_the_running_container() {
    let (mut d, node) = one_node(4 * GI);
    let w = steady(100);
    let pod = pod_object(&w, ident(0, slot(0, 0), 0), Some(&node));
    assert!(!d.kill(&key(&pod), secs(0.0)));
    d.pod_seen(&pod, secs(0.0)).unwrap();
    d.advance(secs(2.0));
    assert!(d.kill(&key(&pod), secs(3.0)));
    let v = d.pod_view(&key(&pod)).unwrap();
    assert_eq!(v.phase, PodPhase::BackOff);
    assert_eq!(v.containers.last_exit.map(|e| e.reason), Some(ExitReason::Error));
    // CrashLoopBackOff: 10 s, then a new container
    d.advance(secs(13.0));
    let v = d.pod_view(&key(&pod)).unwrap();
    assert_eq!((v.phase, v.containers.restart_count()), (PodPhase::Running, 1));
}

#[test]
fn a_relisted_node_that_vanished_takes_its_pods_along() {
    let (mut d, node) = one_node(4 * GI);
    let w = steady(100);
    d.pod_seen(&pod_object(&w, ident(0, slot(0, 0), 0), Some(&node)), secs(0.0))
        .unwrap();
    assert_eq!((d.nodes(), d.pods()), (1, 1));
    d.node_gone(&node);
    assert_eq!((d.nodes(), d.pods()), (0, 0));
    assert!(d.pod_keys().is_empty());
}
