use super::*;
use crate::objects::PodIdentity;
use schedlab_core::pod::PodId;
use schedlab_core::testing::{self, PodSpecChanges};
use schedlab_core::view::{ClusterView, Placement};
use schedlab_core::{Dist, PodSlot};
use std::sync::{Arc, Mutex};

const RUN: &str = "r";
const NS: &str = "ns";
const MI: u64 = 1 << 20;

fn node(id: u32, cpu: u64) -> core::Node {
    let spec = NodeSpec::plain(format!("n{id}"), Resources::new(cpu, 4096 * MI), 0.1);
    objects::node_object(RUN, NodeId(id), &spec, true)
}

fn node_name(id: u32) -> String {
    format!("{RUN}-n{id}")
}

fn pod_for(scheduler: &str, i: u64, cpu: u64, priority: i32) -> core::Pod {
    let one = Dist::Const { value: 1.0 };
    let mut w = testing::workload(
        0,
        "w",
        testing::pod(cpu, 64 * MI).scheduler(scheduler).usage(one.clone(), one),
    );
    w.recreate = false;
    let ident = PodIdentity {
        pod: PodId(i),
        slot: PodSlot {
            workload: WorkloadId(0),
            ordinal: i as u32,
        },
        incarnation: 0,
    };
    let mut pod = objects::pod_object(RUN, NS, &ident, &w, 1);
    pod.metadata.namespace = Some(NS.into());
    pod.metadata.uid = Some(format!("uid-{i}"));
    // admission resolves the priority class into spec.priority
    if let Some(s) = pod.spec.as_mut() {
        s.priority = Some(priority);
    }
    pod
}

fn pod(i: u64, cpu: u64, priority: i32) -> core::Pod {
    pod_for("binpack", i, cpu, priority)
}

fn key(i: u64) -> PodKey {
    PodKey::new(NS, format!("w-{i}-0"))
}

fn bound_to(mut pod: core::Pod, node: u32) -> core::Pod {
    if let Some(s) = pod.spec.as_mut() {
        s.node_name = Some(node_name(node));
    }
    pod
}

fn binder() -> Binder {
    Binder::new(
        "binpack".into(),
        ModelConfig::default(),
        ClusterCache::new(NodeIds::FromLabel),
    )
    .unwrap()
}

fn list_nodes(b: &mut Binder, nodes: Vec<core::Node>, now: Time) {
    b.apply(Change::Node(Box::new(watcher::Event::Init)), now);
    for n in nodes {
        b.apply(Change::Node(Box::new(watcher::Event::InitApply(n))), now);
    }
    b.apply(Change::Node(Box::new(watcher::Event::InitDone)), now);
}

fn list_pods(b: &mut Binder, pods: Vec<core::Pod>, now: Time) {
    b.apply(Change::Pod(Box::new(watcher::Event::Init)), now);
    for p in pods {
        b.apply(Change::Pod(Box::new(watcher::Event::InitApply(p))), now);
    }
    b.apply(Change::Pod(Box::new(watcher::Event::InitDone)), now);
}

fn pod_event(b: &mut Binder, pod: core::Pod, now: Time) {
    b.apply(Change::Pod(Box::new(watcher::Event::Apply(pod))), now);
}

/// What the placer was asked: pod, attempts, each node's requested CPU.
type Asked = Arc<Mutex<Vec<(PodId, u32, Vec<u64>)>>>;

/// First node with room, else Unschedulable "full"; logs every question.
fn first_fit(asked: Asked) -> Box<dyn Scheduler> {
    Box::new(move |pod: &PendingPod<'_>, view: &ClusterView<'_>| {
        asked.lock().unwrap().push((
            pod.id,
            pod.attempts,
            view.nodes.iter().map(|n| n.requested.cpu_milli).collect(),
        ));
        view.nodes
            .iter()
            .find(|n| (n.requested + pod.spec.requests).fits_in(&n.spec.allocatable))
            .map_or(Placement::Unschedulable { reason: "full".into() }, |n| {
                Placement::Bind(n.id)
            })
    })
}

fn answers(list: Vec<Placement>) -> Box<dyn Scheduler> {
    let mut list = list.into_iter();
    Box::new(move |_: &PendingPod<'_>, _: &ClusterView<'_>| {
        list.next().unwrap_or(Placement::Unschedulable {
            reason: "out of answers".into(),
        })
    })
}

fn api_error(code: u16) -> kube::Error {
    let status = serde_json::json!({"status": "Failure", "code": code});
    kube::Error::Api(Box::new(serde_json::from_value(status).unwrap()))
}

fn no_retry(_: Duration) -> Time {
    Time::ZERO
}

fn bind_request(i: u64, node: u32) -> Request {
    Request::Bind {
        key: key(i),
        uid: format!("uid-{i}"),
        node: NodeId(node),
        node_name: node_name(node),
    }
}

#[test]
fn waits_for_both_listings_then_decides_by_priority() {
    let mut b = binder();
    let asked = Asked::default();
    let mut placer = first_fit(asked.clone());
    list_nodes(&mut b, vec![node(0, 4000)], Time(0));
    b.apply(Change::Pod(Box::new(watcher::Event::Init)), Time(0));
    b.apply(
        Change::Pod(Box::new(watcher::Event::InitApply(pod(1, 100, 0)))),
        Time(0),
    );
    b.apply(
        Change::Pod(Box::new(watcher::Event::InitApply(pod(2, 100, 10)))),
        Time(0),
    );
    assert!(!b.synced());
    assert_eq!(
        b.decide(Time(0), &mut *placer),
        None,
        "no decision on a half-listed cluster"
    );
    b.apply(Change::Pod(Box::new(watcher::Event::InitDone)), Time(0));
    assert!(b.synced());
    pod_event(&mut b, pod(3, 100, 10), Time(5));
    assert_eq!(b.decide(Time(5), &mut *placer), Some(bind_request(2, 0)));
    assert_eq!(
        b.decide(Time(5), &mut *placer),
        Some(bind_request(3, 0)),
        "same priority: earlier first"
    );
    assert_eq!(b.decide(Time(5), &mut *placer), Some(bind_request(1, 0)));
    assert_eq!(b.decide(Time(5), &mut *placer), None);
    let seen: Vec<u64> = asked.lock().unwrap().iter().map(|(p, _, _)| p.0).collect();
    assert_eq!(seen, [2, 3, 1]);
    assert_eq!(b.stats().decisions, 3);
    assert_eq!(b.stats().decision_latency.count, 3);
}

#[test]
fn an_assumed_bind_counts_before_the_watch_shows_it_and_a_conflict_frees_it() {
    let mut b = binder();
    let asked = Asked::default();
    let mut placer = first_fit(asked.clone());
    list_nodes(&mut b, vec![node(0, 2000)], Time(0));
    list_pods(&mut b, vec![pod(1, 1500, 0), pod(2, 1500, 0)], Time(0));
    assert_eq!(b.decide(Time(0), &mut *placer), Some(bind_request(1, 0)));
    assert_eq!(
        b.decide(Time(0), &mut *placer),
        Some(Request::Status {
            key: key(2),
            answer: Answer::Unschedulable,
            message: "full".into(),
        })
    );
    assert_eq!(asked.lock().unwrap()[1].2, [1500], "pod 1 is assumed on node 0");
    // the same answer after the back-off is not written again
    assert!(!b.has_due(Time(999)));
    assert_eq!(b.decide(Time(1000), &mut *placer), None);
    assert_eq!(b.stats().unschedulable, 2);
    // somebody else bound pod 1: its assumed room is free again, and pod 2
    // (backing off 2 s since 1 s) retries 1 s after its last attempt
    b.bind_done(
        &key(1),
        NodeId(0),
        Err(api_error(409)),
        Duration::ZERO,
        Time(1100),
        no_retry,
    )
    .unwrap();
    assert_eq!(b.cache().nodes()[0].requested.cpu_milli, 0);
    assert!(!b.has_due(Time(1999)));
    assert_eq!(b.decide(Time(2000), &mut *placer), Some(bind_request(2, 0)));
    let s = b.stats();
    assert_eq!((s.conflicts, s.binds), (1, 0));
}

#[test]
fn events_older_than_a_bind_do_not_queue_the_pod_again() {
    let mut b = binder();
    let mut placer = first_fit(Asked::default());
    list_nodes(&mut b, vec![node(0, 2000)], Time(0));
    list_pods(&mut b, vec![pod(1, 500, 0)], Time(0));
    assert_eq!(b.decide(Time(0), &mut *placer), Some(bind_request(1, 0)));
    b.bind_done(&key(1), NodeId(0), Ok(()), Duration::from_millis(3), Time(1), no_retry)
        .unwrap();
    pod_event(&mut b, pod(1, 500, 0), Time(2));
    assert_eq!(b.queued(), 0);
    assert!(!b.has_due(Time(100_000)));
    pod_event(&mut b, bound_to(pod(1, 500, 0), 0), Time(3));
    let n = &b.cache().nodes()[0];
    assert_eq!((n.requested.cpu_milli, n.pod_count), (500, 1), "counted once");
    let s = b.stats();
    assert_eq!((s.binds, s.bind_latency.count, s.pending), (1, 1, 0));
}

#[test]
fn throttled_and_failed_binds_retry_later_without_counting_an_attempt() {
    let mut b = binder();
    let asked = Asked::default();
    let mut placer = first_fit(asked.clone());
    list_nodes(&mut b, vec![node(0, 2000)], Time(0));
    list_pods(&mut b, vec![pod(1, 500, 0)], Time(0));
    assert!(b.decide(Time(0), &mut *placer).is_some());
    b.bind_done(&key(1), NodeId(0), Err(api_error(503)), Duration::ZERO, Time(0), |_| {
        Time(5000)
    })
    .unwrap();
    assert_eq!(
        b.cache().nodes()[0].requested.cpu_milli,
        0,
        "the assumed bind is forgotten"
    );
    assert!(!b.has_due(Time(4999)));
    assert!(b.decide(Time(5000), &mut *placer).is_some());
    b.bind_done(
        &key(1),
        NodeId(0),
        Err(api_error(429)),
        Duration::ZERO,
        Time(5000),
        |_| Time(6000),
    )
    .unwrap();
    assert!(b.decide(Time(6000), &mut *placer).is_some());
    let attempts: Vec<u32> = asked.lock().unwrap().iter().map(|(_, a, _)| *a).collect();
    assert_eq!(attempts, [0, 0, 0]);
    let s = b.stats();
    assert_eq!((s.unavailable, s.throttled), (1, 1));
}

#[test]
fn a_vanished_pod_is_dropped_and_a_forbidden_bind_stops_the_loop() {
    let mut b = binder();
    let mut placer = first_fit(Asked::default());
    list_nodes(&mut b, vec![node(0, 2000)], Time(0));
    list_pods(&mut b, vec![pod(1, 500, 0), pod(2, 500, 0)], Time(0));
    assert!(b.decide(Time(0), &mut *placer).is_some());
    b.bind_done(
        &key(1),
        NodeId(0),
        Err(api_error(404)),
        Duration::ZERO,
        Time(0),
        no_retry,
    )
    .unwrap();
    assert_eq!(b.queued(), 1);
    assert_eq!(b.stats().gone, 1);
    assert!(b.decide(Time(0), &mut *placer).is_some());
    let err = b
        .bind_done(
            &key(2),
            NodeId(0),
            Err(api_error(403)),
            Duration::ZERO,
            Time(0),
            no_retry,
        )
        .unwrap_err();
    assert!(err.to_string().contains("ns/w-2-0"), "{err}");
}

#[test]
fn a_relist_forgets_pods_that_vanished_meanwhile() {
    let mut b = binder();
    list_nodes(&mut b, vec![node(0, 2000)], Time(0));
    list_pods(&mut b, vec![pod(1, 500, 0), pod(2, 500, 0)], Time(0));
    assert_eq!(b.queued(), 2);
    list_pods(&mut b, vec![pod(2, 500, 0)], Time(10));
    assert_eq!(b.queued(), 1);
    assert!(b.cache().pod(NS, "w-1-0").is_none());
}

#[test]
fn a_pod_leaving_a_node_wakes_the_pods_backing_off() {
    let mut b = binder();
    let asked = Asked::default();
    let mut placer = first_fit(asked.clone());
    let other = bound_to(pod_for("default-scheduler", 9, 1000, 0), 0);
    list_nodes(&mut b, vec![node(0, 1000)], Time(0));
    list_pods(&mut b, vec![other.clone(), pod(1, 1000, 0)], Time(0));
    assert_eq!(b.queued(), 1, "other schedulers' pods are not queued");
    let mut now = Time(0);
    for _ in 0..4 {
        b.decide(now, &mut *placer);
        now = b.next_due().unwrap();
    }
    // attempts at 0, 1, 3 and 7 s: the next is due at 15 s
    assert_eq!(now, Time(15_000));
    b.apply(Change::Pod(Box::new(watcher::Event::Delete(other))), Time(7_500));
    assert!(!b.has_due(Time(7_999)));
    assert_eq!(b.decide(Time(8_000), &mut *placer), Some(bind_request(1, 0)));
}

#[test]
fn answers_are_written_once_per_change() {
    let mut b = binder();
    let mut placer = answers(vec![
        Placement::Decline { reason: "wait".into() },
        Placement::Unschedulable { reason: "full".into() },
        Placement::Unschedulable { reason: "full".into() },
        Placement::Bind(NodeId(7)),
    ]);
    list_nodes(&mut b, vec![node(0, 2000)], Time(0));
    // the pod already says Declined/"wait" (written by an earlier loop)
    let mut p = pod(1, 500, 0);
    p.status = Some(core::PodStatus {
        conditions: Some(vec![core::PodCondition {
            type_: "PodScheduled".into(),
            status: "False".into(),
            reason: Some("Declined".into()),
            message: Some("wait".into()),
            ..Default::default()
        }]),
        ..Default::default()
    });
    list_pods(&mut b, vec![p], Time(0));
    let mut requests = Vec::new();
    let mut now = Time(0);
    for _ in 0..4 {
        requests.push(b.decide(now, &mut *placer));
        now = b.next_due().unwrap();
    }
    let status = |answer, message: &str| {
        Some(Request::Status {
            key: key(1),
            answer,
            message: message.into(),
        })
    };
    assert_eq!(
        requests,
        [
            None,
            status(Answer::Unschedulable, "full"),
            None,
            status(Answer::Unschedulable, "bind rejected: node 7 does not exist"),
        ]
    );
    // a failed write is made again on the next answer
    b.status_done(
        &key(1),
        Answer::Unschedulable,
        "bind rejected: node 7 does not exist",
        Err(api_error(500)),
    );
    let mut placer = answers(vec![Placement::Bind(NodeId(7))]);
    assert_eq!(
        b.decide(now, &mut *placer),
        status(Answer::Unschedulable, "bind rejected: node 7 does not exist")
    );
    let s = b.stats();
    assert_eq!((s.declined, s.unschedulable, s.rejected), (1, 4, 2));
}

#[test]
fn pending_means_ours_unbound_alive_and_unfinished() {
    let p = pod(1, 100, 0);
    assert!(is_pending_for(&p, "binpack"));
    assert!(!is_pending_for(&p, "default-scheduler"));
    assert!(!is_pending_for(&bound_to(p.clone(), 0), "binpack"));
    let mut deleting = p.clone();
    deleting.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        jiff::Timestamp::now(),
    ));
    assert!(!is_pending_for(&deleting, "binpack"));
    let mut done = p;
    done.status = Some(core::PodStatus {
        phase: Some("Succeeded".into()),
        ..Default::default()
    });
    assert!(!is_pending_for(&done, "binpack"));
    let mut unnamed = pod(2, 100, 0);
    if let Some(s) = unnamed.spec.as_mut() {
        s.scheduler_name = None;
    }
    assert!(is_pending_for(&unnamed, "default-scheduler"));
}

/// What the placer saw of the cluster for preemption: pods per node (ids)
/// and the nominations (pod, node).
type Seen = Arc<Mutex<Vec<(Vec<Vec<u64>>, Vec<(u64, u32)>)>>>;

/// Answers `list` in turn, noting what each view held for preemption.
fn answers_seeing(list: Vec<Placement>, seen: Seen) -> Box<dyn Scheduler> {
    let mut list = list.into_iter();
    Box::new(move |_: &PendingPod<'_>, view: &ClusterView<'_>| {
        let mut pods: Vec<Vec<u64>> = view
            .pods_by_node
            .iter()
            .map(|l| l.iter().map(|b| b.id.0).collect())
            .collect();
        pods.iter_mut().for_each(|l| l.sort_unstable());
        let nominated = view.nominated.iter().map(|n| (n.pod.0, n.node.0)).collect();
        seen.lock().unwrap().push((pods, nominated));
        list.next().unwrap_or(Placement::Unschedulable {
            reason: "out of answers".into(),
        })
    })
}

fn preempt_answer(node: u32, victims: &[u64]) -> Placement {
    Placement::Preempt {
        node: NodeId(node),
        victims: victims.iter().map(|&v| PodId(v)).collect(),
        reason: "0/1 nodes are available: 1 Insufficient cpu.".into(),
    }
}

fn victim(i: u64) -> Victim {
    Victim {
        key: key(i),
        uid: format!("uid-{i}"),
    }
}

/// Node 0 (2000m) full with pods 1 and 2 (1000m, priority 0); pod 5 of
/// another scheduler (priority 1) nominated there; pod 3 (1500m, priority
/// 100) pending for this loop.
fn full_node() -> (Binder, core::Pod, core::Pod) {
    let mut b = binder();
    list_nodes(&mut b, vec![node(0, 2000)], Time(0));
    let low1 = bound_to(pod(1, 1000, 0), 0);
    let low2 = bound_to(pod(2, 1000, 0), 0);
    let mut nominated = pod_for("default-scheduler", 5, 500, 1);
    nominated.status = Some(core::PodStatus {
        nominated_node_name: Some(node_name(0)),
        ..Default::default()
    });
    list_pods(
        &mut b,
        vec![low1.clone(), low2.clone(), nominated, pod(3, 1500, 100)],
        Time(0),
    );
    (b, low1, low2)
}

fn preemption_of_3(condition: Option<&str>, previous: Option<NodeId>) -> Request {
    Request::Preempt(Box::new(Preemption {
        key: key(3),
        node: NodeId(0),
        node_name: node_name(0),
        victims: vec![victim(1), victim(2)],
        lower_nominated: vec![key(5)],
        condition: condition.map(str::to_string),
        previous,
    }))
}

fn unwrap_preemption(request: Option<Request>) -> Preemption {
    match request {
        Some(Request::Preempt(p)) => *p,
        other => panic!("not a preemption: {other:?}"),
    }
}

#[test]
fn a_preemption_deletes_the_victims_nominates_the_pod_and_requeues_it() {
    let (mut b, low1, low2) = full_node();
    let seen = Seen::default();
    let mut placer = answers_seeing(
        vec![preempt_answer(0, &[1, 2]), Placement::Bind(NodeId(0))],
        seen.clone(),
    );
    let request = b.decide(Time(0), &mut *placer);
    assert_eq!(
        request,
        Some(preemption_of_3(
            Some("0/1 nodes are available: 1 Insufficient cpu."),
            None
        ))
    );
    // the policy saw the node's pods and the nomination
    assert_eq!(seen.lock().unwrap()[0], (vec![vec![1, 2]], vec![(5, 0)]));
    // the room is the preemptor's at once, and it backs off like an unschedulable pod
    let ns = NS;
    assert_eq!(b.cache().nomination(ns, "w-3-0"), Some(NodeId(0)));
    assert!(b.cache().nominated().iter().any(|n| n.pod == PodId(3)));
    assert!(!b.has_due(Time(999)));
    assert_eq!(b.next_due(), Some(Time(1000)));
    let p = unwrap_preemption(request);
    b.preempt_done(
        &p,
        PreemptionResults {
            deleted: vec![Ok(()), Ok(())],
            cleared: vec![Ok(())],
            status: Some(Ok(())),
        },
    )
    .unwrap();
    let s = b.stats();
    assert_eq!(
        (s.preemptions, s.victims, s.nominations_cleared, s.status_writes),
        (1, 2, 1, 1)
    );
    assert_eq!(
        b.cache().nomination(NS, "w-5-0"),
        None,
        "the lower nomination is cleared"
    );
    assert_eq!(b.cache().nomination(NS, "w-3-0"), Some(NodeId(0)));
    // the victims leave (the watch shows them gone): the pod binds there
    b.apply(Change::Pod(Box::new(watcher::Event::Delete(low1))), Time(400));
    b.apply(Change::Pod(Box::new(watcher::Event::Delete(low2))), Time(500));
    assert_eq!(b.decide(Time(1000), &mut *placer), Some(bind_request(3, 0)));
    assert_eq!(seen.lock().unwrap()[1].0, vec![Vec::<u64>::new()]);
    b.bind_done(&key(3), NodeId(0), Ok(()), Duration::ZERO, Time(1001), no_retry)
        .unwrap();
    assert!(b.cache().nominated().is_empty(), "a bound pod holds no nomination");
    assert_eq!(b.queued(), 0);
}

#[test]
fn a_failed_victim_delete_nominates_nothing_and_the_pod_tries_again() {
    let (mut b, _, low2) = full_node();
    let mut placer = answers(vec![
        preempt_answer(0, &[1, 2]),
        preempt_answer(0, &[1, 2]),
        preempt_answer(0, &[1]),
    ]);
    let p = unwrap_preemption(b.decide(Time(0), &mut *placer));
    // the first delete gets a 503: the second is not tried, nothing is
    // nominated, only the condition was written
    b.preempt_done(
        &p,
        PreemptionResults {
            deleted: vec![Err(api_error(503))],
            cleared: vec![],
            status: Some(Ok(())),
        },
    )
    .unwrap();
    let s = b.stats();
    assert_eq!((s.preemptions, s.victims, s.unavailable), (0, 0, 1));
    assert_eq!(b.cache().nomination(NS, "w-3-0"), None);
    assert_eq!(
        b.cache().nomination(NS, "w-5-0"),
        Some(NodeId(0)),
        "the lower nomination stays"
    );
    // next attempt: the condition is already there; one victim is gone by
    // now (404) and the other deleted: carried out
    let p = unwrap_preemption(b.decide(Time(1000), &mut *placer));
    assert_eq!(p.condition, None);
    b.preempt_done(
        &p,
        PreemptionResults {
            deleted: vec![Err(api_error(404)), Ok(())],
            cleared: vec![Err(api_error(500))],
            status: Some(Err(api_error(429))),
        },
    )
    .unwrap();
    let s = b.stats();
    assert_eq!((s.preemptions, s.victims, s.nominations_cleared), (1, 1, 0));
    assert_eq!((s.unavailable, s.throttled), (2, 1));
    assert_eq!(b.cache().nomination(NS, "w-3-0"), Some(NodeId(0)));
    assert_eq!(
        b.cache().nomination(NS, "w-5-0"),
        Some(NodeId(0)),
        "a failed clear leaves it"
    );
    // pod 2 goes; pod 1 (gone already when deleted) shows again; a 403 on
    // its delete stops the loop, naming the victim and the preemptor
    b.apply(Change::Pod(Box::new(watcher::Event::Delete(low2))), Time(2000));
    let p = unwrap_preemption(b.decide(Time(3000), &mut *placer));
    assert_eq!(p.victims, [victim(1)]);
    let err = b
        .preempt_done(
            &p,
            PreemptionResults {
                deleted: vec![Err(api_error(403))],
                ..Default::default()
            },
        )
        .unwrap_err();
    let shown = err.to_string();
    assert!(shown.contains("ns/w-1-0") && shown.contains("ns/w-3-0"), "{shown}");
}

#[test]
fn a_failed_nomination_write_is_made_again_with_the_next_answer() {
    let (mut b, _, _) = full_node();
    let mut placer = answers(vec![preempt_answer(0, &[1, 2]), preempt_answer(0, &[1, 2])]);
    let p = unwrap_preemption(b.decide(Time(0), &mut *placer));
    // both victims were gone already (so none terminates: the pod may preempt again)
    b.preempt_done(
        &p,
        PreemptionResults {
            deleted: vec![Err(api_error(404)), Err(api_error(404))],
            cleared: vec![Ok(())],
            status: Some(Err(api_error(500))),
        },
    )
    .unwrap();
    let s = b.stats();
    assert_eq!((s.status_writes, s.preemptions, s.victims), (0, 1, 0));
    let p = unwrap_preemption(b.decide(Time(1000), &mut *placer));
    assert_eq!(
        p.condition.as_deref(),
        Some("0/1 nodes are available: 1 Insufficient cpu."),
        "written again"
    );
    assert_eq!(p.previous, Some(NodeId(0)));
    assert!(p.lower_nominated.is_empty(), "cleared the first time");
}

#[test]
fn a_pod_waits_for_its_victims_instead_of_preempting_again() {
    let (mut b, low1, low2) = full_node();
    let mut placer = answers(vec![
        preempt_answer(0, &[1, 2]),
        preempt_answer(0, &[1, 2]),
        preempt_answer(0, &[1, 2]),
        preempt_answer(0, &[1, 2]),
        Placement::Bind(NodeId(0)),
    ]);
    let p = unwrap_preemption(b.decide(Time(0), &mut *placer));
    // its writes are still out when its back-off ends: it waits
    assert_eq!(
        b.decide(Time(1000), &mut *placer),
        None,
        "same condition: nothing to write"
    );
    assert_eq!(b.stats().preemptions_waiting, 1);
    b.preempt_done(
        &p,
        PreemptionResults {
            deleted: vec![Ok(()), Ok(())],
            cleared: vec![Ok(())],
            status: Some(Ok(())),
        },
    )
    .unwrap();
    // the deletes were accepted: the victims terminate with their grace
    // period, before the watch shows it and after an older event
    assert_eq!(b.decide(Time(3000), &mut *placer), None);
    pod_event(&mut b, low1.clone(), Time(3500));
    assert_eq!(b.decide(Time(7000), &mut *placer), None);
    let s = b.stats();
    assert_eq!((s.preemptions, s.victims, s.preemptions_waiting), (1, 2, 3));
    assert_eq!(
        b.cache().nomination(NS, "w-3-0"),
        Some(NodeId(0)),
        "it keeps its nomination"
    );
    assert_eq!(b.next_due(), Some(Time(15_000)), "and backs off");
    // the victims are gone: the pod is woken and binds
    b.apply(Change::Pod(Box::new(watcher::Event::Delete(low1))), Time(7100));
    b.apply(Change::Pod(Box::new(watcher::Event::Delete(low2))), Time(7200));
    assert_eq!(b.decide(Time(8000), &mut *placer), Some(bind_request(3, 0)));
}

#[test]
fn a_preemption_that_cannot_be_carried_out_deletes_nothing() {
    let (mut b, _, _) = full_node();
    let reason = "0/1 nodes are available: 1 Insufficient cpu.";
    let mut placer = answers(vec![
        // pod 5 is pending, not on the node
        preempt_answer(0, &[1, 5]),
        // no such node
        preempt_answer(4, &[1]),
    ]);
    assert_eq!(
        b.decide(Time(0), &mut *placer),
        Some(Request::Status {
            key: key(3),
            answer: Answer::Unschedulable,
            message: reason.into(),
        })
    );
    assert_eq!(b.decide(Time(1000), &mut *placer), None);
    assert_eq!(b.stats().rejected_preemptions, 2);
    assert_eq!(b.cache().nomination(NS, "w-3-0"), None);

    // victims must be of lower priority than the preemptor
    let mut b = binder();
    list_nodes(&mut b, vec![node(0, 2000)], Time(0));
    list_pods(&mut b, vec![bound_to(pod(1, 2000, 100), 0), pod(3, 1500, 100)], Time(0));
    let mut placer = answers(vec![preempt_answer(0, &[1])]);
    assert!(matches!(b.decide(Time(0), &mut *placer), Some(Request::Status { .. })));
    assert_eq!(b.stats().rejected_preemptions, 1);
}

#[test]
fn a_pod_that_never_preempts_stays_unschedulable() {
    let mut b = binder();
    list_nodes(&mut b, vec![node(0, 2000)], Time(0));
    let mut never = pod(3, 1500, 100);
    never.spec.as_mut().unwrap().preemption_policy = Some("Never".into());
    list_pods(&mut b, vec![bound_to(pod(1, 2000, 0), 0), never], Time(0));
    let mut placer = answers(vec![preempt_answer(0, &[1])]);
    assert!(matches!(b.decide(Time(0), &mut *placer), Some(Request::Status { .. })));
    let s = b.stats();
    assert_eq!((s.unschedulable, s.preemptions, s.rejected_preemptions), (1, 0, 0));
}
