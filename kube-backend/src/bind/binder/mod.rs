//! The bind loop's state, without I/O: watch events in, decisions and the
//! requests they need out, request outcomes back in. Keeps the cluster cache
//! (with assumed binds and nominations), the pending queue and what was
//! written to each pod.
//!
//! - `preempt`: carrying out a policy's preemption.

mod preempt;

pub use preempt::{Preemption, PreemptionResults, Victim, is_gone_or_ok};

use super::BindStats;
use super::queue::{PendingQueue, PodKey};
use super::requests::{Failure, classify, written_answer};
use crate::cache::ClusterCache;
#[cfg(test)]
use crate::cache::NodeIds;
use crate::error::KubeError;
use crate::objects;
use hdrhistogram::Histogram;
use k8s_openapi::api::core::v1 as core;
use kube::runtime::watcher;
use schedlab_core::Scheduler;
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::decision::DecisionRecord;
use schedlab_core::node::{NodeCondition, NodeId, NodeSpec};
use schedlab_core::pod::{PodSlot, WorkloadId};
use schedlab_core::record::EventKind;
use schedlab_core::resources::Resources;
use schedlab_core::time::Time;
use schedlab_core::timing::{self, LatencySummary};
use schedlab_core::verdict::{Answer, Verdict};
use schedlab_core::view::PendingPod;
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// The workload the policy sees for pods that schedlab did not create.
pub const FOREIGN_WORKLOAD: WorkloadId = WorkloadId(u32::MAX);

/// A change a watch delivered.
#[derive(Debug)]
pub enum Change {
    Node(Box<watcher::Event<core::Node>>),
    Pod(Box<watcher::Event<core::Pod>>),
}

/// A write the loop wants made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    Bind {
        key: PodKey,
        uid: String,
        node: NodeId,
        node_name: String,
    },
    /// PodScheduled=False with the answer's reason and `message`
    Status {
        key: PodKey,
        answer: Answer,
        message: String,
    },
    /// delete the victims, then nominate the pod (see [`Preemption`])
    Preempt(Box<Preemption>),
}

/// What the loop knows of one of its own pending pods.
#[derive(Debug, Clone, Default)]
struct Tracked {
    uid: String,
    /// the PodScheduled=False answer on the pod (or being written)
    written: Option<(Answer, String)>,
    /// a bind was sent and has not failed: later events that still show the
    /// pod pending predate it
    binding: bool,
    /// `spec.preemptionPolicy: Never`: the pod may not preempt others
    never_preempts: bool,
    /// a preemption for the pod was sent and has not come back
    preempting: bool,
}

#[derive(Debug, Clone, PartialEq)]
struct NodeSnapshot {
    condition: NodeCondition,
    unschedulable: bool,
    spec: NodeSpec,
}

/// The loop's state.
#[derive(Debug)]
pub struct Binder {
    scheduler_name: String,
    model: ModelConfig,
    cache: ClusterCache,
    queue: PendingQueue,
    tracked: HashMap<PodKey, Tracked>,
    known_pods: HashSet<PodKey>,
    known_nodes: HashSet<String>,
    relist_pods: Option<HashSet<PodKey>>,
    relist_nodes: Option<HashSet<String>>,
    pods_synced: bool,
    nodes_synced: bool,
    /// something happened that may have made room since the queue last heard of it
    changed: bool,
    stats: BindStats,
    /// the policy's time per decision, ns
    decisions: Histogram<u64>,
    /// a bind's POST, ns
    bind_requests: Histogram<u64>,
    /// the cache's events: the player records them, the loop does not
    scratch: Vec<EventKind>,
    /// where the records of explained decisions go (`--explain`)
    decision_out: Option<super::DecisionOut>,
}

/// Whether `pod` waits for a scheduler named `scheduler_name`: no node yet,
/// not being deleted, not finished (what kube-scheduler's queue admits).
pub fn is_pending_for(pod: &core::Pod, scheduler_name: &str) -> bool {
    let spec = pod.spec.as_ref();
    let name = spec
        .and_then(|s| s.scheduler_name.as_deref())
        .unwrap_or("default-scheduler");
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    name == scheduler_name
        && objects::pod_node_name(pod).is_none()
        && pod.metadata.deletion_timestamp.is_none()
        && !matches!(phase, Some("Succeeded" | "Failed"))
}

fn key_of(pod: &core::Pod) -> Option<PodKey> {
    Some(PodKey::new(
        pod.metadata.namespace.clone().unwrap_or_default(),
        pod.metadata.name.clone()?,
    ))
}

fn less(a: Resources, b: Resources) -> bool {
    a.cpu_milli < b.cpu_milli || a.memory_bytes < b.memory_bytes
}

impl Binder {
    pub fn new(scheduler_name: String, model: ModelConfig, cache: ClusterCache) -> Result<Binder, KubeError> {
        let histogram = || timing::histogram().map_err(|e| KubeError::Other(format!("latency histogram: {e:?}")));
        Ok(Binder {
            scheduler_name,
            model,
            cache,
            queue: PendingQueue::default(),
            tracked: HashMap::new(),
            known_pods: HashSet::new(),
            known_nodes: HashSet::new(),
            relist_pods: None,
            relist_nodes: None,
            pods_synced: false,
            nodes_synced: false,
            changed: false,
            stats: BindStats::default(),
            decisions: histogram()?,
            bind_requests: histogram()?,
            scratch: Vec::new(),
            decision_out: None,
        })
    }

    /// Sends the record of every decision its policy explains to `out`.
    pub fn record_decisions(&mut self, out: super::DecisionOut) {
        self.decision_out = Some(out);
    }

    /// Both watches have listed everything once (decisions before that would
    /// see an incomplete cluster).
    pub fn synced(&self) -> bool {
        self.pods_synced && self.nodes_synced
    }

    pub fn cache(&self) -> &ClusterCache {
        &self.cache
    }

    /// Pods waiting for this loop (pending, backing off or being bound).
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    pub fn apply(&mut self, change: Change, now: Time) {
        match change {
            Change::Node(ev) => self.node_event(*ev, now),
            Change::Pod(ev) => self.pod_event(*ev, now),
        }
    }

    fn node_event(&mut self, ev: watcher::Event<core::Node>, now: Time) {
        match ev {
            watcher::Event::Init => self.relist_nodes = Some(HashSet::new()),
            watcher::Event::InitApply(node) => {
                if let Some(seen) = self.relist_nodes.as_mut()
                    && let Some(name) = node.metadata.name.clone()
                {
                    seen.insert(name);
                }
                self.apply_node(&node, now);
            }
            watcher::Event::InitDone => {
                if let Some(seen) = self.relist_nodes.take() {
                    let gone: Vec<String> = self.known_nodes.difference(&seen).cloned().collect();
                    for name in gone {
                        self.delete_node(&name, now);
                    }
                }
                self.nodes_synced = true;
            }
            watcher::Event::Apply(node) => self.apply_node(&node, now),
            watcher::Event::Delete(node) => {
                if let Some(name) = node.metadata.name.as_deref() {
                    self.delete_node(name, now);
                }
            }
        }
    }

    fn snapshot(&self, name: &str) -> Option<NodeSnapshot> {
        let id = self.cache.node_id(name)?;
        let n = self.cache.nodes().get(id.index())?;
        Some(NodeSnapshot {
            condition: n.condition,
            unschedulable: n.unschedulable,
            spec: n.spec.clone(),
        })
    }

    fn apply_node(&mut self, node: &core::Node, now: Time) {
        let Some(name) = node.metadata.name.clone() else {
            return;
        };
        let before = self.snapshot(&name);
        let result = self.cache.apply_node(node, now, &mut self.scratch);
        self.scratch.clear();
        match result {
            Ok(_) => {
                // a new node, or one whose health, cordon, size, labels or taints changed
                if before != self.snapshot(&name) {
                    self.changed = true;
                }
                self.known_nodes.insert(name);
            }
            Err(err) => {
                tracing::warn!(node = %name, error = %crate::redact::shown(&err), "bind loop: a node it cannot read; left out")
            }
        }
    }

    fn delete_node(&mut self, name: &str, now: Time) {
        self.known_nodes.remove(name);
        self.cache.delete_node(name, now, &mut self.scratch);
        self.scratch.clear();
    }

    fn pod_event(&mut self, ev: watcher::Event<core::Pod>, now: Time) {
        match ev {
            watcher::Event::Init => self.relist_pods = Some(HashSet::new()),
            watcher::Event::InitApply(pod) => {
                if let Some(seen) = self.relist_pods.as_mut()
                    && let Some(key) = key_of(&pod)
                {
                    seen.insert(key);
                }
                self.apply_pod(&pod, now);
            }
            watcher::Event::InitDone => {
                if let Some(seen) = self.relist_pods.take() {
                    let gone: Vec<PodKey> = self.known_pods.difference(&seen).cloned().collect();
                    for key in gone {
                        self.delete_pod(&key, now);
                    }
                }
                self.pods_synced = true;
            }
            watcher::Event::Apply(pod) => self.apply_pod(&pod, now),
            watcher::Event::Delete(pod) => {
                if let Some(key) = key_of(&pod) {
                    self.delete_pod(&key, now);
                }
            }
        }
    }

    /// The node a pod counts on and that node's load, before an update.
    fn load_of(&self, key: &PodKey) -> Option<(NodeId, Resources, u32)> {
        let node = self.cache.pod(&key.namespace, &key.name)?.observation.node()?;
        let n = self.cache.nodes().get(node.index())?;
        Some((node, n.requested, n.pod_count))
    }

    fn apply_pod(&mut self, pod: &core::Pod, now: Time) {
        let Some(key) = key_of(pod) else {
            return;
        };
        let before = self.load_of(&key);
        self.cache.apply_pod(pod, now, &mut self.scratch);
        self.scratch.clear();
        if let Some((node, requested, count)) = before
            && let Some(n) = self.cache.nodes().get(node.index())
            && (less(n.requested, requested) || n.pod_count < count)
        {
            // the pod ended and gave its node's room back
            self.changed = true;
        }
        self.known_pods.insert(key.clone());
        if is_pending_for(pod, &self.scheduler_name) {
            self.admit(key, pod);
        } else {
            self.queue.remove(&key);
            self.tracked.remove(&key);
        }
    }

    /// One of this loop's pods is pending: queue it unless an event older
    /// than a bind already sent says so.
    fn admit(&mut self, key: PodKey, pod: &core::Pod) {
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let tracked = self.tracked.entry(key.clone()).or_default();
        if tracked.uid != uid {
            // first sight, or a new pod under an old name
            *tracked = Tracked {
                written: written_answer(pod),
                uid,
                binding: false,
                never_preempts: pod.spec.as_ref().and_then(|s| s.preemption_policy.as_deref()) == Some("Never"),
                preempting: false,
            };
            self.queue.remove(&key);
        }
        if tracked.binding {
            return;
        }
        let Some(cached) = self.cache.pod(&key.namespace, &key.name) else {
            tracing::warn!(pod = %key, "bind loop: the cache could not read the pod; not scheduled");
            return;
        };
        self.queue.add(key, cached.spec.priority, cached.created, cached.id);
    }

    fn delete_pod(&mut self, key: &PodKey, now: Time) {
        self.known_pods.remove(key);
        self.queue.remove(key);
        self.tracked.remove(key);
        if let Some(gone) = self.cache.delete_pod(&key.namespace, &key.name, now)
            && gone.node.is_some()
            && gone.ended.is_none()
        {
            self.changed = true;
        }
    }

    /// Whether a pod is ready for a decision at `now`.
    pub fn has_due(&mut self, now: Time) -> bool {
        if !self.synced() {
            return false;
        }
        self.settle_changes(now);
        self.queue.promote(now);
        self.queue.has_active()
    }

    /// When the next backing-off pod is due, if any is.
    pub fn next_due(&mut self) -> Option<Time> {
        self.queue.next_due()
    }

    fn settle_changes(&mut self, now: Time) {
        if std::mem::take(&mut self.changed) {
            self.queue.cluster_changed(now, &self.model);
        }
    }

    /// Asks the policy about the next due pod; returns the write its answer
    /// needs, if any.
    pub fn decide(&mut self, now: Time, policy: &mut dyn Scheduler) -> Option<Request> {
        if !self.has_due(now) {
            return None;
        }
        let popped = self.queue.pop()?;
        let key = popped.key;
        self.cache.expire(now);
        let Some(cached) = self.cache.pod(&key.namespace, &key.name) else {
            self.queue.remove(&key);
            return None;
        };
        let slot = cached.ident.map_or(
            PodSlot {
                workload: FOREIGN_WORKLOAD,
                ordinal: 0,
            },
            |i| i.slot,
        );
        let pending = PendingPod {
            id: cached.id,
            slot,
            spec: &cached.spec,
            created: cached.created,
            attempts: popped.attempts,
            history: self.cache.history(slot.workload),
        };
        let view = self.cache.view(now);
        let started = Instant::now();
        let placement = policy.schedule(&pending, &view);
        timing::record(&mut self.decisions, started.elapsed());
        if let (Some(out), Some(explained)) = (&self.decision_out, policy.explained()) {
            let workload = out.workloads.get(slot.workload.0 as usize).map(String::as_str);
            // the player writes it; gone, the run is over and so is its file
            let _ = out
                .to
                .send(DecisionRecord::of(&pending, &view, &placement, &explained, workload));
        }
        self.stats.decisions += 1;
        let priority = cached.spec.priority;
        let verdict = match placement.verdict(&view, &cached.spec) {
            Verdict::Bind(node) if self.cache.node_name(node).is_none() => Verdict::rejected_bind("no name"),
            verdict => verdict,
        };
        match verdict {
            Verdict::Bind(node) => {
                let node_name = self.cache.node_name(node)?.to_string();
                self.cache.assume(&key.namespace, &key.name, node, now);
                let tracked = self.tracked.entry(key.clone()).or_default();
                tracked.binding = true;
                Some(Request::Bind {
                    uid: tracked.uid.clone(),
                    key,
                    node,
                    node_name,
                })
            }
            Verdict::NotPlaced {
                answer,
                reason,
                rejected_bind,
            } => {
                if rejected_bind {
                    tracing::warn!(pod = %key, %reason, "the policy chose a node that cannot take the pod; treated as unschedulable");
                    self.stats.rejected += 1;
                }
                match answer {
                    Answer::Unschedulable => self.stats.unschedulable += 1,
                    Answer::Declined => self.stats.declined += 1,
                }
                self.not_placed(key, answer, reason, now)
            }
            Verdict::Preempt { node, victims, reason } => self.preempt(key, priority, node, &victims, reason, now),
        }
    }

    /// The pod waits out its back-off; its condition is written when the
    /// answer or its reason changed.
    fn not_placed(&mut self, key: PodKey, answer: Answer, reason: Cow<'static, str>, now: Time) -> Option<Request> {
        self.queue.failed(&key, now, Time::ZERO, &self.model);
        let message = self.condition_to_write(&key, answer, reason)?;
        Some(Request::Status { key, answer, message })
    }

    /// The PodScheduled=False message to write for `answer`, None when the
    /// pod already says it (or is not tracked any more); noted as written.
    fn condition_to_write(&mut self, key: &PodKey, answer: Answer, reason: Cow<'static, str>) -> Option<String> {
        let tracked = self.tracked.get_mut(key)?;
        let wanted = (answer, reason.into_owned());
        if tracked.written.as_ref() == Some(&wanted) {
            return None;
        }
        tracked.written = Some(wanted.clone());
        Some(wanted.1)
    }

    /// A condition write failed: the next answer writes it again.
    fn condition_not_written(&mut self, key: &PodKey, answer: Answer, message: &str) {
        if let Some(t) = self.tracked.get_mut(key)
            && t.written.as_ref().is_some_and(|(a, m)| *a == answer && m == message)
        {
            t.written = None;
        }
    }

    /// A bind request came back. `retry_at` turns a wall-clock delay into the
    /// scenario time the pod may try again. Only a refusal that retrying
    /// cannot cure (401/403) is an error.
    pub fn bind_done(
        &mut self,
        key: &PodKey,
        node: NodeId,
        result: Result<(), kube::Error>,
        took: Duration,
        now: Time,
        retry_at: impl Fn(Duration) -> Time,
    ) -> Result<(), KubeError> {
        timing::record(&mut self.bind_requests, took);
        let err = match result {
            Ok(()) => {
                self.stats.binds += 1;
                self.queue.remove(key);
                return Ok(());
            }
            Err(err) => err,
        };
        self.cache.forget_assumed(&key.namespace, &key.name, now);
        // the room the pod was assumed to take is free again
        self.changed = true;
        if let Some(t) = self.tracked.get_mut(key) {
            t.binding = false;
        }
        match classify(&err) {
            Failure::Conflict => {
                tracing::debug!(pod = %key, "bind conflict: somebody else bound the pod");
                self.stats.conflicts += 1;
                self.queue.remove(key);
            }
            Failure::Gone => {
                self.stats.gone += 1;
                self.queue.remove(key);
                self.tracked.remove(key);
            }
            Failure::Throttled { after } => {
                self.stats.throttled += 1;
                self.queue.retry(key, retry_at(after));
            }
            Failure::Unavailable { after } => {
                tracing::debug!(pod = %key, error = %crate::redact::shown(&err), "bind failed; retried");
                self.stats.unavailable += 1;
                self.queue.retry(key, retry_at(after));
            }
            Failure::Refused => {
                tracing::warn!(pod = %key, node = node.0, error = %crate::redact::shown(&err), "the API server refused the binding");
                self.stats.refused += 1;
                self.queue.failed(key, now, Time::ZERO, &self.model);
            }
            Failure::Forbidden => {
                return Err(KubeError::Api {
                    what: format!("binding pod {key} to node {}", node.0),
                    error: err,
                });
            }
        }
        Ok(())
    }

    /// A PodScheduled write came back.
    pub fn status_done(&mut self, key: &PodKey, answer: Answer, message: &str, result: Result<(), kube::Error>) {
        let err = match result {
            Ok(()) => {
                self.stats.status_writes += 1;
                return;
            }
            Err(err) => err,
        };
        if self.status_write_failed(key, &err, "could not write the PodScheduled condition") {
            self.condition_not_written(key, answer, message);
        }
    }

    /// Counts a failed write of a pod's status (never fatal: a loop that may
    /// bind but not write status still schedules); false when the pod is
    /// gone or changed meanwhile, so nothing needs writing again.
    fn status_write_failed(&mut self, key: &PodKey, err: &kube::Error, what: &str) -> bool {
        match classify(err) {
            Failure::Gone | Failure::Conflict => return false,
            Failure::Throttled { .. } => self.stats.throttled += 1,
            Failure::Unavailable { .. } => self.stats.unavailable += 1,
            Failure::Forbidden | Failure::Refused => {
                self.stats.refused += 1;
                tracing::warn!(pod = %key, error = %crate::redact::shown(err), "{what}");
            }
        }
        true
    }

    /// A watch failed (it resumes by itself).
    pub fn watch_failed(&mut self) {
        self.stats.watch_errors += 1;
    }

    pub fn stats(&self) -> BindStats {
        BindStats {
            pending: self.queue.len() as u64,
            decision_latency: LatencySummary::of(&self.decisions),
            bind_latency: LatencySummary::of(&self.bind_requests),
            decision_times: Some(self.decisions.clone()),
            ..self.stats.clone()
        }
    }
}

#[cfg(test)]
mod tests;
