//! The twin test: one pod sequence played against the real kube-scheduler of
//! a private local control plane (v1.20) and, on the same node states,
//! through the simulator's `default` re-implementation.
//!
//! The cluster is heterogeneous and under 100 nodes, so kube-scheduler
//! examines every node (`numFeasibleNodesToFind`): the built-in scenarios'
//! pools (`churn` and `pressure`: general, spot with a NoSchedule taint,
//! small, large) plus variations (cpu-heavy, memory-heavy, tiny with a low
//! pod limit, PreferNoSchedule taints, a NoExecute taint, a cordoned node, an
//! extra-large node). Pods are the scenarios' templates plus best-effort,
//! single-resource, lopsided and tolerate-everything pods, with jittered
//! requests, several priorities and tolerations. They are created one at a
//! time with `schedulerName: default-scheduler`; each creation waits for the
//! binding (or the Unschedulable condition) through a watch, so every
//! decision sees exactly the pods bound before it. For each pod the
//! re-implementation evaluates the same node states (requests and pod counts
//! of the pods bound so far) and the test counts how often the real choice is
//! in its top-score set (an unschedulable pod agrees when both find no node).
//! The node states are kept as a backend keeps them: requested sums,
//! kube-scheduler's `NonZeroRequested` sums and pod counts of the bound pods.
//! Nodes never run anything: there is no emulator, and node objects report
//! Ready from their status.
//!
//! The rate is reported for each release's rules; the one
//! `DefaultScheduler::new` follows (v1.20, the release of this control plane)
//! must reach 0.99. Top-score sets are often ties among identical nodes, so
//! the report also gives the agreement a uniform pick among the feasible
//! nodes would have had by chance.
//!
//! Pods the re-implementation finds no room for are created only when no
//! bound pod has a lower priority, so the real scheduler has nothing to
//! preempt and the node states stay the pods bound so far.
//!
//! A second sequence (module `preemption`) starts from the same nodes
//! emptied: it fills them with pods of priorities 0, 100 and 500, each with
//! a distinct `status.startTime` written as a kubelet would, then creates
//! pods of priority 1000 that fit nowhere. For each, the real scheduler's
//! nominated node and the pods it deleted are compared with
//! DefaultPreemption's re-implementation on the same node states and pod
//! lists: the nominated node must be among the candidates its choice ties
//! between, with the same victims.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{Namespace, Node, Pod};
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::watcher::{self, Event};
use kube_backend::{ApiClient, ClientOptions, objects};
use provisioning::local::{LocalOptions, ScopedCluster};
use rand::Rng;
use rand::seq::IndexedRandom;
use schedlab_core::node::{NodeId, NodeSpec, Taint, TaintEffect};
use schedlab_core::pod::{PodId, PodSlot, PodSpec, Toleration, TolerationOperator, WorkloadId};
use schedlab_core::resources::Resources;
use schedlab_core::rng::{purpose, stream};
use schedlab_core::testing::NodeSpecChanges;
use schedlab_core::time::Time;
use schedlab_core::timeline::Workload;
use schedlab_core::{ClusterView, NodeState};
use scheduler::DefaultScheduler;
use scheduler::profile::Evaluation;
use scheduler::release::Release;
use scheduler::scores::non_zero_requests;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

#[path = "twin_local/preemption.rs"]
mod preemption;

type Error = Box<dyn std::error::Error + Send + Sync>;

const RUN: &str = "twin";
const SEED: u64 = 20;
const PODS: usize = 800;
/// How long one pod may take to be bound or marked unschedulable.
const DECISION_TIMEOUT: Duration = Duration::from_secs(20);
const MI: u64 = 1 << 20;
const GI: u64 = 1 << 30;

/// The releases the re-implementation is evaluated with; the one
/// `DefaultScheduler::new` follows is asserted, the other reported.
const RELEASES: [Release; 2] = [Release::V1_20, Release::V1_33];

fn variant(name: &str, cpu_milli: u64, memory: u64, max_pods: u32, taints: Vec<Taint>) -> NodeSpec {
    NodeSpec {
        max_pods,
        taints,
        ..schedlab_core::testing::node(name, cpu_milli, memory, 0.1).pool("variant", "custom")
    }
}

fn taint(key: &str, value: Option<&str>, effect: TaintEffect) -> Taint {
    Taint {
        key: key.into(),
        value: value.map(Into::into),
        effect,
    }
}

fn exists(key: &str, effect: Option<TaintEffect>) -> Toleration {
    Toleration {
        key: key.into(),
        operator: TolerationOperator::Exists,
        value: None,
        effect,
        toleration_seconds: None,
    }
}

/// The nodes: the scenarios' pools and the variations; the names of cordoned ones.
fn node_specs() -> Result<(Vec<NodeSpec>, BTreeSet<String>), Error> {
    let mut out = Vec::new();
    for (scenario, nodes, prefix) in [("churn", 16, "c"), ("pressure", 24, "p")] {
        let s = workloads::load(scenario, &[format!("nodes={nodes}")])?;
        for mut spec in s.expand(SEED).nodes {
            spec.name = format!("{prefix}-{}", spec.name);
            out.push(spec);
        }
    }
    let maintenance = || taint("maintenance", None, TaintEffect::PreferNoSchedule);
    out.extend([
        variant("highcpu-0", 15_800, 14 * GI, 110, vec![]),
        variant("highcpu-1", 15_800, 14 * GI, 110, vec![]),
        variant("highmem-0", 3_800, 60 * GI, 110, vec![]),
        variant("highmem-1", 3_800, 60 * GI, 110, vec![]),
        variant("tiny-0", 1_900, 3 * GI, 5, vec![]),
        variant("tiny-1", 1_900, 3 * GI, 5, vec![]),
        variant("soft-0", 7_850, 29 * GI, 110, vec![maintenance()]),
        variant(
            "soft-1",
            7_850,
            29 * GI,
            110,
            vec![
                maintenance(),
                taint("old-kernel", Some("5.4"), TaintEffect::PreferNoSchedule),
            ],
        ),
        variant(
            "gpu-0",
            7_850,
            29 * GI,
            110,
            vec![taint("nvidia.com/gpu", Some("true"), TaintEffect::NoExecute)],
        ),
        variant("cordoned-0", 7_850, 29 * GI, 110, vec![]),
        variant("xl-0", 31_800, 120 * GI, 110, vec![]),
    ]);
    let cordoned = BTreeSet::from(["cordoned-0".to_string()]);
    Ok((out, cordoned))
}

/// Pod shapes: the scenarios' templates and the variations.
fn pod_shapes() -> Result<Vec<Workload>, Error> {
    let mut shapes = Vec::new();
    for scenario in ["churn", "pressure"] {
        let s = workloads::load(scenario, &["nodes=8".to_string()])?;
        shapes.extend(s.expand(SEED).workloads);
    }
    let template = shapes
        .first()
        .map(|w| w.spec.clone())
        .ok_or("the scenarios have workloads")?;
    let shape = |name: &str, requests: Resources, tolerations: Vec<Toleration>| Workload {
        id: WorkloadId(0),
        name: name.to_string(),
        spec: PodSpec {
            requests,
            limits: None,
            priority: 0,
            tolerations,
            ..template.clone()
        },
        recreate: false,
        slot_specs: Vec::new(),
    };
    let spot = exists("cloud.google.com/gke-spot", Some(TaintEffect::NoSchedule));
    shapes.extend([
        shape("besteffort", Resources::ZERO, vec![]),
        shape("memonly", Resources::new(0, 768 * MI), vec![]),
        shape("cpuonly", Resources::new(300, 0), vec![spot.clone()]),
        shape("cpuheavy", Resources::new(2_000, 512 * MI), vec![]),
        shape("memheavy", Resources::new(250, 6 * GI), vec![spot.clone()]),
        shape("anywhere", Resources::new(400, GI), vec![exists("", None)]),
        shape(
            "soft-ok",
            Resources::new(500, GI),
            vec![exists("maintenance", Some(TaintEffect::PreferNoSchedule))],
        ),
        shape(
            "gpu",
            Resources::new(1_000, 2 * GI),
            vec![
                Toleration {
                    key: "nvidia.com/gpu".into(),
                    operator: TolerationOperator::Equal,
                    value: Some("true".into()),
                    effect: Some(TaintEffect::NoExecute),
                    toleration_seconds: None,
                },
                spot,
            ],
        ),
    ]);
    for (i, w) in shapes.iter_mut().enumerate() {
        w.id = WorkloadId(i as u32);
        w.spec.scheduler_name = "default-scheduler".into();
    }
    Ok(shapes)
}

/// `r` scaled by `f`, to whole millicores and MiB; zero stays zero.
fn scale(r: Resources, f: f64) -> Resources {
    let cpu = (r.cpu_milli as f64 * f).round() as u64;
    let mem = ((r.memory_bytes as f64 * f) / MI as f64).round() as u64 * MI;
    Resources::new(
        if r.cpu_milli == 0 { 0 } else { cpu.max(1) },
        if r.memory_bytes == 0 { 0 } else { mem.max(MI) },
    )
}

/// The `i`-th pod: a shape with requests (and limits) jittered by 0.5–1.6
/// and, for shapes without a priority of their own, a drawn priority.
fn draw_pod(shapes: &[Workload], rng: &mut impl Rng, i: usize) -> Result<Workload, Error> {
    let mut w = shapes.choose(rng).ok_or("no shapes")?.clone();
    let f = rng.random_range(0.5..1.6);
    w.spec.requests = scale(w.spec.requests, f);
    w.spec.limits = w.spec.limits.map(|l| scale(l, f));
    if w.spec.priority == 0 {
        w.spec.priority = *[0, 0, 0, 100, 1000].choose(rng).ok_or("no priorities")?;
    }
    w.name = format!("{}-{i}", w.name);
    Ok(w)
}

/// What the real kube-scheduler did with a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Bound(String),
    Unschedulable(String),
}

fn outcome_of(pod: &Pod) -> Option<Outcome> {
    if let Some(node) = objects::pod_node_name(pod) {
        return Some(Outcome::Bound(node.to_string()));
    }
    let cond = pod
        .status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == "PodScheduled" && c.status == "False")?;
    (cond.reason.as_deref() == Some("Unschedulable"))
        .then(|| Outcome::Unschedulable(cond.message.clone().unwrap_or_default()))
}

/// What the real kube-scheduler did with pod `name`, from the pod watch.
async fn decision_of<S>(events: &mut S, name: &str) -> Result<Outcome, Error>
where
    S: futures::Stream<Item = Result<Event<Pod>, watcher::Error>> + Unpin,
{
    tokio::time::timeout(DECISION_TIMEOUT, async {
        while let Some(event) = events.try_next().await? {
            if let Event::Apply(p) | Event::InitApply(p) = event
                && p.metadata.name.as_deref() == Some(name)
                && let Some(outcome) = outcome_of(&p)
            {
                return Ok::<_, Error>(outcome);
            }
        }
        Err("the pod watch ended".into())
    })
    .await
    .map_err(|_| format!("{name}: neither bound nor unschedulable after {DECISION_TIMEOUT:?}"))?
}

/// One disagreement, for the report.
#[derive(Debug)]
struct Miss {
    pod: String,
    requests: Resources,
    real: Outcome,
    top: Vec<String>,
    /// a filter disagreement (the real choice infeasible here, or one side
    /// finding no node) rather than a score one
    filter: bool,
    detail: String,
}

#[derive(Debug, Default)]
struct Tally {
    agree: usize,
    misses: Vec<Miss>,
    /// unschedulable pods whose failure message matched word for word
    messages_equal: usize,
    messages_compared: usize,
}

#[derive(Debug, Default)]
struct Report {
    sample: usize,
    bound: usize,
    unschedulable: usize,
    skipped: usize,
    ties: usize,
    /// sum over decisions of |top set| / |feasible| for the asserted rules:
    /// the expected agreement of a uniform pick among feasible nodes
    chance: f64,
    tallies: BTreeMap<&'static str, Tally>,
    seconds: f64,
}

fn view(nodes: &[NodeState]) -> ClusterView<'_> {
    ClusterView::of_nodes(Time::ZERO, nodes, 1, nodes.iter().map(|n| n.pod_count).sum())
}

fn names(nodes: &[NodeState], idx: &[usize]) -> Vec<String> {
    idx.iter().map(|&i| nodes[i].spec.name.clone()).collect()
}

/// Compares one decision of the real scheduler with an evaluation.
fn judge(
    tally: &mut Tally,
    eval: &Evaluation,
    spec: &PodSpec,
    pod: &str,
    real: &Outcome,
    nodes: &[NodeState],
    index: &BTreeMap<String, usize>,
) {
    let top = eval.top_score_set();
    let agrees = match real {
        Outcome::Bound(n) => index.get(n).is_some_and(|i| top.contains(i)),
        Outcome::Unschedulable(message) => {
            tally.messages_compared += 1;
            if eval.unschedulable.as_deref() == Some(message.as_str()) {
                tally.messages_equal += 1;
            }
            top.is_empty()
        }
    };
    if agrees {
        tally.agree += 1;
        return;
    }
    let best = top.first().and_then(|&t| eval.scores_of(t));
    let (filter, detail) = match real {
        Outcome::Bound(n) => match index.get(n).and_then(|&i| eval.scores_of(i)) {
            Some(chosen) => (false, format!("chosen {chosen:?} vs top {best:?}")),
            None => (
                !index.get(n).is_some_and(|i| eval.feasible.contains(i)),
                format!(
                    "chosen node feasible here: {}",
                    index.get(n).is_some_and(|i| eval.feasible.contains(i))
                ),
            ),
        },
        Outcome::Unschedulable(message) => (true, format!("real: {message}")),
    };
    tally.misses.push(Miss {
        pod: pod.to_string(),
        requests: spec.requests,
        real: real.clone(),
        top: names(nodes, &top),
        filter,
        detail,
    });
}

async fn create_nodes(
    api: &ApiClient,
    specs: &[NodeSpec],
    cordoned: &BTreeSet<String>,
) -> Result<Vec<NodeState>, Error> {
    let nodes: Api<Node> = Api::all(api.client());
    let mut states = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let id = NodeId(i as u32);
        let mut object = objects::node_object(RUN, id, spec, false);
        let unschedulable = cordoned.contains(&spec.name);
        if unschedulable && let Some(s) = object.spec.as_mut() {
            s.unschedulable = Some(true);
        }
        api.throttle().await;
        let created = nodes.create(&PostParams::default(), &object).await?;
        // the re-implementation sees the node as the API server stored it
        let mut state = NodeState::new(id, objects::node_spec_of(&created)?, Time::ZERO);
        state.condition = objects::node_condition_of(&created);
        state.unschedulable = objects::node_unschedulable(&created);
        states.push(state);
    }
    Ok(states)
}

async fn create_priority_classes(api: &ApiClient, priorities: &BTreeSet<i32>) -> Result<(), Error> {
    let classes: Api<PriorityClass> = Api::all(api.client());
    for &p in priorities.iter().filter(|&&p| p != 0) {
        let pc = PriorityClass {
            metadata: kube::api::ObjectMeta {
                name: Some(objects::priority_class_name(RUN, p)),
                labels: Some(BTreeMap::from([(
                    kube_backend::labels::RUN.to_string(),
                    RUN.to_string(),
                )])),
                ..Default::default()
            },
            value: p,
            ..Default::default()
        };
        api.throttle().await;
        classes.create(&PostParams::default(), &pc).await?;
    }
    Ok(())
}

async fn play(plane: &ScopedCluster) -> Result<(Report, Vec<NodeState>), Error> {
    let api = ApiClient::connect(&ClientOptions {
        kubeconfig: Some(plane.admin_kubeconfig().to_path_buf()),
        qps: 500.0,
        burst: 1000,
        ..ClientOptions::default()
    })
    .await?;
    let (specs, cordoned) = node_specs()?;
    assert!(specs.len() < 100, "every node must be scored: {} nodes", specs.len());
    let shapes = pod_shapes()?;
    let mut rng = stream(SEED, &[purpose::TIMELINE, 0x7717]);
    let sequence = (0..PODS)
        .map(|i| draw_pod(&shapes, &mut rng, i))
        .collect::<Result<Vec<_>, _>>()?;

    let namespaces: Api<Namespace> = Api::all(api.client());
    let ns = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(RUN.to_string()),
            ..Default::default()
        },
        ..Default::default()
    };
    api.throttle().await;
    namespaces.create(&PostParams::default(), &ns).await?;
    create_priority_classes(&api, &sequence.iter().map(|w| w.spec.priority).collect()).await?;
    // node_spec_of gives the nodes their API names, which bindings use
    let mut nodes = create_nodes(&api, &specs, &cordoned).await?;
    let fresh = nodes.clone();
    let index: BTreeMap<String, usize> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.spec.name.clone(), i))
        .collect();

    let pods: Api<Pod> = Api::namespaced(api.client(), RUN);
    api.throttle().await;
    let mut events = watcher::watcher(pods.clone(), watcher::Config::default()).boxed();
    // the watch is established (and the empty namespace listed) before the first pod
    while let Some(event) = events.try_next().await? {
        if matches!(event, Event::InitDone) {
            break;
        }
    }
    // kube-scheduler's informers must have seen every node before the first
    // decision; nothing reports that, so give them a moment
    tokio::time::sleep(Duration::from_secs(2)).await;

    let schedulers: Vec<(Release, DefaultScheduler)> = RELEASES
        .iter()
        .map(|&r| (r, DefaultScheduler::with_release(r, SEED)))
        .collect();
    let mut report = Report::default();
    for r in RELEASES {
        report.tallies.insert(r.version(), Tally::default());
    }
    let mut min_bound_priority = i32::MAX;
    let asserted = DefaultScheduler::new(SEED);
    let started = Instant::now();
    for (i, workload) in sequence.iter().enumerate() {
        let ident = objects::PodIdentity {
            pod: PodId(i as u64),
            slot: PodSlot {
                workload: workload.id,
                ordinal: i as u32,
            },
            incarnation: 0,
        };
        let object = objects::pod_object(RUN, RUN, &ident, workload, SEED);
        let name = object.metadata.name.clone().ok_or("pod_object names the pod")?;
        // a pod that fits nowhere could preempt a lower-priority pod: leave it out
        let prior = asserted.evaluate(&workload.spec, &view(&nodes));
        if prior.feasible.is_empty() && workload.spec.priority > min_bound_priority {
            report.skipped += 1;
            continue;
        }
        api.throttle().await;
        let created = pods.create(&PostParams::default(), &object).await?;
        // as admission left it (priority resolved, default tolerations added)
        let spec = objects::pod_spec_of(&created)?;
        assert_eq!(spec.priority, workload.spec.priority, "{name}: priority class resolved");

        let real = decision_of(&mut events, &name).await?;

        report.sample += 1;
        let v = view(&nodes);
        for (release, s) in &schedulers {
            let eval = s.evaluate(&spec, &v);
            if *release == DefaultScheduler::RELEASE {
                let top = eval.top_score_set().len();
                report.ties += usize::from(top > 1);
                report.chance += if eval.feasible.is_empty() {
                    1.0
                } else {
                    top as f64 / eval.feasible.len() as f64
                };
            }
            let tally = report.tallies.entry(release.version()).or_default();
            judge(tally, &eval, &spec, &name, &real, &nodes, &index);
        }
        match &real {
            Outcome::Bound(node) => {
                report.bound += 1;
                let n = *index
                    .get(node)
                    .ok_or_else(|| format!("{name} bound to unknown node {node}"))?;
                // as a backend keeps them (see schedlab-core's sim/pods.rs)
                nodes[n].requested += spec.requests;
                nodes[n].non_zero_requested += non_zero_requests(spec.requests);
                nodes[n].pod_count += 1;
                min_bound_priority = min_bound_priority.min(spec.priority);
            }
            Outcome::Unschedulable(_) => {
                report.unschedulable += 1;
                api.throttle().await;
                pods.delete(&name, &DeleteParams::default().grace_period(0)).await?;
            }
        }
    }
    report.seconds = started.elapsed().as_secs_f64();

    // nothing was preempted: every bound pod is still there, none terminating
    api.throttle().await;
    let left = pods.list(&Default::default()).await?;
    let terminating = left
        .items
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_some())
        .count();
    assert_eq!(terminating, 0, "the real scheduler preempted pods");
    let bound_now = left
        .items
        .iter()
        .filter(|p| objects::pod_node_name(p).is_some())
        .count();
    assert_eq!(bound_now, report.bound, "every bound pod is still bound");
    // the preemption sequence starts from empty nodes
    api.throttle().await;
    pods.delete_collection(&DeleteParams::default().grace_period(0), &Default::default())
        .await?;
    Ok((report, fresh))
}

#[test]
fn real_kube_scheduler_picks_from_the_re_implementations_top_score_set() {
    let t0 = Instant::now();
    let plane = ScopedCluster::up(&LocalOptions::private("twin-local").expect("options")).expect("control plane");
    let up = t0.elapsed().as_secs_f64();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let (report, fresh) = runtime.block_on(play(&plane)).expect("the twin run");
    let preemption = runtime
        .block_on(preemption::play(&plane, fresh))
        .expect("the preemption sequence");
    drop(plane);
    preemption.print();

    eprintln!(
        "twin: {} decisions ({} bound, {} unschedulable; {} pods left out to avoid preemption; \
         {} with a tied top set; a uniform pick among feasible nodes would agree {:.3}) in {:.1} s, \
         control plane up in {up:.1} s, total {:.1} s",
        report.sample,
        report.bound,
        report.unschedulable,
        report.skipped,
        report.ties,
        report.chance / report.sample.max(1) as f64,
        report.seconds,
        t0.elapsed().as_secs_f64()
    );
    for (release, t) in &report.tallies {
        let filter = t.misses.iter().filter(|m| m.filter).count();
        eprintln!(
            "  {release} rules: real choice in the top-score set {}/{} = {:.4} ({} filter and {} score \
             disagreements); unschedulable messages equal {}/{}",
            t.agree,
            report.sample,
            t.agree as f64 / report.sample.max(1) as f64,
            filter,
            t.misses.len() - filter,
            t.messages_equal,
            t.messages_compared,
        );
        for m in t.misses.iter().take(8) {
            eprintln!(
                "    {} {:?}: real {:?}, top {:?}; {}",
                m.pod, m.requests, m.real, m.top, m.detail
            );
        }
    }

    assert!(report.sample >= 300, "sample of {}", report.sample);
    assert!(report.bound > report.sample / 2, "{report:?}");
    let asserted = &report.tallies[DefaultScheduler::new(SEED).release().version()];
    let rate = asserted.agree as f64 / report.sample as f64;
    assert!(
        rate >= 0.99,
        "agreement {rate:.4} over {} decisions with {} rules",
        report.sample,
        DefaultScheduler::RELEASE
    );
    // where both find no node, they say why in the same words
    assert_eq!(
        asserted.messages_equal, asserted.messages_compared,
        "unschedulable messages differ"
    );
    preemption.check();
}
