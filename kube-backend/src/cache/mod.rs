//! The cluster as watches show it: node states as schedulers read them
//! ([`schedlab_core::ClusterView`]) and as samples report them, kept from Node and Pod
//! objects alone.
//!
//! The accounting is the simulator's (`sim/pods.rs`): a pod counts on its
//! node's `requested` and `pod_count` from its binding until it ends or is
//! deleted, its running container's usage counts on the node's `used`, and
//! every event that is trouble ([`Trouble::of`]) is noted on the node's
//! recent-trouble window and its workload's history. Events come from
//! [`PodObservation`], one per pod.
//!
//! For preemption it also keeps what the simulator gives policies: the pods
//! each node holds (`placed`) and the pending pods nominated to a node
//! (`nominations`), from `status.nominatedNodeName` or the bind loop's own
//! preemptions.

mod nominations;
mod placed;

use super::error::KubeError;
use super::objects::{self, PodIdentity};
use super::observe::PodObservation;
use k8s_openapi::api::core::v1 as core;
use nominations::Nominations;
use placed::Placed;
use schedlab_core::behaviour::PodEnd;
use schedlab_core::node::{NodeCondition, NodeId, NodePool, NodeSpec, NodeState, Provisioning};
use schedlab_core::pod::{PodId, PodSpec, WorkloadId};
use schedlab_core::record::EventKind;
use schedlab_core::resources::Resources;
use schedlab_core::time::Time;
use schedlab_core::trouble::{Trouble, TroubleWindow};
use schedlab_core::view::{BoundPod, ClusterView, Nomination, WorkloadHistory};
use std::collections::{BTreeSet, HashMap};

/// NodeIds past this are refused: a stray label must not make the cache
/// allocate the gap up to it.
const MAX_NODE_ID: u32 = 1 << 20;

/// PodIds of pods schedlab did not create start here, far above any run's.
pub const FOREIGN_POD_BASE: u64 = 1 << 62;

/// Where a node's [`NodeId`] comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeIds {
    /// a run's nodes carry it in [`super::labels::NODE_ID`]
    FromLabel,
    /// real clusters: in order of first sight
    InOrder,
}

/// A pod the API no longer has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletedPod {
    pub ident: Option<PodIdentity>,
    /// the node it was bound to
    pub node: Option<NodeId>,
    /// how it had ended before it was deleted, if it had
    pub ended: Option<PodEnd>,
    pub pod: PodId,
}

/// What the cache knows of one pod.
#[derive(Debug, Clone)]
pub struct CachedPod {
    pub id: PodId,
    /// None for pods schedlab did not create
    pub ident: Option<PodIdentity>,
    pub spec: PodSpec,
    /// when the cache first saw it
    pub created: Time,
    pub observation: PodObservation,
    pub uid: String,
}

/// How a pod counts in the cluster's pending and bound totals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Count {
    /// not counted: not yet, or ended
    No,
    Pending,
    Bound,
}

#[derive(Debug, Clone)]
struct Entry {
    namespace: String,
    name: String,
    pod: CachedPod,
    count: Count,
    /// the node whose requested and pod_count include the pod
    on: Option<NodeId>,
    /// what the pod adds to `on`'s used
    used: Resources,
    /// the bind loop's binding the watch has not shown yet
    assumed: Option<NodeId>,
    /// the object says it has a node (known or not)
    has_node: bool,
    /// the object's phase says it ended
    terminal: bool,
    /// the latest object, kept while its node is not known
    waiting: Option<core::Pod>,
    /// when it began to count on `on`
    started: Time,
    /// the object has a deletionTimestamp: it is being deleted gracefully
    terminating: bool,
    /// `status.nominatedNodeName` of the latest object
    shown_nomination: Option<String>,
    /// the node the pod is nominated to while pending (shown, or set by the
    /// bind loop before the watch shows it)
    nomination: Option<String>,
}

/// The cluster as watches show it.
#[derive(Debug)]
pub struct ClusterCache {
    ids: NodeIds,
    nodes: Vec<NodeState>,
    /// by NodeId; empty for ids no node has taken yet
    names: Vec<String>,
    by_name: HashMap<String, NodeId>,
    pods: HashMap<String, Entry>,
    /// keys of pods bound to nodes not seen yet
    waiting: BTreeSet<String>,
    trouble: TroubleWindow,
    histories: HashMap<WorkloadId, WorkloadHistory>,
    pending: u32,
    bound: u32,
    next_foreign: u64,
    /// cache key by pod id, to find a preemption's victims
    keys: HashMap<PodId, String>,
    placed: Placed,
    nominations: Nominations,
    /// keys of pods nominated to nodes not seen yet
    unresolved: BTreeSet<String>,
}

fn key(namespace: &str, name: &str) -> String {
    format!("{namespace}/{name}")
}

fn placeholder(id: NodeId, now: Time) -> NodeState {
    let spec = NodeSpec {
        name: String::new(),
        pool: NodePool {
            name: String::new(),
            machine_type: String::new(),
            hourly_price: 0.0,
            provisioning: Provisioning::OnDemand,
        },
        capacity: Resources::ZERO,
        allocatable: Resources::ZERO,
        max_pods: 0,
        labels: Default::default(),
        taints: vec![],
    };
    let mut n = NodeState::new(id, spec, now);
    n.set_condition(NodeCondition::NotReady, now);
    n
}

fn is_terminal(pod: &core::Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

impl ClusterCache {
    pub fn new(ids: NodeIds) -> ClusterCache {
        ClusterCache {
            ids,
            nodes: Vec::new(),
            names: Vec::new(),
            by_name: HashMap::new(),
            pods: HashMap::new(),
            waiting: BTreeSet::new(),
            trouble: TroubleWindow::default(),
            histories: HashMap::new(),
            pending: 0,
            bound: 0,
            next_foreign: FOREIGN_POD_BASE,
            keys: HashMap::new(),
            placed: Placed::default(),
            nominations: Nominations::default(),
            unresolved: BTreeSet::new(),
        }
    }

    /// A node added or changed: its spec, condition and cordon. Pushes
    /// NodeFailed, NodeDegraded or NodeRecovered when its condition changed
    /// (not on first sight), and the events of pods that waited for it.
    pub fn apply_node(&mut self, node: &core::Node, now: Time, out: &mut Vec<EventKind>) -> Result<NodeId, KubeError> {
        let name = node
            .metadata
            .name
            .as_deref()
            .filter(|n| !n.is_empty())
            .ok_or_else(|| KubeError::Object {
                kind: "Node",
                name: String::new(),
                field: "metadata.name",
                message: "missing".into(),
            })?;
        let spec = objects::node_spec_of(node)?;
        let condition = objects::node_condition_of(node);
        let unschedulable = objects::node_unschedulable(node);
        if let Some(&id) = self.by_name.get(name) {
            let n = &mut self.nodes[id.index()];
            let old = n.condition;
            n.spec = spec;
            n.unschedulable = unschedulable;
            n.set_condition(condition, now);
            condition_events(id, old, condition, out);
            return Ok(id);
        }
        let id = self.new_node_id(node, name)?;
        let mut state = NodeState::new(id, spec, now);
        state.set_condition(condition, now);
        state.unschedulable = unschedulable;
        let i = id.index();
        while self.nodes.len() <= i {
            let gap = NodeId(self.nodes.len() as u32);
            self.nodes.push(placeholder(gap, now));
            self.names.push(String::new());
        }
        self.nodes[i] = state;
        self.names[i] = name.to_string();
        self.by_name.insert(name.to_string(), id);
        self.wake_pods_of(name, now, out);
        self.resolve_nominations_to(name);
        Ok(id)
    }

    /// Pods nominated to `name` before it was seen: their nominations, now.
    fn resolve_nominations_to(&mut self, name: &str) {
        let keys: Vec<String> = self
            .unresolved
            .iter()
            .filter(|k| self.pods.get(*k).is_some_and(|e| e.nomination.as_deref() == Some(name)))
            .cloned()
            .collect();
        for k in keys {
            self.sync_nomination(&k);
        }
    }

    fn new_node_id(&self, node: &core::Node, name: &str) -> Result<NodeId, KubeError> {
        let refuse = |message: String| KubeError::Object {
            kind: "Node",
            name: name.to_string(),
            field: "metadata.labels",
            message,
        };
        match self.ids {
            NodeIds::InOrder => Ok(NodeId(self.nodes.len() as u32)),
            NodeIds::FromLabel => {
                let id =
                    objects::node_id_of(node).ok_or_else(|| refuse(format!("no {} label", super::labels::NODE_ID)))?;
                if id.0 >= MAX_NODE_ID {
                    return Err(refuse(format!("{} {} is too large", super::labels::NODE_ID, id.0)));
                }
                match self.names.get(id.index()) {
                    Some(taken) if !taken.is_empty() => Err(refuse(format!(
                        "{} {} is already node {taken}'s",
                        super::labels::NODE_ID,
                        id.0
                    ))),
                    _ => Ok(id),
                }
            }
        }
    }

    /// Pods bound to `name` before it was seen: their events, now.
    fn wake_pods_of(&mut self, name: &str, now: Time, out: &mut Vec<EventKind>) {
        let keys: Vec<String> = self
            .waiting
            .iter()
            .filter(|k| {
                self.pods
                    .get(*k)
                    .is_some_and(|e| e.pod.observation.awaiting_node() == Some(name))
            })
            .cloned()
            .collect();
        for k in keys {
            if let Some(pod) = self.pods.get_mut(&k).and_then(|e| e.waiting.take()) {
                self.apply_pod(&pod, now, out);
            }
        }
    }

    /// A node gone from the API: NotReady from now on (its NodeId stays, so
    /// ids stay dense; the same name coming back gets it again).
    pub fn delete_node(&mut self, name: &str, now: Time, out: &mut Vec<EventKind>) {
        let Some(&id) = self.by_name.get(name) else {
            return;
        };
        let n = &mut self.nodes[id.index()];
        let old = n.condition;
        n.set_condition(NodeCondition::NotReady, now);
        tracing::debug!(node = name, at = %now, "node deleted");
        condition_events(id, old, NodeCondition::NotReady, out);
    }

    /// A pod added or changed (any pod: keyed by namespace/name; its PodId
    /// from its labels, or one of the cache's own for foreign pods). Pushes
    /// its events (see [`PodObservation::observe`]) and keeps the counts.
    pub fn apply_pod(&mut self, pod: &core::Pod, now: Time, out: &mut Vec<EventKind>) {
        let Some(name) = pod.metadata.name.as_deref() else {
            tracing::warn!("a pod without a name; ignored");
            return;
        };
        let namespace = pod.metadata.namespace.as_deref().unwrap_or("default");
        let k = key(namespace, name);
        let uid = pod.metadata.uid.as_deref().unwrap_or("");
        if let Some(e) = self.pods.get(&k)
            && !uid.is_empty()
            && !e.pod.uid.is_empty()
            && e.pod.uid != uid
        {
            // a new pod of the same name: the old one is gone
            self.delete_pod(namespace, name, now);
        }
        if !self.pods.contains_key(&k) {
            let Some(entry) = self.new_entry(pod, namespace, name, uid, now) else {
                return;
            };
            self.pods.insert(k.clone(), entry);
        }
        let Some(entry) = self.pods.get_mut(&k) else {
            return;
        };
        let start = out.len();
        let by_name = &self.by_name;
        entry.pod.observation.observe(pod, &|n| by_name.get(n).copied(), out);
        entry.has_node = objects::pod_node_name(pod).is_some();
        entry.terminal = is_terminal(pod);
        // a deletionTimestamp is never taken back: an older event without it
        // does not undo a delete the bind loop saw accepted
        entry.terminating |= pod.metadata.deletion_timestamp.is_some();
        // kube-scheduler's nominator: a nomination the object shows is in
        // force, one it stops showing is cleared, and while it shows none the
        // one in memory stays (the bind loop's own, whose status write the
        // watch may not have shown yet)
        let shown = pod
            .status
            .as_ref()
            .and_then(|s| s.nominated_node_name.clone())
            .filter(|n| !n.is_empty());
        if shown.is_some() || entry.shown_nomination.is_some() {
            entry.nomination = shown.clone();
        }
        entry.shown_nomination = shown;
        if entry.pod.observation.is_bound() || entry.has_node {
            entry.assumed = None;
        }
        if entry.pod.observation.awaiting_node().is_some() {
            entry.waiting = Some(pod.clone());
            self.waiting.insert(k.clone());
        } else {
            entry.waiting = None;
            self.waiting.remove(&k);
        }
        let workload = entry.pod.ident.map(|i| i.slot.workload);
        for event in &out[start..] {
            self.note(now, event, workload);
        }
        self.account(&k, now);
    }

    fn new_entry(&mut self, pod: &core::Pod, namespace: &str, name: &str, uid: &str, now: Time) -> Option<Entry> {
        let spec = match objects::pod_spec_of(pod) {
            Ok(spec) => spec,
            Err(e) => {
                tracing::warn!(namespace, name, error = %crate::redact::shown(&e), "a pod the cache cannot read; ignored");
                return None;
            }
        };
        let ident = objects::pod_identity_of(pod);
        let id = match ident {
            Some(i) => i.pod,
            None => {
                let id = PodId(self.next_foreign);
                self.next_foreign += 1;
                id
            }
        };
        if let Some(i) = ident {
            let h = self.histories.entry(i.slot.workload).or_default();
            h.pods = h.pods.saturating_add(1);
        }
        self.keys.insert(id, key(namespace, name));
        Some(Entry {
            namespace: namespace.to_string(),
            name: name.to_string(),
            pod: CachedPod {
                id,
                ident,
                spec,
                created: now,
                observation: PodObservation::new(id),
                uid: uid.to_string(),
            },
            count: Count::No,
            on: None,
            used: Resources::ZERO,
            assumed: None,
            has_node: false,
            terminal: false,
            waiting: None,
            started: now,
            terminating: false,
            shown_nomination: None,
            nomination: None,
        })
    }

    /// Notes `event` on its node's recent trouble and on `workload`'s
    /// history when it is trouble. The cache does this for the events it
    /// emits; callers do it for theirs (a PodEvicted for a pod that vanished).
    pub fn note(&mut self, now: Time, event: &EventKind, workload: Option<WorkloadId>) {
        let Some(trouble) = Trouble::of(event) else {
            return;
        };
        if let Some(node) = event.node() {
            self.trouble.note(now, node, trouble, &mut self.nodes);
        }
        if let Some(w) = workload {
            trouble.add_to_history(self.histories.entry(w).or_default());
        }
    }

    /// Brings the pod's share of the totals and of its node, its place in
    /// the node's pod list and its nomination in line with what is known of
    /// it; `now` is when a pod that starts counting on a node started.
    fn account(&mut self, k: &str, now: Time) {
        let Some(e) = self.pods.get_mut(k) else {
            return;
        };
        let obs = &e.pod.observation;
        let (count, on) = if obs.ended().is_some() || e.terminal {
            (Count::No, None)
        } else if obs.is_bound() || e.has_node || e.assumed.is_some() {
            (Count::Bound, obs.node().or(e.assumed))
        } else {
            (Count::Pending, None)
        };
        let used = if on.is_some() {
            obs.running_usage()
        } else {
            Resources::ZERO
        };
        let requests = e.pod.spec.requests;
        let unlimited = e.pod.spec.memory_limit().is_none();
        let excess = |u: Resources| {
            if unlimited {
                u.memory_bytes.saturating_sub(requests.memory_bytes)
            } else {
                0
            }
        };
        let (old_count, old_on, old_used) = (e.count, e.on, e.used);
        e.count = count;
        e.on = on;
        e.used = used;
        if old_on != on && on.is_some() {
            e.started = now;
        }
        let bound = BoundPod {
            id: e.pod.id,
            priority: e.pod.spec.priority,
            requests,
            started: e.started,
        };
        self.move_count(old_count, count);
        if old_on != on {
            if let Some(n) = old_on {
                self.placed.remove(n, bound.id);
                if let Some(n) = self.nodes.get_mut(n.index()) {
                    n.requested -= requests;
                    n.non_zero_requested -= requests.non_zero_for_scoring();
                    n.pod_count = n.pod_count.saturating_sub(1);
                    n.unlimited.pods = n.unlimited.pods.saturating_sub(u32::from(unlimited));
                    n.unlimited.excess_bytes = n.unlimited.excess_bytes.saturating_sub(excess(old_used));
                    n.set_used(n.used - old_used, now);
                }
            }
            if let Some(n) = on.filter(|n| n.index() < self.nodes.len()) {
                self.placed.add(n, bound);
                let n = &mut self.nodes[n.index()];
                n.requested += requests;
                n.non_zero_requested += requests.non_zero_for_scoring();
                n.pod_count = n.pod_count.saturating_add(1);
                n.unlimited.pods = n.unlimited.pods.saturating_add(u32::from(unlimited));
                n.unlimited.excess_bytes += excess(used);
                n.set_used(n.used + used, now);
            }
        } else if old_used != used
            && let Some(n) = on.and_then(|n| self.nodes.get_mut(n.index()))
        {
            n.unlimited.excess_bytes = (n.unlimited.excess_bytes + excess(used)).saturating_sub(excess(old_used));
            n.set_used(n.used - old_used + used, now);
        }
        self.sync_nomination(k);
    }

    /// Brings the pod's entry in the nominations in line with its state: a
    /// nomination holds only while the pod is pending and names a known node.
    fn sync_nomination(&mut self, k: &str) {
        let Some(e) = self.pods.get_mut(k) else {
            self.nominations.set(k, None);
            self.unresolved.remove(k);
            return;
        };
        if e.count != Count::Pending {
            // bound, assumed or ended: kube-scheduler's nominator drops it too
            e.nomination = None;
        }
        let node = e.nomination.as_deref().map(|name| self.by_name.get(name).copied());
        let nomination = match node {
            Some(Some(node)) => Some(Nomination {
                pod: e.pod.id,
                node,
                priority: e.pod.spec.priority,
                requests: e.pod.spec.requests,
            }),
            _ => None,
        };
        if matches!(node, Some(None)) {
            self.unresolved.insert(k.to_string());
        } else {
            self.unresolved.remove(k);
        }
        self.nominations.set(k, nomination);
    }

    fn move_count(&mut self, from: Count, to: Count) {
        if from == to {
            return;
        }
        match from {
            Count::Pending => self.pending = self.pending.saturating_sub(1),
            Count::Bound => self.bound = self.bound.saturating_sub(1),
            Count::No => {}
        }
        match to {
            Count::Pending => self.pending = self.pending.saturating_add(1),
            Count::Bound => self.bound = self.bound.saturating_add(1),
            Count::No => {}
        }
    }

    /// A pod gone from the API: releases what it held on its node. Returns
    /// what the caller needs to record it (None for a pod never seen).
    /// Emits nothing itself.
    pub fn delete_pod(&mut self, namespace: &str, name: &str, now: Time) -> Option<DeletedPod> {
        let k = key(namespace, name);
        if let Some(e) = self.pods.get_mut(&k) {
            // ended: whatever it held is released as at an end
            e.terminal = true;
            e.assumed = None;
        }
        self.account(&k, now);
        self.waiting.remove(&k);
        let e = self.pods.remove(&k)?;
        if self.keys.get(&e.pod.id) == Some(&k) {
            self.keys.remove(&e.pod.id);
        }
        tracing::trace!(namespace, name, at = %now, "pod deleted");
        Some(DeletedPod {
            ident: e.pod.ident,
            node: e.pod.observation.node(),
            ended: e.pod.observation.ended(),
            pod: e.pod.id,
        })
    }

    /// Forgets trouble older than [`NodeState::RECENT_WINDOW`].
    pub fn expire(&mut self, now: Time) {
        self.trouble.expire(now, &mut self.nodes);
    }

    /// Every node, indexed by NodeId.
    pub fn nodes(&self) -> &[NodeState] {
        &self.nodes
    }

    pub fn node_id(&self, name: &str) -> Option<NodeId> {
        self.by_name.get(name).copied()
    }

    pub fn node_name(&self, id: NodeId) -> Option<&str> {
        self.names.get(id.index()).map(String::as_str).filter(|n| !n.is_empty())
    }

    /// Pods seen and not yet bound.
    pub fn pending(&self) -> u32 {
        self.pending
    }

    /// Pods bound (or assumed bound) and not ended.
    pub fn bound(&self) -> u32 {
        self.bound
    }

    pub fn history(&self, workload: WorkloadId) -> WorkloadHistory {
        self.histories.get(&workload).copied().unwrap_or_default()
    }

    pub fn pod(&self, namespace: &str, name: &str) -> Option<&CachedPod> {
        self.pods.get(&key(namespace, name)).map(|e| &e.pod)
    }

    /// Every pod: namespace, name and what is known of it (in no order).
    pub fn pods(&self) -> impl Iterator<Item = (&str, &str, &CachedPod)> {
        self.pods
            .values()
            .map(|e| (e.namespace.as_str(), e.name.as_str(), &e.pod))
    }

    /// The node the bind loop bound the pod to, while the watch has not
    /// shown the binding yet.
    pub fn assumed(&self, namespace: &str, name: &str) -> Option<NodeId> {
        self.pods.get(&key(namespace, name)).and_then(|e| e.assumed)
    }

    /// The bind loop bound the pod to `node` at `now`: counts it there now,
    /// before the watch shows the binding. A pod the cache does not know or
    /// that already has a node is left alone.
    pub fn assume(&mut self, namespace: &str, name: &str, node: NodeId, now: Time) {
        let k = key(namespace, name);
        match self.pods.get_mut(&k) {
            Some(e) if !e.has_node && !e.pod.observation.is_bound() && e.count == Count::Pending => {
                e.assumed = Some(node);
            }
            _ => {
                tracing::debug!(namespace, name, "assume: not a pending pod the cache knows");
                return;
            }
        }
        self.account(&k, now);
    }

    /// The binding the bind loop assumed did not happen (learnt at `now`).
    pub fn forget_assumed(&mut self, namespace: &str, name: &str, now: Time) {
        let k = key(namespace, name);
        if let Some(e) = self.pods.get_mut(&k)
            && e.assumed.take().is_some()
        {
            self.account(&k, now);
        }
    }

    /// The cluster as a policy sees it at `now`: the nodes, the pods each
    /// holds and the nominations in force.
    pub fn view(&self, now: Time) -> ClusterView<'_> {
        ClusterView {
            now,
            nodes: &self.nodes,
            pending_pods: self.pending,
            bound_pods: self.bound,
            pods_by_node: self.placed.by_node(),
            lowest_bound_priority: self.placed.lowest_priority(),
            nominated: self.nominations.list(),
        }
    }

    /// The pods counted on each node, indexed by NodeId (a node without
    /// pods may have no list). `started` is when the cache first counted the
    /// pod there, in scenario time: preemption only compares starts with
    /// each other, and `status.startTime` is on another clock (and absent
    /// before a kubelet admits the pod).
    pub fn pods_by_node(&self) -> &[Vec<BoundPod>] {
        self.placed.by_node()
    }

    /// The pending pods nominated to a known node, in no order.
    pub fn nominated(&self) -> &[Nomination] {
        self.nominations.list()
    }

    /// The node a pending pod is nominated to, if it is and the node is known.
    pub fn nomination(&self, namespace: &str, name: &str) -> Option<NodeId> {
        let e = self.pods.get(&key(namespace, name))?;
        self.by_name.get(e.nomination.as_deref()?).copied()
    }

    /// The bind loop nominated the pending pod to `node` (None: took its
    /// nomination away), before the watch shows it. A pod that is not
    /// pending keeps none.
    pub fn nominate(&mut self, namespace: &str, name: &str, node: Option<NodeId>) {
        let k = key(namespace, name);
        let name_of = node.and_then(|n| self.names.get(n.index()).filter(|s| !s.is_empty()).cloned());
        let Some(e) = self.pods.get_mut(&k) else {
            return;
        };
        e.nomination = name_of;
        self.sync_nomination(&k);
    }

    /// The pending pods nominated to `node` with a priority below
    /// `priority`: (namespace, name) each.
    pub fn nominated_below(&self, node: NodeId, priority: i32) -> Vec<(&str, &str)> {
        self.nominations
            .below(node, priority)
            .filter_map(|k| self.pods.get(k))
            .map(|e| (e.namespace.as_str(), e.name.as_str()))
            .collect()
    }

    /// The pod `pod` if it counts on `node`: namespace, name and what is known of it.
    pub fn pod_on(&self, node: NodeId, pod: PodId) -> Option<(&str, &str, &CachedPod)> {
        let e = self.pods.get(self.keys.get(&pod)?)?;
        (e.on == Some(node) && e.pod.id == pod).then_some((e.namespace.as_str(), e.name.as_str(), &e.pod))
    }

    /// The bind loop's delete of the pod was accepted: it is terminating,
    /// before the watch shows its deletionTimestamp.
    pub fn mark_terminating(&mut self, namespace: &str, name: &str) {
        if let Some(e) = self.pods.get_mut(&key(namespace, name)) {
            e.terminating = true;
        }
    }

    /// Whether a pod of priority below `priority` on `node` is being
    /// deleted (kube-scheduler's `PodEligibleToPreemptOthers` waits for them).
    pub fn terminating_below(&self, node: NodeId, priority: i32) -> bool {
        self.placed
            .on(node)
            .iter()
            .filter(|b| b.priority < priority)
            .filter_map(|b| self.pods.get(self.keys.get(&b.id)?))
            .any(|e| e.terminating && e.on == Some(node))
    }
}

/// The simulator's events for a node's condition going from `old` to `new`.
/// It reaches Degraded from NotReady only through Ready, so that change is
/// a recovery and a degradation.
fn condition_events(node: NodeId, old: NodeCondition, new: NodeCondition, out: &mut Vec<EventKind>) {
    if old == new {
        return;
    }
    match new {
        NodeCondition::NotReady => out.push(EventKind::NodeFailed { node }),
        NodeCondition::Ready => out.push(EventKind::NodeRecovered { node }),
        NodeCondition::Degraded => {
            if old == NodeCondition::NotReady {
                out.push(EventKind::NodeRecovered { node });
            }
            out.push(EventKind::NodeDegraded { node });
        }
    }
}

#[cfg(test)]
mod tests;
