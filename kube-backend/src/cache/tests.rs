use super::*;
use crate::labels;
use crate::observe::testkit::{self, Exit, Kubelet, MI, NodeDownStyle, Shown, write_status};
use rand::Rng;
use schedlab_core::behaviour::{Input, NodeHealth};
use schedlab_core::pod::RestartPolicy;
use schedlab_core::record::{ExitReason, OomCause};
use schedlab_core::time::Span;
use schedlab_core::timeline::Workload;

fn ready(cache: &mut ClusterCache, nodes: &[(u32, &str)]) {
    let mut out = Vec::new();
    for &(id, name) in nodes {
        cache
            .apply_node(&testkit::node(id, name), Time::ZERO, &mut out)
            .unwrap();
    }
    assert!(out.is_empty(), "{out:?}");
}

fn with_condition(mut node: core::Node, ready: &str, degraded: &str) -> core::Node {
    let now = jiff::Timestamp::UNIX_EPOCH;
    node.status.as_mut().unwrap().conditions = Some(vec![
        objects::node_condition("Ready", ready, "r", now),
        objects::node_condition(labels::DEGRADED_CONDITION, degraded, "r", now),
    ]);
    node
}

#[test]
fn node_ids_come_from_labels_and_stay_dense() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    let mut out = Vec::new();
    let b = testkit::node(2, "b");
    assert_eq!(cache.apply_node(&b, Time(5), &mut out).unwrap(), NodeId(2));
    assert_eq!(cache.nodes().len(), 3);
    // the ids before it wait, NotReady, with nothing to offer
    assert_eq!(cache.nodes()[0].condition, NodeCondition::NotReady);
    assert_eq!(cache.nodes()[0].spec.allocatable, Resources::ZERO);
    assert_eq!(cache.node_name(NodeId(0)), None);
    let a = testkit::node(0, "a");
    assert_eq!(cache.apply_node(&a, Time(6), &mut out).unwrap(), NodeId(0));
    assert_eq!(cache.nodes()[0].condition, NodeCondition::Ready);
    assert_eq!(cache.nodes()[0].since, Time(6));
    assert_eq!(cache.nodes()[2].spec.allocatable, Resources::new(4000, 8192 * MI));
    assert_eq!(cache.node_id(&testkit::node_name("b")), Some(NodeId(2)));
    assert_eq!(cache.node_name(NodeId(2)), Some(testkit::node_name("b").as_str()));
    assert!(out.is_empty(), "no events on first sight: {out:?}");
    // another node claiming a taken id, or none, is refused
    let clash = testkit::node(2, "c");
    assert!(cache.apply_node(&clash, Time(7), &mut out).is_err());
    let mut unlabelled = testkit::node(1, "d");
    unlabelled.metadata.labels.as_mut().unwrap().remove(labels::NODE_ID);
    assert!(cache.apply_node(&unlabelled, Time(7), &mut out).is_err());
    let huge = testkit::node(u32::MAX, "e");
    assert!(cache.apply_node(&huge, Time(7), &mut out).is_err());
    assert_eq!(cache.nodes().len(), 3);
}

#[test]
fn real_nodes_get_ids_in_order_of_sight() {
    let mut cache = ClusterCache::new(NodeIds::InOrder);
    let mut out = Vec::new();
    let mut first = testkit::node(7, "x");
    first.metadata.labels.as_mut().unwrap().remove(labels::NODE_ID);
    assert_eq!(cache.apply_node(&first, Time::ZERO, &mut out).unwrap(), NodeId(0));
    assert_eq!(
        cache.apply_node(&testkit::node(3, "y"), Time::ZERO, &mut out).unwrap(),
        NodeId(1)
    );
    assert_eq!(cache.apply_node(&first, Time::ZERO, &mut out).unwrap(), NodeId(0));
    assert_eq!(cache.nodes().len(), 2);
}

#[test]
fn condition_changes_are_the_simulators_node_events() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    ready(&mut cache, &[(0, "a")]);
    let n = NodeId(0);
    let mut out = Vec::new();
    let node = testkit::node(0, "a");
    let steps = [
        (("True", "True"), vec![EventKind::NodeDegraded { node: n }]),
        (("Unknown", "True"), vec![EventKind::NodeFailed { node: n }]),
        (("Unknown", "False"), vec![]),
        (
            ("True", "True"),
            vec![
                EventKind::NodeRecovered { node: n },
                EventKind::NodeDegraded { node: n },
            ],
        ),
        (("True", "False"), vec![EventKind::NodeRecovered { node: n }]),
        (("True", "False"), vec![]),
    ];
    for ((r, d), expect) in steps {
        out.clear();
        cache
            .apply_node(&with_condition(node.clone(), r, d), Time(1), &mut out)
            .unwrap();
        assert_eq!(out, expect, "Ready={r} Degraded={d}");
    }
    let mut cordoned = node.clone();
    cordoned.spec.as_mut().unwrap().unschedulable = Some(true);
    cache.apply_node(&cordoned, Time(2), &mut out).unwrap();
    assert!(cache.nodes()[0].unschedulable);
    out.clear();
    cache.delete_node(&testkit::node_name("a"), Time(3), &mut out);
    assert_eq!(out, vec![EventKind::NodeFailed { node: n }]);
    assert_eq!(cache.nodes()[0].condition, NodeCondition::NotReady);
    out.clear();
    cache.delete_node("unknown", Time(3), &mut out);
    assert!(out.is_empty());
    assert_eq!(cache.apply_node(&node, Time(4), &mut out).unwrap(), n);
    assert_eq!(out, vec![EventKind::NodeRecovered { node: n }]);
}

fn pending(cache: &mut ClusterCache, pod: u64, w: &Workload, now: Time) -> core::Pod {
    let p = testkit::pod(&testkit::ident(pod, w.id.0, pod as u32), w);
    let mut out = Vec::new();
    cache.apply_pod(&p, now, &mut out);
    assert!(out.is_empty());
    p
}

fn name_of(p: &core::Pod) -> String {
    p.metadata.name.clone().unwrap()
}

#[test]
fn a_pod_counts_on_its_node_from_binding_to_end() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    ready(&mut cache, &[(0, "a"), (1, "b")]);
    let w = testkit::workload(0, RestartPolicy::Never);
    let mut p = pending(&mut cache, 3, &w, Time(10));
    let name = name_of(&p);
    assert_eq!((cache.pending(), cache.bound()), (1, 0));
    let cached = cache.pod(testkit::RUN, &name).unwrap();
    assert_eq!(
        (cached.id, cached.created, cached.uid.as_str()),
        (PodId(3), Time(10), "uid-3")
    );
    assert_eq!(cached.spec.requests, w.spec.requests);
    assert_eq!(cache.history(WorkloadId(0)).pods, 1);
    let mut out = Vec::new();
    testkit::bind(&mut p, &testkit::node_name("b"));
    write_status(&mut p, "Pending", None, &Shown::Creating, 0, None);
    cache.apply_pod(&p, Time(11), &mut out);
    assert_eq!(
        out,
        vec![EventKind::PodBound {
            pod: PodId(3),
            node: NodeId(1)
        }]
    );
    assert_eq!((cache.pending(), cache.bound()), (0, 1));
    let b = &cache.nodes()[1];
    assert_eq!(
        (b.requested, b.pod_count, b.used),
        (w.spec.requests, 1, Resources::ZERO)
    );
    let u = Resources::new(300, 400 * MI);
    let id = "emulated://uid-3/1";
    write_status(
        &mut p,
        "Running",
        None,
        &Shown::Running {
            id: id.into(),
            usage: u,
        },
        0,
        None,
    );
    cache.apply_pod(&p, Time(12), &mut out);
    assert_eq!(cache.nodes()[1].used, u);
    let u2 = Resources::new(350, 450 * MI);
    write_status(
        &mut p,
        "Running",
        None,
        &Shown::Running {
            id: id.into(),
            usage: u2,
        },
        0,
        None,
    );
    cache.apply_pod(&p, Time(13), &mut out);
    assert_eq!(cache.nodes()[1].used, u2, "usage follows the Usage condition");
    let oom = Exit::new(id, ExitReason::OOMKilled, Some(OomCause::Limit));
    write_status(&mut p, "Failed", None, &Shown::Terminated(oom), 0, None);
    out.clear();
    cache.apply_pod(&p, Time(14), &mut out);
    assert_eq!(out.len(), 2, "{out:?}");
    let b = &cache.nodes()[1];
    assert_eq!(
        (b.requested, b.pod_count, b.used),
        (Resources::ZERO, 0, Resources::ZERO)
    );
    assert_eq!((cache.pending(), cache.bound()), (0, 0));
    // OOM kill and failure for good: two failures, one of them an OOM kill
    assert_eq!(b.recent.oom_kills, 1);
    assert_eq!(b.recent.failures, 2);
    let h = cache.history(WorkloadId(0));
    assert_eq!((h.pods, h.oom_kills, h.failures, h.restarts), (1, 1, 2, 0));
    assert_eq!(cache.nodes()[0].recent, Default::default());
    let gone = cache.delete_pod(testkit::RUN, &name, Time(15)).unwrap();
    assert_eq!(gone.ended, Some(PodEnd::Failed));
    assert_eq!(gone.node, Some(NodeId(1)));
    assert_eq!(gone.pod, PodId(3));
    assert_eq!(gone.ident.map(|i| i.slot.ordinal), Some(3));
    assert_eq!(cache.nodes()[1].pod_count, 0, "released once");
    assert!(cache.delete_pod(testkit::RUN, &name, Time(16)).is_none());
    cache.expire(Time(14) + schedlab_core::node::NodeState::RECENT_WINDOW);
    assert_eq!(cache.nodes()[1].recent, Default::default());
    assert_eq!(cache.history(WorkloadId(0)).failures, 2, "history does not expire");
}

#[test]
fn deleting_releases_pending_and_bound_pods() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    ready(&mut cache, &[(0, "a")]);
    let w = testkit::workload(1, RestartPolicy::Always);
    let waiting = pending(&mut cache, 1, &w, Time(1));
    let mut running = pending(&mut cache, 2, &w, Time(1));
    let mut out = Vec::new();
    testkit::bind(&mut running, &testkit::node_name("a"));
    let u = Resources::new(5, 5);
    write_status(
        &mut running,
        "Running",
        None,
        &Shown::Running {
            id: "c1".into(),
            usage: u,
        },
        0,
        None,
    );
    cache.apply_pod(&running, Time(2), &mut out);
    assert_eq!((cache.pending(), cache.bound()), (1, 1));
    assert_eq!(cache.nodes()[0].used, u);
    let gone = cache.delete_pod(testkit::RUN, &name_of(&waiting), Time(3)).unwrap();
    assert_eq!((gone.node, gone.ended), (None, None));
    assert_eq!((cache.pending(), cache.bound()), (0, 1));
    let gone = cache.delete_pod(testkit::RUN, &name_of(&running), Time(3)).unwrap();
    assert_eq!((gone.node, gone.ended), (Some(NodeId(0)), None));
    assert_eq!((cache.pending(), cache.bound()), (0, 0));
    let a = &cache.nodes()[0];
    assert_eq!(
        (a.requested, a.pod_count, a.used),
        (Resources::ZERO, 0, Resources::ZERO)
    );
    assert!(cache.pods().next().is_none());
}

#[test]
fn pods_wait_for_their_node_to_be_seen() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    let w = testkit::workload(0, RestartPolicy::Always);
    let mut p = pending(&mut cache, 4, &w, Time(1));
    testkit::bind(&mut p, &testkit::node_name("late"));
    let u = Resources::new(7, 7);
    write_status(
        &mut p,
        "Running",
        None,
        &Shown::Running {
            id: "c1".into(),
            usage: u,
        },
        0,
        None,
    );
    let mut out = Vec::new();
    cache.apply_pod(&p, Time(2), &mut out);
    assert!(out.is_empty());
    assert_eq!(
        (cache.pending(), cache.bound()),
        (0, 1),
        "bound, on a node not seen yet"
    );
    cache.apply_node(&testkit::node(0, "late"), Time(3), &mut out).unwrap();
    assert_eq!(
        out,
        vec![
            EventKind::PodBound {
                pod: PodId(4),
                node: NodeId(0)
            },
            EventKind::ContainerStarted {
                pod: PodId(4),
                node: NodeId(0),
                restart_count: 0,
                usage: u
            }
        ]
    );
    let n = &cache.nodes()[0];
    assert_eq!((n.requested, n.pod_count, n.used), (w.spec.requests, 1, u));
    assert_eq!(cache.bound(), 1);
    // the other nodes wake nobody
    out.clear();
    cache.apply_node(&testkit::node(1, "other"), Time(4), &mut out).unwrap();
    assert!(out.is_empty());
}

#[test]
fn assumed_bindings_count_until_the_watch_shows_them() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    ready(&mut cache, &[(0, "a"), (1, "b")]);
    let w = testkit::workload(0, RestartPolicy::Always);
    let mut p = pending(&mut cache, 1, &w, Time(1));
    let q = pending(&mut cache, 2, &w, Time(1));
    let (pn, qn) = (name_of(&p), name_of(&q));
    cache.assume(testkit::RUN, &pn, NodeId(1), Time(1));
    cache.assume(testkit::RUN, &qn, NodeId(1), Time(1));
    assert_eq!(cache.assumed(testkit::RUN, &pn), Some(NodeId(1)));
    assert_eq!((cache.pending(), cache.bound()), (0, 2));
    assert_eq!(cache.nodes()[1].requested, w.spec.requests + w.spec.requests);
    assert_eq!(cache.nodes()[1].pod_count, 2);
    // assuming again, or an unknown pod, changes nothing
    cache.assume(testkit::RUN, &pn, NodeId(0), Time(1));
    cache.assume(testkit::RUN, "nobody", NodeId(0), Time(1));
    assert_eq!(cache.nodes()[0].pod_count, 0);
    // the watch shows p's binding: counted once
    let mut out = Vec::new();
    testkit::bind(&mut p, &testkit::node_name("b"));
    cache.apply_pod(&p, Time(2), &mut out);
    assert_eq!(out.len(), 1);
    assert_eq!(cache.assumed(testkit::RUN, &pn), None);
    assert_eq!(cache.nodes()[1].pod_count, 2);
    assert_eq!(cache.bound(), 2);
    // q's bind failed (409: somebody else bound it; or 404)
    cache.forget_assumed(testkit::RUN, &qn, Time(3));
    assert_eq!((cache.pending(), cache.bound()), (1, 1));
    assert_eq!(cache.nodes()[1].pod_count, 1);
    assert_eq!(cache.nodes()[1].requested, w.spec.requests);
    cache.forget_assumed(testkit::RUN, &qn, Time(3));
    assert_eq!((cache.pending(), cache.bound()), (1, 1));
}

#[test]
fn foreign_pods_get_the_caches_own_ids() {
    let mut cache = ClusterCache::new(NodeIds::InOrder);
    ready(&mut cache, &[(0, "a")]);
    let mut out = Vec::new();
    for name in ["x", "y"] {
        let mut p = core::Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name.into()),
                namespace: Some("kube-system".into()),
                ..Default::default()
            },
            spec: Some(core::PodSpec {
                containers: vec![core::Container {
                    name: "c".into(),
                    ..Default::default()
                }],
                ..Default::default()
            }),
            status: None,
        };
        testkit::bind(&mut p, &testkit::node_name("a"));
        cache.apply_pod(&p, Time(1), &mut out);
    }
    let x = cache.pod("kube-system", "x").unwrap();
    let y = cache.pod("kube-system", "y").unwrap();
    assert!(x.id.0 >= FOREIGN_POD_BASE && y.id.0 >= FOREIGN_POD_BASE && x.id != y.id);
    assert_eq!(x.ident, None);
    assert_eq!(cache.nodes()[0].pod_count, 2);
    assert_eq!(out.len(), 2);
}

#[test]
fn a_new_pod_of_the_same_name_replaces_the_old_one() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    ready(&mut cache, &[(0, "a")]);
    let w = testkit::workload(0, RestartPolicy::Always);
    let mut p = pending(&mut cache, 1, &w, Time(1));
    testkit::bind(&mut p, &testkit::node_name("a"));
    let mut out = Vec::new();
    cache.apply_pod(&p, Time(2), &mut out);
    let fresh = testkit::pod(&testkit::ident(1, 0, 1), &w);
    let mut fresh = fresh;
    fresh.metadata.uid = Some("uid-other".into());
    cache.apply_pod(&fresh, Time(3), &mut out);
    assert_eq!((cache.pending(), cache.bound()), (1, 0));
    assert_eq!(cache.nodes()[0].pod_count, 0);
    assert_eq!(cache.pod(testkit::RUN, &name_of(&fresh)).unwrap().uid, "uid-other");
}

#[test]
fn unreadable_pods_are_ignored() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    let w = testkit::workload(0, RestartPolicy::Always);
    let mut p = testkit::pod(&testkit::ident(1, 0, 0), &w);
    p.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(labels::BEHAVIOUR.into(), "{not json".into());
    let mut out = Vec::new();
    cache.apply_pod(&p, Time(1), &mut out);
    assert_eq!((cache.pending(), cache.bound()), (0, 0));
    assert!(cache.pod(testkit::RUN, &name_of(&p)).is_none());
}

/// Pods played by the stand-in emulator on two nodes under random faults:
/// the cache's node accounting must equal the simulator's, computed from
/// the lifecycles themselves, after every status write.
#[test]
fn node_accounting_follows_the_lifecycles() {
    let (mut restarts, mut failures) = (0, 0);
    for seed in 0..20u64 {
        let mut rng = schedlab_core::rng::stream(seed, &[11]);
        let mut cache = ClusterCache::new(NodeIds::FromLabel);
        ready(&mut cache, &[(0, "a"), (1, "b")]);
        let mut window = TroubleWindow::default();
        let mut expected_nodes: Vec<NodeState> = cache.nodes().to_vec();
        let mut history = WorkloadHistory::default();
        let mut pods = Vec::new();
        let mut out = Vec::new();
        let w = testkit::workload(0, [RestartPolicy::Always, RestartPolicy::Never][(seed % 2) as usize]);
        for i in 0..6u64 {
            let mut p = pending(&mut cache, i, &w, Time::ZERO);
            history.pods += 1;
            let node = NodeId(rng.random_range(0..2));
            let name = testkit::node_name(["a", "b"][node.index()]);
            let k = Kubelet::bind(&mut p, node, &name, NodeDownStyle::Waiting);
            cache.apply_pod(&p, Time::ZERO, &mut out);
            pods.push((p, k, 0usize));
        }
        let mut now = Time::ZERO;
        for _ in 0..60 {
            now = now + Span::from_secs(rng.random_range(1..120));
            let i = rng.random_range(0..pods.len());
            let (p, k, _) = &mut pods[i];
            // every state the stand-in writes is seen, as a watch shows them
            while k.next_timer(now, p) {
                cache.apply_pod(p, now, &mut out);
            }
            k.now = now;
            if rng.random_bool(0.2) {
                k.input(Input::Kill, p);
            }
            if rng.random_bool(0.1) {
                let condition = if k.lc.phase() == schedlab_core::behaviour::PodPhase::NodeDown {
                    NodeCondition::Ready
                } else {
                    NodeCondition::NotReady
                };
                k.node(
                    NodeHealth {
                        condition,
                        memory_pressure: false,
                    },
                    p,
                );
            }
            cache.apply_pod(p, now, &mut out);
            cache.expire(now);
            // the simulator's accounting, from every lifecycle's own events
            for (_, k, seen) in pods.iter_mut() {
                for e in &k.events[*seen..] {
                    if let Some(t) = Trouble::of(e) {
                        window.note(now, k.lc.node(), t, &mut expected_nodes);
                        t.add_to_history(&mut history);
                    }
                }
                *seen = k.events.len();
            }
            window.expire(now, &mut expected_nodes);
            for (n, expected) in expected_nodes.iter().enumerate() {
                let on: Vec<&Kubelet> = pods
                    .iter()
                    .map(|(_, k, _)| k)
                    .filter(|k| k.lc.node().index() == n && k.lc.ended().is_none())
                    .collect();
                let got = &cache.nodes()[n];
                let used = on.iter().fold(Resources::ZERO, |a, k| a + k.lc.usage());
                assert_eq!(got.pod_count as usize, on.len(), "seed {seed}");
                let requested = on.iter().fold(Resources::ZERO, |a, _| a + w.spec.requests);
                assert_eq!(got.requested, requested, "seed {seed}");
                assert_eq!(got.used, used, "seed {seed}");
                assert_eq!(got.recent, expected.recent, "seed {seed}");
                let listed = cache
                    .view(now)
                    .pods_on(got.id)
                    .iter()
                    .fold(Resources::ZERO, |a, b| a + b.requests);
                assert_eq!(
                    listed, requested,
                    "seed {seed}: the pod list follows the node's requests"
                );
            }
            assert_eq!(cache.history(WorkloadId(0)), history, "seed {seed}");
            let live = pods.iter().filter(|(_, k, _)| k.lc.ended().is_none()).count();
            assert_eq!(cache.bound() as usize, live, "seed {seed}");
        }
        restarts += history.restarts;
        failures += history.failures;
    }
    // the scripts restarted and failed containers, not only ran them
    assert!(restarts > 20 && failures > 20, "{restarts} {failures}");
}

fn nominate_shown(p: &mut core::Pod, node: Option<&str>) {
    p.status.get_or_insert_default().nominated_node_name = node.map(testkit::node_name);
}

fn with_priority(mut p: core::Pod, priority: i32) -> core::Pod {
    p.spec.as_mut().unwrap().priority = Some(priority);
    p
}

#[test]
fn a_nominated_pending_pod_keeps_its_room_until_it_binds_or_is_cleared() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    ready(&mut cache, &[(0, "a"), (1, "b")]);
    let w = testkit::workload(0, RestartPolicy::Always);
    let mut out = Vec::new();
    let mut p = with_priority(testkit::pod(&testkit::ident(1, 0, 1), &w), 7);
    let name = name_of(&p);
    nominate_shown(&mut p, Some("b"));
    cache.apply_pod(&p, Time(1), &mut out);
    let expected = Nomination {
        pod: PodId(1),
        node: NodeId(1),
        priority: 7,
        requests: w.spec.requests,
    };
    assert_eq!(cache.nominated(), [expected]);
    assert_eq!(cache.nomination(testkit::RUN, &name), Some(NodeId(1)));
    assert_eq!(cache.view(Time(1)).nominated, [expected]);
    // the same state again, and a move to another node
    cache.apply_pod(&p, Time(2), &mut out);
    assert_eq!(cache.nominated().len(), 1);
    nominate_shown(&mut p, Some("a"));
    cache.apply_pod(&p, Time(3), &mut out);
    assert_eq!(cache.nominated()[0].node, NodeId(0));
    // cleared (a preemptor of higher priority took the node)
    nominate_shown(&mut p, None);
    cache.apply_pod(&p, Time(4), &mut out);
    assert!(cache.nominated().is_empty());
    assert_eq!(cache.nomination(testkit::RUN, &name), None);
    // nominated again, then bound: a bound pod holds no nomination
    nominate_shown(&mut p, Some("b"));
    cache.apply_pod(&p, Time(5), &mut out);
    assert_eq!(cache.nominated().len(), 1);
    testkit::bind(&mut p, &testkit::node_name("b"));
    cache.apply_pod(&p, Time(6), &mut out);
    assert!(cache.nominated().is_empty(), "{:?}", cache.nominated());
    assert_eq!(cache.nomination(testkit::RUN, &name), None);
}

#[test]
fn a_nomination_goes_with_its_pod_and_waits_for_its_node() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    ready(&mut cache, &[(0, "a")]);
    let w = testkit::workload(0, RestartPolicy::Always);
    let mut out = Vec::new();
    let mut p = testkit::pod(&testkit::ident(1, 0, 1), &w);
    nominate_shown(&mut p, Some("late"));
    cache.apply_pod(&p, Time(1), &mut out);
    assert!(cache.nominated().is_empty(), "the node is not known yet");
    cache.apply_node(&testkit::node(3, "late"), Time(2), &mut out).unwrap();
    assert_eq!(cache.nominated().len(), 1);
    assert_eq!(cache.nominated()[0].node, NodeId(3));
    cache.delete_pod(testkit::RUN, &name_of(&p), Time(3));
    assert!(cache.nominated().is_empty());
    // a pod that ended while pending holds none either
    let mut q = testkit::pod(&testkit::ident(2, 0, 2), &w);
    nominate_shown(&mut q, Some("a"));
    cache.apply_pod(&q, Time(4), &mut out);
    assert_eq!(cache.nominated().len(), 1);
    q.status.as_mut().unwrap().phase = Some("Failed".into());
    cache.apply_pod(&q, Time(5), &mut out);
    assert!(cache.nominated().is_empty());
}

#[test]
fn the_loops_own_nomination_holds_until_the_object_shows_another() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    ready(&mut cache, &[(0, "a"), (1, "b")]);
    let w = testkit::workload(0, RestartPolicy::Always);
    let mut out = Vec::new();
    let mut p = testkit::pod(&testkit::ident(1, 0, 1), &w);
    let name = name_of(&p);
    cache.apply_pod(&p, Time(1), &mut out);
    cache.nominate(testkit::RUN, &name, Some(NodeId(1)));
    assert_eq!(cache.nomination(testkit::RUN, &name), Some(NodeId(1)));
    // an event older than the nomination's status write does not clear it
    cache.apply_pod(&p, Time(2), &mut out);
    assert_eq!(cache.nominated().len(), 1);
    // the write shows, then a clear by another preemptor
    nominate_shown(&mut p, Some("b"));
    cache.apply_pod(&p, Time(3), &mut out);
    nominate_shown(&mut p, None);
    cache.apply_pod(&p, Time(4), &mut out);
    assert!(cache.nominated().is_empty());
    // taken away by the loop itself
    cache.nominate(testkit::RUN, &name, Some(NodeId(0)));
    cache.nominate(testkit::RUN, &name, None);
    assert!(cache.nominated().is_empty());
    // an assumed bind ends it too
    cache.nominate(testkit::RUN, &name, Some(NodeId(0)));
    cache.assume(testkit::RUN, &name, NodeId(0), Time(5));
    assert!(cache.nominated().is_empty());
    cache.forget_assumed(testkit::RUN, &name, Time(6));
    assert!(cache.nominated().is_empty(), "a failed bind does not bring it back");
    // the loop's nominations of a pod that is not pending hold nothing
    cache.nominate(testkit::RUN, "nobody", Some(NodeId(0)));
    assert!(cache.nominated().is_empty());
}

#[test]
fn lower_priority_nominations_are_found_by_node() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    ready(&mut cache, &[(0, "a"), (1, "b")]);
    let w = testkit::workload(0, RestartPolicy::Always);
    let mut out = Vec::new();
    for (i, priority, node) in [(1, 1, "a"), (2, 5, "a"), (3, 1, "b"), (4, 9, "a")] {
        let mut p = with_priority(testkit::pod(&testkit::ident(i, 0, i as u32), &w), priority);
        nominate_shown(&mut p, Some(node));
        cache.apply_pod(&p, Time(1), &mut out);
    }
    let mut below: Vec<(&str, &str)> = cache.nominated_below(NodeId(0), 9);
    below.sort_unstable();
    let names = |ids: &[u64]| -> Vec<String> {
        ids.iter()
            .map(|&i| name_of(&testkit::pod(&testkit::ident(i, 0, i as u32), &w)))
            .collect()
    };
    let got: Vec<String> = below.iter().map(|(ns, n)| format!("{ns}/{n}")).collect();
    let want: Vec<String> = names(&[1, 2]).iter().map(|n| format!("{}/{n}", testkit::RUN)).collect();
    assert_eq!(got, want);
    assert!(cache.nominated_below(NodeId(0), 1).is_empty());
    assert_eq!(cache.nominated_below(NodeId(1), 2).len(), 1);
}

#[test]
fn bound_pods_are_listed_by_node_for_preemption() {
    let mut cache = ClusterCache::new(NodeIds::FromLabel);
    ready(&mut cache, &[(0, "a"), (1, "b")]);
    let w = testkit::workload(0, RestartPolicy::Always);
    let mut out = Vec::new();
    let mut low = with_priority(testkit::pod(&testkit::ident(1, 0, 1), &w), -5);
    let mut high = with_priority(testkit::pod(&testkit::ident(2, 0, 2), &w), 10);
    let waiting = with_priority(testkit::pod(&testkit::ident(3, 0, 3), &w), -9);
    testkit::bind(&mut low, &testkit::node_name("b"));
    testkit::bind(&mut high, &testkit::node_name("b"));
    cache.apply_pod(&low, Time(4), &mut out);
    cache.apply_pod(&high, Time(6), &mut out);
    cache.apply_pod(&waiting, Time(6), &mut out);
    let view = cache.view(Time(7));
    assert!(view.pods_on(NodeId(0)).is_empty());
    let on_b = view.pods_on(NodeId(1));
    assert_eq!(
        on_b,
        [
            BoundPod {
                id: PodId(1),
                priority: -5,
                requests: w.spec.requests,
                started: Time(4)
            },
            BoundPod {
                id: PodId(2),
                priority: 10,
                requests: w.spec.requests,
                started: Time(6)
            }
        ]
    );
    assert_eq!(view.lowest_bound_priority, Some(-5), "pending pods do not count");
    let (ns, name, pod) = cache.pod_on(NodeId(1), PodId(1)).unwrap();
    assert_eq!(
        (ns, name, pod.uid.as_str()),
        (testkit::RUN, name_of(&low).as_str(), "uid-1")
    );
    assert!(cache.pod_on(NodeId(0), PodId(1)).is_none(), "not on that node");
    assert!(cache.pod_on(NodeId(1), PodId(3)).is_none(), "pending");
    // being deleted gracefully: still on the node, and terminating
    assert!(!cache.terminating_below(NodeId(1), 0));
    low.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        jiff::Timestamp::UNIX_EPOCH,
    ));
    cache.apply_pod(&low, Time(8), &mut out);
    assert_eq!(cache.pods_by_node()[1].len(), 2);
    assert!(cache.terminating_below(NodeId(1), 0));
    assert!(
        !cache.terminating_below(NodeId(1), -5),
        "only pods below the priority count"
    );
    cache.delete_pod(testkit::RUN, &name_of(&low), Time(9));
    assert_eq!(cache.pods_by_node()[1].len(), 1);
    assert_eq!(cache.view(Time(9)).lowest_bound_priority, Some(10));
    assert!(cache.pod_on(NodeId(1), PodId(1)).is_none());
    // an assumed bind is listed where it is assumed, and leaves with it
    cache.assume(testkit::RUN, &name_of(&waiting), NodeId(0), Time(10));
    assert_eq!(cache.pods_by_node()[0][0].started, Time(10));
    assert_eq!(cache.view(Time(10)).lowest_bound_priority, Some(-9));
    cache.forget_assumed(testkit::RUN, &name_of(&waiting), Time(11));
    assert!(cache.pods_by_node()[0].is_empty());
    // the lists add up to what the nodes count
    for n in cache.nodes() {
        let listed = cache
            .view(Time(11))
            .pods_on(n.id)
            .iter()
            .fold(Resources::ZERO, |a, b| a + b.requests);
        assert_eq!(listed, n.requested);
    }
}
