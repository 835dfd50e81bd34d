//! The kube backend's player against a private local control plane: a small
//! hand-built timeline played with the real kube-scheduler (time scale 60).
//!
//! - Without an emulator: pods are bound and never start; a churn delete is
//!   followed by the slot's next pod, a delete for good is not; faults are
//!   counted as unsupported; samples and End are written; teardown leaves
//!   nothing labelled with the run and is idempotent.
//! - With the node emulator: containers start (with usage in the samples),
//!   a killed container restarts, a job completes, a failed node's pods are
//!   evicted and replaced, the node recovers; teardown also removes the
//!   emulator's Leases.
//! - On existing nodes (a label selector): pods stay on the selected nodes,
//!   which are numbered in name order, and teardown leaves them alone.
//! - On emulated nodes beside a node that is not the run's: the run's pods
//!   stay on the run's nodes.
//! - A play cancelled half-way returns Interrupted promptly, and teardown
//!   still removes everything (also after a play cancelled before it began).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test helpers: a failed API call fails the test

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{Api, ListParams};
use kube_backend::emulator::{Emulator, EmulatorOptions};
use kube_backend::run::{self, NodeSource, RunOptions, RunSummary, TeardownReport};
use kube_backend::{ApiClient, ClientOptions, KubeError, ScenarioClock, labels};
use provisioning::local::{LocalOptions, ScopedCluster};
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::record::DeleteCause;
use schedlab_core::record::ExitReason;
use schedlab_core::testing::{GI, MI, TimelineBuilder, pod, slot};
use schedlab_core::{
    Action, Dist, EventKind, NodeId, PodId, PodSlot, Record, RestartPolicy, TaintEffect, Timeline, Toleration,
    TolerationOperator,
};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const SCALE: f64 = 60.0;

/// 3 nodes; "web" (recreated by its owner), "batch" (priority 100) and
/// "low" (priority -5); a churn delete, a delete for good and two faults.
fn timeline() -> Timeline {
    let mut batch = pod(250, 256 * MI);
    batch.priority = 100;
    let mut low = pod(100, 128 * MI);
    low.priority = -5;
    TimelineBuilder::new(240.0)
        .sample_every(60)
        .nodes(3, 4000, 8 * GI)
        .workload("web", pod(500, 512 * MI), true)
        .workload("batch", batch, false)
        .workload("low", low, true)
        .create(0.0, 0, 0, 4)
        .create(30.0, 1, 0, 2)
        .create(30.0, 2, 0, 1)
        .at(
            120.0,
            Action::DeletePod {
                slot: slot(0, 1),
                recreate: true,
            },
        )
        .at(
            150.0,
            Action::DeletePod {
                slot: slot(1, 0),
                recreate: false,
            },
        )
        .at(160.0, Action::KillPod { slot: slot(0, 0) })
        .at(170.0, Action::FailNode { node: NodeId(1) })
        .build()
}

fn options(run: &str) -> RunOptions {
    RunOptions {
        run: run.to_string(),
        seed: 7,
        scheduler_name: "default-scheduler".into(),
        clock_scale: SCALE,
        nodes: NodeSource::Emulated,
        model: ModelConfig::default(),
        workload_image: None,
    }
}

async fn connect(plane: &ScopedCluster) -> ApiClient {
    ApiClient::connect(&ClientOptions {
        kubeconfig: Some(plane.admin_kubeconfig().to_path_buf()),
        qps: 200.0,
        burst: 400,
        ..Default::default()
    })
    .await
    .expect("the control plane answers")
}

/// Everything labelled with the run (or its namespace) still in the API.
async fn leftovers(api: &ApiClient, run: &str) -> Vec<String> {
    let client = api.client();
    let lp = ListParams::default().labels(&labels::run_selector(run));
    let mut left = Vec::new();
    for p in Api::<core::Pod>::all(client.clone()).list(&lp).await.unwrap() {
        left.push(format!("pod {}", p.metadata.name.unwrap_or_default()));
    }
    for n in Api::<core::Node>::all(client.clone()).list(&lp).await.unwrap() {
        left.push(format!("node {}", n.metadata.name.unwrap_or_default()));
    }
    let leases: Api<Lease> = Api::namespaced(client.clone(), labels::NODE_LEASE_NAMESPACE);
    for l in leases.list(&lp).await.unwrap() {
        left.push(format!("lease {}", l.metadata.name.unwrap_or_default()));
    }
    for c in Api::<PriorityClass>::all(client.clone()).list(&lp).await.unwrap() {
        left.push(format!("priority class {}", c.metadata.name.unwrap_or_default()));
    }
    if Api::<core::Namespace>::all(client)
        .get_opt(run)
        .await
        .unwrap()
        .is_some()
    {
        left.push(format!("namespace {run}"));
    }
    left
}

/// Tears down, checks that nothing is left, and that a second teardown
/// finds nothing.
async fn teardown_clean(api: &ApiClient, run: &str) -> (TeardownReport, f64) {
    let t0 = Instant::now();
    let report = run::teardown(api, run).await.expect("teardown");
    let secs = t0.elapsed().as_secs_f64();
    assert_eq!(leftovers(api, run).await, Vec::<String>::new(), "{report:?}");
    let again = run::teardown(api, run).await.expect("a second teardown");
    assert!(again.is_empty(), "{again:?}");
    (report, secs)
}

fn events(records: &[Record]) -> Vec<(u64, EventKind)> {
    records
        .iter()
        .filter_map(|r| match r {
            Record::Event(e) => Some((e.t.as_millis(), e.kind.clone())),
            _ => None,
        })
        .collect()
}

fn record_time(r: &Record) -> Option<u64> {
    match r {
        Record::Node { .. } | Record::Workload { .. } => None,
        Record::Event(e) => Some(e.t.as_millis()),
        Record::NodeSample(s) => Some(s.t.as_millis()),
        Record::ClusterSample(s) => Some(s.t.as_millis()),
        Record::End { t } => Some(t.as_millis()),
    }
}

/// The default scheduler binds every pod; churn recreates, a delete for
/// good does not; no container ever starts.
fn check_default_scheduler_run(t: &Timeline, records: &[Record], summary: &RunSummary) {
    // Node records first, in NodeId order
    for (i, spec) in t.nodes.iter().enumerate() {
        match &records[i] {
            Record::Node { node, spec: s } => assert_eq!((*node, s), (NodeId(i as u32), spec)),
            other => panic!("record {i} should be node {i}: {other:?}"),
        }
    }
    assert_eq!(records.last(), Some(&Record::End { t: t.end }));
    let times: Vec<u64> = records.iter().filter_map(record_time).collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "record times go back: {times:?}"
    );
    assert!(times.iter().all(|&ms| ms <= t.end.as_millis()));

    let evs = events(records);
    let mut created: BTreeMap<PodId, (u64, PodSlot)> = BTreeMap::new();
    let mut bound: BTreeMap<PodId, (u64, NodeId)> = BTreeMap::new();
    let mut deleted: BTreeMap<PodId, (u64, Option<NodeId>, DeleteCause)> = BTreeMap::new();
    for (at, e) in &evs {
        match e {
            EventKind::PodCreated { pod, slot, .. } => assert!(created.insert(*pod, (*at, *slot)).is_none()),
            EventKind::PodBound { pod, node } => assert!(bound.insert(*pod, (*at, *node)).is_none()),
            EventKind::PodDeleted { pod, node, cause } => assert!(deleted.insert(*pod, (*at, *node, *cause)).is_none()),
            EventKind::ContainerStarted { .. } | EventKind::ContainerExited { .. } => {
                panic!("no container starts without an emulator: {e:?}")
            }
            other => panic!("unexpected event {other:?}"),
        }
    }
    // 4 web + 2 batch + 1 low + web's replacement, ids in creation order
    assert_eq!(created.len(), 8, "{evs:#?}");
    assert_eq!(
        created.keys().copied().collect::<Vec<_>>(),
        (0..8).map(PodId).collect::<Vec<_>>()
    );
    for (pod, (at, _)) in &created {
        let (bound_at, node) = bound
            .get(pod)
            .unwrap_or_else(|| panic!("pod {pod:?} never bound: {evs:#?}"));
        assert!(bound_at >= at && node.0 < 3);
    }
    // the churn delete: web#1's first pod, then its replacement right after
    let (churned, _) = created.iter().find(|(_, (_, s))| *s == slot(0, 1)).unwrap();
    let (del_at, del_node, cause) = deleted[churned];
    assert_eq!(cause, DeleteCause::Churn);
    assert_eq!(del_node, Some(bound[churned].1), "a bound pod's delete names its node");
    assert!(del_at >= 120_000, "deleted at {del_at} ms, due at 120 s");
    let replacements: Vec<(&PodId, &(u64, PodSlot))> = created
        .iter()
        .filter(|(p, (_, s))| *s == slot(0, 1) && *p != churned)
        .collect();
    assert_eq!(replacements.len(), 1, "{evs:#?}");
    assert!(replacements[0].1.0 >= del_at);
    // the delete for good: batch#0, no replacement
    let (gone, _) = created.iter().find(|(_, (_, s))| *s == slot(1, 0)).unwrap();
    assert_eq!(deleted[gone].2, DeleteCause::Scenario);
    assert!(deleted[gone].0 >= 150_000);
    assert_eq!(created.values().filter(|(_, s)| *s == slot(1, 0)).count(), 1);
    assert_eq!(deleted.len(), 2);

    // samples every 60 s from 0 to the end, the last with 6 pods bound
    let samples: Vec<&schedlab_core::record::ClusterSample> = records
        .iter()
        .filter_map(|r| match r {
            Record::ClusterSample(s) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(
        samples.iter().map(|s| s.t.as_millis()).collect::<Vec<_>>(),
        vec![0, 60_000, 120_000, 180_000, 240_000]
    );
    let last = samples[samples.len() - 1];
    assert_eq!((last.pending, last.bound, last.nodes_ready), (0, 6, 3), "{last:?}");
    // web: 3 first pods and the replacement; batch#1; low
    let requested: u64 = 4 * 500 + 250 + 100;
    assert_eq!(last.requested.cpu_milli, requested, "{last:?}");
    assert_eq!(last.used.cpu_milli, 0, "nothing runs without an emulator");
    let node_samples = records.iter().filter(|r| matches!(r, Record::NodeSample(_))).count();
    assert_eq!(node_samples, 5 * 3);

    assert_eq!(summary.pods_created, 8);
    assert_eq!(summary.deletes, 2);
    assert_eq!((summary.faults_sent, summary.faults_unsupported), (0, 2));
    assert_eq!(summary.records, records.len() as u64);
}

async fn default_scheduler_case(api: &ApiClient) {
    let t = timeline();
    let run_id = run::new_run_id("kube-run");
    let opts = options(&run_id);
    let prepared = run::setup(api, &t, &opts).await.expect("setup");
    assert_eq!(prepared.node_names().len(), 3);
    // the objects exist until teardown: nodes, classes, pods (the deleted
    // ones Terminating: no kubelet finishes them)
    let (played, records, pods) = play_and_list(api, &prepared, &t, &opts).await;
    let terminating = pods.iter().filter(|p| p.metadata.deletion_timestamp.is_some()).count();
    let (report, teardown_secs) = teardown_clean(api, &run_id).await;
    let summary = played.expect("the run plays to its end");
    eprintln!(
        "default scheduler run: setup {:.1}s, play {:.1}s wall (scenario {}s at x{SCALE}), teardown {teardown_secs:.1}s, {summary:?}, {report:?}",
        summary.setup_seconds,
        summary.wall_seconds,
        t.end.as_secs_f64()
    );
    check_default_scheduler_run(&t, &records, &summary);
    assert_eq!((pods.len(), terminating), (8, 2));
    assert_eq!(
        report,
        TeardownReport {
            pods: 8,
            leases: 0,
            nodes: 3,
            priority_classes: 2,
            namespace: true,
            namespace_finalized: true,
        }
    );
}

/// 3 nodes of 4000m; 6 "web" pods of 1500m (two fit a node, so each node
/// gets two) that tolerate an unreachable node for 30 s; a "job" that
/// completes after a minute. A kill, a churn delete, node 0 failing at 120 s
/// and recovering at 240 s.
fn emulated_timeline() -> Timeline {
    let mut web = pod(1500, 512 * MI);
    web.tolerations = vec![Toleration {
        key: "node.kubernetes.io/unreachable".into(),
        operator: TolerationOperator::Exists,
        value: None,
        effect: Some(TaintEffect::NoExecute),
        toleration_seconds: Some(30),
    }];
    let mut job = pod(250, 256 * MI);
    job.restart_policy = RestartPolicy::OnFailure;
    job.behaviour.run_seconds = Some(Dist::Const { value: 60.0 });
    TimelineBuilder::new(360.0)
        .sample_every(60)
        .nodes(3, 4000, 8 * GI)
        .workload("web", web, true)
        .workload("job", job, true)
        .create(0.0, 0, 0, 6)
        .create(0.0, 1, 0, 1)
        .at(60.0, Action::KillPod { slot: slot(0, 0) })
        .at(
            90.0,
            Action::DeletePod {
                slot: slot(0, 1),
                recreate: true,
            },
        )
        .at(120.0, Action::FailNode { node: NodeId(0) })
        .at(240.0, Action::RecoverNode { node: NodeId(0) })
        .build()
}

async fn emulator_case(api: &ApiClient) {
    let t = emulated_timeline();
    let run_id = run::new_run_id("kube-emu");
    let opts = options(&run_id);
    let prepared = run::setup(api, &t, &opts).await.expect("setup");
    let clock = ScenarioClock::starting_now(SCALE).unwrap();
    let cancel = CancellationToken::new();
    let emulator = Emulator::start(
        api.clone(),
        EmulatorOptions::new(&run_id, opts.model.clone(), clock),
        cancel.clone(),
    )
    .await
    .expect("the emulator starts");
    assert_eq!(emulator.nodes(), 3);
    let mut records: Vec<Record> = Vec::new();
    let played = run::play(
        api,
        &prepared,
        &t,
        &opts,
        clock,
        Some(emulator.commands()),
        &mut records,
        cancel.clone(),
    )
    .await;
    let stats = emulator.stop().await;
    let (report, teardown_secs) = teardown_clean(api, &run_id).await;
    let summary = played.expect("the run plays to its end");
    eprintln!(
        "emulated run: play {:.1}s wall, teardown {teardown_secs:.1}s, {summary:?}, {stats:?}, {report:?}",
        summary.wall_seconds
    );
    stats.expect("the emulator stops cleanly");
    assert_eq!((report.nodes, report.leases), (3, 3), "{report:?}");
    assert_eq!((summary.faults_sent, summary.faults_unsupported), (3, 0));
    assert_eq!(records.last(), Some(&Record::End { t: t.end }));
    let times: Vec<u64> = records.iter().filter_map(record_time).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "record times go back");

    let evs = events(&records);
    let of =
        |pod: PodId| -> Vec<(u64, EventKind)> { evs.iter().filter(|(_, e)| e.pod() == Some(pod)).cloned().collect() };
    let created: BTreeMap<PodId, PodSlot> = evs
        .iter()
        .filter_map(|(_, e)| match e {
            EventKind::PodCreated { pod, slot, .. } => Some((*pod, *slot)),
            _ => None,
        })
        .collect();
    let bound: BTreeMap<PodId, NodeId> = evs
        .iter()
        .filter_map(|(_, e)| match e {
            EventKind::PodBound { pod, node } => Some((*pod, *node)),
            _ => None,
        })
        .collect();
    // every bound pod's container started, on its node
    for (pod, node) in &bound {
        let started = of(*pod).into_iter().find_map(|(_, e)| match e {
            EventKind::ContainerStarted {
                node: n,
                restart_count: 0,
                usage,
                ..
            } => Some((n, usage)),
            _ => None,
        });
        let (n, usage) = started.unwrap_or_else(|| panic!("pod {pod:?} bound, never started: {:#?}", of(*pod)));
        assert_eq!(n, *node);
        assert!(usage.cpu_milli > 0, "usage comes from the emulator's Usage condition");
    }
    // two web pods per node at first
    let first_web: Vec<NodeId> = (0..6).map(|i| bound[&PodId(i)]).collect();
    for n in 0..3 {
        assert_eq!(first_web.iter().filter(|x| x.0 == n).count(), 2, "{first_web:?}");
    }
    // the kill: an Error exit, then a restart
    let web0 = of(PodId(0));
    let exit = web0
        .iter()
        .position(|(_, e)| {
            matches!(
                e,
                EventKind::ContainerExited {
                    reason: ExitReason::Error,
                    ..
                }
            )
        })
        .unwrap_or_else(|| panic!("web#0 was killed: {web0:#?}"));
    assert!(web0[exit].0 >= 60_000);
    assert!(
        web0[exit..]
            .iter()
            .any(|(_, e)| matches!(e, EventKind::ContainerStarted { restart_count: 1, .. })),
        "{web0:#?}"
    );
    // the job completed and was not replaced
    let job = created
        .iter()
        .find(|(_, s)| **s == slot(1, 0))
        .map(|(p, _)| *p)
        .unwrap();
    assert!(
        of(job).iter().any(|(_, e)| matches!(e, EventKind::PodSucceeded { .. })),
        "{:#?}",
        of(job)
    );
    assert_eq!(created.values().filter(|s| **s == slot(1, 0)).count(), 1);
    // the churn delete was recorded and replaced
    assert!(evs.iter().any(|(_, e)| matches!(
        e,
        EventKind::PodDeleted {
            pod: PodId(1),
            cause: DeleteCause::Churn,
            ..
        }
    )));
    // (its replacement may be evicted and replaced in turn, below)
    assert!(created.iter().any(|(p, s)| *s == slot(0, 1) && p.0 > 1));
    // node 0 failed and recovered; the web pods on it then were evicted
    // after their 30 s toleration (counted from the FailNode action: the
    // record comes when the watch shows the node's new status) and replaced
    let failed_at = evs
        .iter()
        .find_map(|(at, e)| matches!(e, EventKind::NodeFailed { node: NodeId(0) }).then_some(*at))
        .expect("node 0 failed");
    assert!(failed_at >= 120_000);
    assert!(
        evs.iter()
            .any(|(at, e)| matches!(e, EventKind::NodeRecovered { node: NodeId(0) }) && *at > failed_at)
    );
    let mut on_node0: BTreeSet<PodId> = BTreeSet::new();
    for (at, e) in evs.iter().filter(|(at, _)| *at < failed_at) {
        match e {
            EventKind::PodBound { pod, node: NodeId(0) } => {
                on_node0.insert(*pod);
            }
            EventKind::PodDeleted { pod, .. } | EventKind::PodSucceeded { pod, .. } => {
                on_node0.remove(pod);
            }
            _ => assert!(*at < failed_at),
        }
    }
    let evicted: BTreeMap<PodId, u64> = evs
        .iter()
        .filter_map(|(at, e)| match e {
            EventKind::PodEvicted { pod, node } => {
                assert_eq!(*node, NodeId(0));
                Some((*pod, *at))
            }
            _ => None,
        })
        .collect();
    assert!(!on_node0.is_empty());
    assert_eq!(evicted.keys().copied().collect::<BTreeSet<_>>(), on_node0, "{evs:#?}");
    for (pod, at) in &evicted {
        assert!(*at >= 150_000, "evicted at {at} ms, due at 150 s");
        let s = created[pod];
        assert!(
            created.iter().any(|(p, s2)| *s2 == s && p > pod),
            "evicted {pod:?} of {s:?} was replaced"
        );
    }
    // samples see the containers' usage
    let used = records
        .iter()
        .any(|r| matches!(r, Record::ClusterSample(c) if c.used.cpu_milli > 0));
    assert!(used);
}

/// A node object that is not any run's (no `schedlab.io/` label), with
/// `labels` beside its own.
fn foreign_node(name: &str, cpu_milli: u64, memory_bytes: u64, labels: &[(&str, &str)]) -> core::Node {
    let spec = schedlab_core::testing::node(name, cpu_milli, memory_bytes, 0.5);
    let mut node = kube_backend::objects::node_object("unused", NodeId(0), &spec, false);
    let node_labels = node.metadata.labels.as_mut().unwrap();
    node_labels.retain(|k, _| !k.starts_with("schedlab.io/"));
    node_labels.extend(labels.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    node.metadata.name = Some(spec.name.clone());
    node
}

/// Plays `t` as [`run::setup`] prepared it, without an emulator, and lists
/// the run's pods before teardown.
async fn play_and_list(
    api: &ApiClient,
    prepared: &run::Prepared,
    t: &Timeline,
    opts: &RunOptions,
) -> (Result<RunSummary, KubeError>, Vec<Record>, Vec<core::Pod>) {
    let clock = ScenarioClock::starting_now(SCALE).unwrap();
    let mut records: Vec<Record> = Vec::new();
    let played = run::play(
        api,
        prepared,
        t,
        opts,
        clock,
        None,
        &mut records,
        CancellationToken::new(),
    )
    .await;
    let pods = Api::<core::Pod>::namespaced(api.client(), &opts.run)
        .list(&ListParams::default())
        .await
        .unwrap();
    (played, records, pods.items)
}

/// Nodes that are not the run's: two matched by the selector (created in
/// reverse name order), one not.
async fn existing_nodes_case(api: &ApiClient) {
    let tag = run::new_run_id("pool");
    let nodes_api: Api<core::Node> = Api::all(api.client());
    let mut names = Vec::new();
    for (name, selected) in [("zz-b", true), ("zz-a", true), ("zz-c", false)] {
        let name = format!("{tag}-{name}");
        let pool: &[(&str, &str)] = if selected { &[("test-pool", &tag)] } else { &[] };
        nodes_api
            .create(&Default::default(), &foreign_node(&name, 2000, 4 * GI, pool))
            .await
            .unwrap();
        names.push(name);
    }
    let t = TimelineBuilder::new(60.0)
        .sample_every(60)
        .nodes(1, 1000, GI)
        .workload("web", pod(300, 128 * MI), false)
        .create(0.0, 0, 0, 5)
        .at(30.0, Action::FailNode { node: NodeId(5) })
        .build();
    let run_id = run::new_run_id("kube-existing");
    let mut opts = options(&run_id);
    opts.nodes = NodeSource::Existing {
        selector: format!("test-pool={tag}"),
    };
    let prepared = run::setup(api, &t, &opts).await.expect("setup");
    assert_eq!(
        prepared.node_names(),
        [format!("{tag}-zz-a"), format!("{tag}-zz-b")],
        "the selected nodes, in name order"
    );
    let (played, records, pods) = play_and_list(api, &prepared, &t, &opts).await;
    let (report, _) = teardown_clean(api, &run_id).await;
    let summary = played.expect("the run plays");
    // the nodes were not the run's: still there
    for name in &names {
        assert!(nodes_api.get_opt(name).await.unwrap().is_some(), "{name} was removed");
        nodes_api.delete(name, &Default::default()).await.unwrap();
    }
    assert_eq!((report.nodes, report.pods), (0, 5), "{report:?}");
    assert_eq!(summary.faults_unsupported, 1);
    let node_records: Vec<(NodeId, String)> = records
        .iter()
        .filter_map(|r| match r {
            Record::Node { node, spec } => Some((*node, spec.name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        node_records,
        vec![(NodeId(0), names[1].clone()), (NodeId(1), names[0].clone())]
    );
    let bound: Vec<NodeId> = events(&records)
        .into_iter()
        .filter_map(|(_, e)| match e {
            EventKind::PodBound { node, .. } => Some(node),
            _ => None,
        })
        .collect();
    assert_eq!(bound.len(), 5);
    assert!(bound.iter().all(|n| n.0 < 2), "{bound:?}");
    for p in &pods {
        let on = p.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
        assert!(on == names[0] || on == names[1], "pod on {on}");
    }
}

/// A node that is not the run's, with far more room than the run's own
/// (kube-scheduler's LeastAllocated would prefer it): a plane's real node, a
/// node of another run or of a kubeconfig's cluster. The run's pods stay on
/// the run's emulated nodes.
async fn foreign_node_case(api: &ApiClient) {
    let nodes_api: Api<core::Node> = Api::all(api.client());
    let foreign = run::new_run_id("foreign");
    nodes_api
        .create(&Default::default(), &foreign_node(&foreign, 64_000, 256 * GI, &[]))
        .await
        .unwrap();
    let t = timeline();
    let run_id = run::new_run_id("kube-foreign");
    let opts = options(&run_id);
    let prepared = run::setup(api, &t, &opts).await.expect("setup");
    let (played, _, pods) = play_and_list(api, &prepared, &t, &opts).await;
    teardown_clean(api, &run_id).await;
    nodes_api.delete(&foreign, &Default::default()).await.unwrap();
    played.expect("the run plays to its end");
    let placed: Vec<String> = pods
        .iter()
        .filter_map(|p| p.spec.as_ref().and_then(|s| s.node_name.clone()))
        .collect();
    assert_eq!(placed.len(), pods.len(), "every pod placed: {placed:?}");
    for on in &placed {
        assert!(prepared.node_names().contains(on), "a pod of the run on {on}");
    }
}

async fn cancelled_case(api: &ApiClient) {
    let mut t = timeline();
    t.end = schedlab_core::testing::secs(3600.0);
    let run_id = run::new_run_id("kube-cancel");
    let opts = options(&run_id);
    let prepared = run::setup(api, &t, &opts).await.expect("setup");
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    let started = Instant::now();
    // the cancel comes 3 s (3 scenario minutes) into the run
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(3)).await;
        stop.cancel();
        Instant::now()
    });
    let mut records: Vec<Record> = Vec::new();
    let clock = ScenarioClock::starting_now(SCALE).unwrap();
    let played = run::play(api, &prepared, &t, &opts, clock, None, &mut records, cancel).await;
    let returned = Instant::now();
    let cancelled_at = stopper.await.unwrap();
    assert!(matches!(played, Err(KubeError::Interrupted)), "{played:?}");
    let lag = returned.duration_since(cancelled_at);
    assert!(lag < Duration::from_millis(500), "play took {lag:?} to stop");
    assert!(!records.iter().any(|r| matches!(r, Record::End { .. })));
    let created = events(&records)
        .iter()
        .filter(|(_, e)| matches!(e, EventKind::PodCreated { .. }))
        .count();
    assert!(
        created >= 4,
        "the first pods were created before the cancel: {records:#?}"
    );
    let (report, teardown_secs) = teardown_clean(api, &run_id).await;
    eprintln!(
        "cancelled after {:.1}s (stopped {lag:?} after the cancel), teardown {teardown_secs:.1}s: {report:?}",
        cancelled_at.duration_since(started).as_secs_f64()
    );
    assert_eq!(report.nodes, 3);
    // a create in flight at the cancel may have gone through unrecorded
    assert!(report.pods as usize >= created, "{report:?}");
    assert!(report.namespace);

    // cancelled before the timeline began: no pod, the setup's objects go
    let run_id = run::new_run_id("kube-cancel");
    let opts = options(&run_id);
    let prepared = run::setup(api, &t, &opts).await.expect("setup");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let clock = ScenarioClock::starting_now(SCALE).unwrap();
    let played = run::play(api, &prepared, &t, &opts, clock, None, &mut Vec::new(), cancel).await;
    assert!(matches!(played, Err(KubeError::Interrupted)), "{played:?}");
    let (report, _) = teardown_clean(api, &run_id).await;
    assert_eq!(
        (report.pods, report.nodes, report.priority_classes),
        (0, 3, 2),
        "{report:?}"
    );
}

async fn bad_input_case(api: &ApiClient) {
    let t = timeline();
    let mut opts = options("Not_A_Label");
    let err = run::setup(api, &t, &opts).await.unwrap_err();
    assert!(err.to_string().contains("Not_A_Label"), "{err}");
    opts.run = run::new_run_id("kube-bad");
    opts.nodes = NodeSource::Existing {
        selector: "pool in (a".into(),
    };
    let err = run::setup(api, &t, &opts).await.unwrap_err();
    assert!(err.to_string().contains("pool in (a"), "{err}");
    // nothing was created for either
    assert!(run::teardown(api, &opts.run).await.unwrap().is_empty());
    // a run set up for one id does not play another
    opts.nodes = NodeSource::Emulated;
    let prepared = run::setup(api, &t, &opts).await.unwrap();
    let other = options(&run::new_run_id("kube-bad"));
    let clock = ScenarioClock::starting_now(SCALE).unwrap();
    let err = run::play(
        api,
        &prepared,
        &t,
        &other,
        clock,
        None,
        &mut Vec::new(),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains(&opts.run), "{err}");
    teardown_clean(api, &opts.run).await;
}

#[test]
fn plays_a_timeline_against_a_local_control_plane_and_tears_down() {
    let t0 = Instant::now();
    let plane = ScopedCluster::up(&LocalOptions::private("kube-run").unwrap()).unwrap();
    eprintln!("control plane up in {:.1}s", t0.elapsed().as_secs_f64());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let api = connect(&plane).await;
        bad_input_case(&api).await;
        default_scheduler_case(&api).await;
        emulator_case(&api).await;
        existing_nodes_case(&api).await;
        foreign_node_case(&api).await;
        cancelled_case(&api).await;
        // nothing of any run is left
        let lp = ListParams::default().labels(labels::RUN);
        let nodes = Api::<core::Node>::all(api.client()).list(&lp).await.unwrap();
        let names: BTreeSet<String> = nodes.items.into_iter().filter_map(|n| n.metadata.name).collect();
        assert!(names.is_empty(), "{names:?}");
    });
    eprintln!("whole test {:.1}s", t0.elapsed().as_secs_f64());
}
