use super::*;
use crate::objects::PodIdentity;
use schedlab_core::pod::PodId;
use schedlab_core::testing::{self, PodSpecChanges};
use schedlab_core::view::Placement;
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
fn first_fit(asked: Asked) -> Box<Placer> {
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

fn answers(list: Vec<Placement>) -> Box<Placer> {
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
