//! The twin test's preemption sequence (see the crate's doc): pods of
//! priority 1000 that fit nowhere, on nodes filled with pods of lower
//! priorities, against the real kube-scheduler's DefaultPreemption.

use super::*;
use kube::api::{Patch, PatchParams};
use schedlab_core::{BoundPod, PendingPod};
use scheduler::preemption::Candidate;

const NAMESPACE: &str = "twin-preempt";
/// Fill pods drawn at most; filling stops earlier once pods stop fitting.
const FILL: usize = 700;
/// Consecutive fill draws that fit nowhere after which the nodes count as full.
const FULL_AFTER: usize = 30;
const PREEMPTORS: usize = 40;
const PREEMPTOR_PRIORITY: i32 = 1000;
const FILL_PRIORITIES: [i32; 4] = [0, 0, 100, 500];
const PREEMPTION_TIMEOUT: Duration = Duration::from_secs(30);

/// What the real scheduler did with a pod that fit nowhere.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Real {
    /// nominated to a node after deleting these pods; bound to `bound`
    Preempted {
        nominated: String,
        victims: BTreeSet<String>,
        bound: Option<String>,
    },
    /// unschedulable without a nomination
    NotPreempted,
}

#[derive(Debug, Default)]
pub struct PreemptionReport {
    filled: usize,
    decisions: usize,
    real_preemptions: usize,
    /// the nominated node is among the re-implementation's best candidates
    /// (or neither preempts)
    node_agree: usize,
    /// of the preemptions whose node agreed, the victims are the same
    victims_agree: usize,
    misses: Vec<String>,
    /// sum over decisions of |best| / |candidates|: the node agreement a
    /// uniform pick among the candidates would have had by chance
    chance: f64,
    /// candidates found, and victims the real scheduler deleted, over all decisions
    candidates: usize,
    victims: usize,
    seconds: f64,
}

impl PreemptionReport {
    pub fn print(&self) {
        eprintln!(
            "twin preemption: {} fill pods bound, {} pods that fit nowhere, {} preempted by the real scheduler; \
             nominated node among the best candidates {}/{} (a uniform pick among the {:.1} candidates per pod \
             would agree {:.3}), same victims {}/{} ({} victims) in {:.1} s",
            self.filled,
            self.decisions,
            self.real_preemptions,
            self.node_agree,
            self.decisions,
            self.candidates as f64 / self.decisions.max(1) as f64,
            self.chance / self.decisions.max(1) as f64,
            self.victims_agree,
            self.real_preemptions,
            self.victims,
            self.seconds
        );
        for m in self.misses.iter().take(8) {
            eprintln!("    {m}");
        }
    }

    pub fn check(&self) {
        assert!(self.decisions >= 20, "{self:?}");
        assert!(self.real_preemptions >= 15, "{self:?}");
        let rate = self.node_agree as f64 / self.decisions as f64;
        assert!(rate >= 0.95, "nominated node agreement {rate:.3}: {self:?}");
        let rate = self.victims_agree as f64 / self.real_preemptions as f64;
        assert!(rate >= 0.95, "victim agreement {rate:.3}: {self:?}");
    }
}

/// `status.startTime` of the `k`-th bound pod, as a kubelet writes it (whole seconds).
fn start_time(k: u64) -> String {
    format!("2026-01-01T{:02}:{:02}:{:02}Z", k / 3600, k / 60 % 60, k % 60)
}

/// The cluster as the re-implementation sees it: node states and pod lists.
struct Model {
    nodes: Vec<NodeState>,
    pods: Vec<Vec<BoundPod>>,
    /// pod name -> (node index, id)
    placed: BTreeMap<String, (usize, PodId)>,
    names: BTreeMap<PodId, String>,
    started: u64,
}

impl Model {
    fn view(&self) -> ClusterView<'_> {
        ClusterView {
            now: Time::ZERO,
            nodes: &self.nodes,
            pending_pods: 1,
            bound_pods: self.placed.len() as u32,
            pods_by_node: &self.pods,
            lowest_bound_priority: self.pods.iter().flatten().map(|b| b.priority).min(),
            nominated: &[],
        }
    }

    /// Adds a bound pod; returns the start time to write.
    fn bind(&mut self, name: &str, id: PodId, n: usize, spec: &PodSpec) -> String {
        let k = self.started;
        self.started += 1;
        self.nodes[n].requested += spec.requests;
        self.nodes[n].non_zero_requested += non_zero_requests(spec.requests);
        self.nodes[n].pod_count += 1;
        self.pods[n].push(BoundPod {
            id,
            priority: spec.priority,
            requests: spec.requests,
            started: Time(k * 1000),
        });
        self.placed.insert(name.to_string(), (n, id));
        self.names.insert(id, name.to_string());
        start_time(k)
    }

    fn remove(&mut self, name: &str) {
        let Some((n, id)) = self.placed.remove(name) else {
            return;
        };
        if let Some(at) = self.pods[n].iter().position(|b| b.id == id) {
            let b = self.pods[n].swap_remove(at);
            self.nodes[n].requested -= b.requests;
            self.nodes[n].non_zero_requested -= non_zero_requests(b.requests);
            self.nodes[n].pod_count -= 1;
        }
    }

    fn victim_names(&self, c: &Candidate) -> BTreeSet<String> {
        c.victims
            .iter()
            .filter_map(|v| self.names.get(&v.id).cloned())
            .collect()
    }
}

fn pending_of(spec: &PodSpec, id: PodId) -> PendingPod<'_> {
    PendingPod {
        id,
        ..scheduler::testing::pending(spec)
    }
}

/// Writes a bound pod's `status.startTime`, as its kubelet would.
async fn write_start_time(api: &ApiClient, pods: &Api<Pod>, name: &str, at: &str) -> Result<(), Error> {
    api.throttle().await;
    pods.patch_status(
        name,
        &PatchParams::default(),
        &Patch::Merge(serde_json::json!({"status": {"startTime": at}})),
    )
    .await?;
    Ok(())
}

async fn create_classes(api: &ApiClient, priorities: &[i32]) -> Result<(), Error> {
    let classes: Api<PriorityClass> = Api::all(api.client());
    for &p in priorities.iter().filter(|&&p| p != 0) {
        let pc = PriorityClass {
            metadata: kube::api::ObjectMeta {
                name: Some(objects::priority_class_name(RUN, p)),
                ..Default::default()
            },
            value: p,
            ..Default::default()
        };
        api.throttle().await;
        match classes.create(&PostParams::default(), &pc).await {
            Ok(_) => {}
            // the first sequence made it
            Err(kube::Error::Api(e)) if e.code == 409 => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

pub async fn play(plane: &ScopedCluster, fresh: Vec<NodeState>) -> Result<PreemptionReport, Error> {
    let api = ApiClient::connect(&ClientOptions {
        kubeconfig: Some(plane.admin_kubeconfig().to_path_buf()),
        qps: 500.0,
        burst: 1000,
        ..ClientOptions::default()
    })
    .await?;
    let mut priorities = FILL_PRIORITIES.to_vec();
    priorities.push(PREEMPTOR_PRIORITY);
    create_classes(&api, &priorities).await?;
    let namespaces: Api<Namespace> = Api::all(api.client());
    let ns = Namespace {
        metadata: kube::api::ObjectMeta {
            name: Some(NAMESPACE.to_string()),
            ..Default::default()
        },
        ..Default::default()
    };
    api.throttle().await;
    namespaces.create(&PostParams::default(), &ns).await?;

    // the first sequence's pods are gone before anything is decided here
    let first: Api<Pod> = Api::namespaced(api.client(), RUN);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        api.throttle().await;
        if first.list(&Default::default()).await?.items.is_empty() {
            break;
        }
        if Instant::now() > deadline {
            return Err("the first sequence's pods were not deleted".into());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    let index: BTreeMap<String, usize> = fresh
        .iter()
        .enumerate()
        .map(|(i, n)| (n.spec.name.clone(), i))
        .collect();
    let mut model = Model {
        pods: vec![Vec::new(); fresh.len()],
        nodes: fresh,
        placed: BTreeMap::new(),
        names: BTreeMap::new(),
        started: 0,
    };
    let pods: Api<Pod> = Api::namespaced(api.client(), NAMESPACE);
    api.throttle().await;
    let mut events = watcher::watcher(pods.clone(), watcher::Config::default()).boxed();
    while let Some(event) = events.try_next().await? {
        if matches!(event, Event::InitDone) {
            break;
        }
    }
    // kube-scheduler's cache must have dropped the deleted pods
    tokio::time::sleep(Duration::from_secs(2)).await;

    let shapes = pod_shapes()?;
    let mut rng = stream(SEED, &[purpose::TIMELINE, 0x9ee7]);
    let asserted = DefaultScheduler::new(SEED);
    let mut report = PreemptionReport::default();
    let started = Instant::now();
    let mut next_id = 0u64;
    let object_of = |w: &Workload, id: &mut u64| {
        let ident = objects::PodIdentity {
            pod: PodId(*id),
            slot: PodSlot {
                workload: w.id,
                ordinal: *id as u32,
            },
            incarnation: 0,
        };
        *id += 1;
        let mut object = objects::pod_object(RUN, NAMESPACE, &ident, w, SEED);
        // victims go at once, as in the simulator
        if let Some(s) = object.spec.as_mut() {
            s.termination_grace_period_seconds = Some(0);
        }
        (object, ident.pod)
    };

    // fill: pods the re-implementation finds room for, so nothing preempts yet
    let mut misfits = 0;
    for i in 0..FILL {
        let mut w = draw_pod(&shapes, &mut rng, i)?;
        w.spec.priority = *FILL_PRIORITIES.choose(&mut rng).ok_or("no priorities")?;
        w.name = format!("fill-{i}");
        if asserted.evaluate(&w.spec, &model.view()).feasible.is_empty() {
            misfits += 1;
            if misfits >= FULL_AFTER {
                break;
            }
            continue;
        }
        misfits = 0;
        let (object, id) = object_of(&w, &mut next_id);
        let name = object.metadata.name.clone().ok_or("pod_object names the pod")?;
        api.throttle().await;
        let created = pods.create(&PostParams::default(), &object).await?;
        let spec = objects::pod_spec_of(&created)?;
        match decision_of(&mut events, &name).await? {
            Outcome::Bound(node) => {
                let n = *index
                    .get(&node)
                    .ok_or_else(|| format!("{name} bound to unknown node {node}"))?;
                let at = model.bind(&name, id, n, &spec);
                write_start_time(&api, &pods, &name, &at).await?;
                report.filled += 1;
            }
            Outcome::Unschedulable(_) => {
                api.throttle().await;
                pods.delete(&name, &DeleteParams::default().grace_period(0)).await?;
            }
        }
    }
    // kube-scheduler's cache must have the start times
    tokio::time::sleep(Duration::from_secs(1)).await;

    for i in 0..PREEMPTORS * 10 {
        if report.decisions == PREEMPTORS {
            break;
        }
        let mut w = draw_pod(&shapes, &mut rng, i)?;
        w.spec.priority = PREEMPTOR_PRIORITY;
        w.name = format!("urgent-{i}");
        if !asserted.evaluate(&w.spec, &model.view()).feasible.is_empty() {
            continue;
        }
        let (object, id) = object_of(&w, &mut next_id);
        let name = object.metadata.name.clone().ok_or("pod_object names the pod")?;
        api.throttle().await;
        let created = pods.create(&PostParams::default(), &object).await?;
        let spec = objects::pod_spec_of(&created)?;
        assert_eq!(spec.priority, PREEMPTOR_PRIORITY, "{name}: priority class resolved");
        let (candidates, best) = asserted.evaluate_preemption(&pending_of(&spec, id), &model.view());
        report.decisions += 1;

        let real = tokio::time::timeout(PREEMPTION_TIMEOUT, async {
            let mut deleted = BTreeSet::new();
            let mut nominated: Option<String> = None;
            while let Some(event) = events.try_next().await? {
                match event {
                    Event::Delete(p) => {
                        if let Some(n) = p.metadata.name {
                            deleted.insert(n);
                        }
                    }
                    Event::Apply(p) | Event::InitApply(p) if p.metadata.name.as_deref() == Some(name.as_str()) => {
                        if let Some(n) = p.status.as_ref().and_then(|s| s.nominated_node_name.clone()) {
                            nominated = Some(n);
                        }
                        match (outcome_of(&p), &nominated) {
                            (Some(Outcome::Bound(node)), Some(n)) => {
                                return Ok::<_, Error>(Real::Preempted {
                                    nominated: n.clone(),
                                    victims: deleted,
                                    bound: Some(node),
                                });
                            }
                            (Some(Outcome::Bound(node)), None) => {
                                return Err(format!("{name} bound to {node} without preempting").into());
                            }
                            (Some(Outcome::Unschedulable(_)), None) => return Ok(Real::NotPreempted),
                            _ => {}
                        }
                    }
                    _ => {}
                }
            }
            Err("the pod watch ended".into())
        })
        .await
        .map_err(|_| format!("{name}: neither bound nor unschedulable after {PREEMPTION_TIMEOUT:?}"))??;

        let ours: Vec<&Candidate> = best.iter().map(|&b| &candidates[b]).collect();
        report.candidates += candidates.len();
        report.chance += if candidates.is_empty() {
            1.0
        } else {
            best.len() as f64 / candidates.len() as f64
        };
        if let Real::Preempted { victims, .. } = &real {
            report.victims += victims.len();
        }
        match &real {
            Real::NotPreempted => {
                if ours.is_empty() {
                    report.node_agree += 1;
                } else {
                    report.misses.push(format!(
                        "{name}: the real scheduler did not preempt; ours would on {:?}",
                        ours.iter().map(|c| &model.nodes[c.node].spec.name).collect::<Vec<_>>()
                    ));
                }
                api.throttle().await;
                pods.delete(&name, &DeleteParams::default().grace_period(0)).await?;
            }
            Real::Preempted {
                nominated,
                victims,
                bound,
            } => {
                report.real_preemptions += 1;
                let n = *index
                    .get(nominated)
                    .ok_or_else(|| format!("{name} nominated to unknown {nominated}"))?;
                if ours.iter().any(|c| c.node == n) {
                    report.node_agree += 1;
                    let c = candidates
                        .iter()
                        .find(|c| c.node == n)
                        .ok_or("a best candidate is a candidate")?;
                    let expected = model.victim_names(c);
                    if &expected == victims {
                        report.victims_agree += 1;
                    } else {
                        report.misses.push(format!(
                            "{name} on {nominated}: real victims {victims:?}, ours {expected:?}"
                        ));
                    }
                } else {
                    report.misses.push(format!(
                        "{name}: real nominated {nominated} (victims {victims:?}); ours {:?}",
                        ours.iter()
                            .map(|c| (&model.nodes[c.node].spec.name, model.victim_names(c)))
                            .collect::<Vec<_>>()
                    ));
                }
                for v in victims {
                    model.remove(v);
                }
                match bound {
                    Some(node) => {
                        let b = *index
                            .get(node)
                            .ok_or_else(|| format!("{name} bound to unknown node {node}"))?;
                        let at = model.bind(&name, id, b, &spec);
                        write_start_time(&api, &pods, &name, &at).await?;
                    }
                    None => {
                        api.throttle().await;
                        pods.delete(&name, &DeleteParams::default().grace_period(0)).await?;
                    }
                }
            }
        }
        // the scheduler's cache must have the new start time before the next pod
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
