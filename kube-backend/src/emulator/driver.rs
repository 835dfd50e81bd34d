//! The emulator's model of its nodes and their pods, without any API I/O:
//! one [`PodLifecycle`] per bound pod, each node's memory use, the OOM killer
//! and memory pressure, exactly as the simulator drives them (sim/pods.rs,
//! sim/actions.rs), and timers in scenario time. The I/O layer feeds it what
//! the watches show and what the command channel asks, and carries out the
//! [`Output`]s it drains.

use super::view::{Containers, PodView};
use crate::objects;
use k8s_openapi::api::core::v1 as core;
use schedlab_core::behaviour::{
    Effects, Input, ModelConfig, NodeHealth, OomCandidate, PodContext, PodEnd, PodIdent, PodLifecycle, PodPhase,
    TimerKind, oom_victim_pods, under_memory_pressure,
};
use schedlab_core::node::{NodeCondition, NodeId};
use schedlab_core::pod::{PodId, PodSpec};
use schedlab_core::record::{DeleteCause, EventKind};
use schedlab_core::resources::Resources;
use schedlab_core::time::Time;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// A pod's namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PodKey {
    pub namespace: String,
    pub name: String,
}

impl PodKey {
    pub fn of(pod: &core::Pod) -> PodKey {
        PodKey {
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            name: pod.metadata.name.clone().unwrap_or_default(),
        }
    }
}

impl std::fmt::Display for PodKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)
    }
}

/// What the I/O layer has to do after a step.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// Write the pod's status as `view` shows it.
    PodStatus(PodView),
    /// The pod's toleration of its unreachable node ran out: write status
    /// Failed/Evicted, then delete it with grace period 0.
    Evict(PodView),
    /// Finalise a deletion: delete with grace period 0.
    Delete { key: PodKey, uid: String },
    /// The node's condition changed (a command).
    NodeCondition { name: String, condition: NodeCondition },
}

/// Why a pod seen on the watch is not played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Skipped {
    /// it lacks the identity labels or the seed annotation of a run's pod
    NotARunPod(PodKey),
    /// its spec cannot be read
    BadSpec(PodKey, String),
}

struct NodeEntry {
    /// the id the timeline gave it (from its label), for the lifecycle's events
    id: NodeId,
    capacity_memory: u64,
    allocatable_memory: u64,
    condition: NodeCondition,
    pressure: bool,
    used: Resources,
    /// serials of the pods played on it
    pods: Vec<u64>,
    dirty: bool,
}

enum PodRun {
    /// bound to a node the emulator has not adopted (yet)
    Waiting(String),
    Playing {
        node: usize,
        lifecycle: Box<PodLifecycle>,
    },
    /// over (succeeded, failed, evicted, deleted); kept until the API forgets
    /// the pod so that its echoes are not played again
    Done,
}

struct PodEntry {
    key: PodKey,
    uid: String,
    ident: PodIdent,
    seed: u64,
    spec: PodSpec,
    run: PodRun,
    containers: Containers,
    dirty: bool,
    /// finalised already (a delete was asked for)
    finalised: bool,
}

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Due {
    at: Time,
    seq: u64,
    pod: u64,
    kind: TimerKind,
    generation: u64,
}

/// The pure part of the node emulator.
pub struct Driver {
    model: ModelConfig,
    now: Time,
    nodes: Vec<Option<NodeEntry>>,
    node_index: HashMap<String, usize>,
    pods: HashMap<u64, PodEntry>,
    pod_index: HashMap<PodKey, u64>,
    next_serial: u64,
    timers: BinaryHeap<Reverse<Due>>,
    next_seq: u64,
    dirty_nodes: Vec<usize>,
    dirty_pods: Vec<u64>,
    outputs: Vec<Output>,
    effects: Effects,
    playing: usize,
    /// the lifecycles' events, kept only when asked for (tests)
    log: Option<Vec<(Time, EventKind)>>,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("now", &self.now)
            .field("nodes", &self.node_index.len())
            .field("pods", &self.playing)
            .field("timers", &self.timers.len())
            .finish()
    }
}

impl Driver {
    pub fn new(model: ModelConfig) -> Driver {
        Driver {
            model,
            now: Time::ZERO,
            nodes: Vec::new(),
            node_index: HashMap::new(),
            pods: HashMap::new(),
            pod_index: HashMap::new(),
            next_serial: 0,
            timers: BinaryHeap::new(),
            next_seq: 0,
            dirty_nodes: Vec::new(),
            dirty_pods: Vec::new(),
            outputs: Vec::new(),
            effects: Effects::default(),
            playing: 0,
            log: None,
        }
    }

    /// Keeps the lifecycles' events for [`Driver::take_log`].
    pub fn keep_log(&mut self) {
        self.log.get_or_insert_with(Vec::new);
    }

    /// The lifecycles' events since the last call (empty unless [`Driver::keep_log`]).
    pub fn take_log(&mut self) -> Vec<(Time, EventKind)> {
        self.log.as_mut().map(std::mem::take).unwrap_or_default()
    }

    /// Adopted nodes.
    pub fn nodes(&self) -> usize {
        self.node_index.len()
    }

    /// Pods being played (bound to an adopted node, not over).
    pub fn pods(&self) -> usize {
        self.playing
    }

    /// The latest scenario time the driver has stepped to.
    pub fn now(&self) -> Time {
        self.now
    }

    /// When the earliest timer is due.
    pub fn next_timer(&self) -> Option<Time> {
        self.timers.peek().map(|Reverse(d)| d.at)
    }

    /// The condition the emulator keeps for `name`.
    pub fn node_condition(&self, name: &str) -> Option<NodeCondition> {
        self.node(name).map(|n| n.condition)
    }

    /// The memory the containers on `name` use now.
    pub fn node_used(&self, name: &str) -> Option<Resources> {
        self.node(name).map(|n| n.used)
    }

    /// Whether `name` is under memory pressure now.
    pub fn node_pressure(&self, name: &str) -> Option<bool> {
        self.node(name).map(|n| n.pressure)
    }

    /// What the emulator shows of a pod now.
    pub fn pod_view(&self, key: &PodKey) -> Option<PodView> {
        let serial = self.pod_index.get(key)?;
        self.pods.get(serial).map(|p| self.view_of(p))
    }

    fn node(&self, name: &str) -> Option<&NodeEntry> {
        self.nodes.get(*self.node_index.get(name)?)?.as_ref()
    }

    fn step_to(&mut self, now: Time) -> Time {
        self.now = self.now.max(now);
        self.now
    }

    /// A node to play, or a change to one already played. Its condition is
    /// taken from the object only when it is adopted: afterwards the emulator
    /// is the node's kubelet and keeps the condition itself.
    pub fn node_seen(&mut self, node: &core::Node, now: Time) {
        let now = self.step_to(now);
        let Some(name) = node.metadata.name.clone() else {
            return;
        };
        let spec = match objects::node_spec_of(node) {
            Ok(spec) => spec,
            Err(err) => {
                tracing::warn!(node = %name, error = %crate::redact::shown(&err), "node not adopted");
                return;
            }
        };
        if let Some(&i) = self.node_index.get(&name) {
            // capacity changes are the only ones that matter to the model
            if let Some(n) = self.nodes[i].as_mut() {
                n.capacity_memory = spec.capacity.memory_bytes;
                n.allocatable_memory = spec.allocatable.memory_bytes;
            }
            self.mark_node(i);
            self.settle(now);
            return;
        }
        let i = self.nodes.len();
        let id = objects::node_id_of(node).unwrap_or(NodeId(i as u32));
        self.nodes.push(Some(NodeEntry {
            id,
            capacity_memory: spec.capacity.memory_bytes,
            allocatable_memory: spec.allocatable.memory_bytes,
            condition: objects::node_condition_of(node),
            pressure: false,
            used: Resources::ZERO,
            pods: Vec::new(),
            dirty: false,
        }));
        self.node_index.insert(name.clone(), i);
        // pods the watch showed before their node
        let waiting: Vec<u64> = self
            .pods
            .iter()
            .filter(|(_, p)| matches!(&p.run, PodRun::Waiting(n) if *n == name))
            .map(|(&s, _)| s)
            .collect();
        let mut waiting = waiting;
        waiting.sort_unstable();
        for serial in waiting {
            self.start_playing(serial, i, now);
        }
        self.settle(now);
    }

    /// A node is gone from the API: its pods are forgotten without a word
    /// (whoever deleted the node deletes them too).
    pub fn node_gone(&mut self, name: &str) {
        let Some(i) = self.node_index.remove(name) else {
            return;
        };
        let Some(node) = self.nodes[i].take() else {
            return;
        };
        for serial in node.pods {
            if let Some(p) = self.pods.remove(&serial) {
                self.pod_index.remove(&p.key);
                if matches!(p.run, PodRun::Playing { .. }) {
                    self.playing -= 1;
                }
            }
        }
    }

    /// A pod of the run as the watch shows it (added or changed).
    pub fn pod_seen(&mut self, pod: &core::Pod, now: Time) -> Result<(), Skipped> {
        let now = self.step_to(now);
        let key = PodKey::of(pod);
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let deleting = pod.metadata.deletion_timestamp.is_some();
        if let Some(&serial) = self.pod_index.get(&key) {
            if self.pods.get(&serial).is_some_and(|p| p.uid == uid) {
                if deleting {
                    self.delete(serial, now);
                }
                return Ok(());
            }
            // a new pod under an old name: the old one is gone
            self.pod_gone(&key, now);
        }
        let Some(node_name) = objects::pod_node_name(pod) else {
            return Ok(());
        };
        let terminal = matches!(
            pod.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        );
        let (Some(ident), Some(seed)) = (objects::pod_identity_of(pod), objects::pod_seed_of(pod)) else {
            return Err(Skipped::NotARunPod(key));
        };
        let spec = objects::pod_spec_of(pod).map_err(|e| Skipped::BadSpec(key.clone(), e.to_string()))?;
        let serial = self.next_serial;
        self.next_serial += 1;
        self.pod_index.insert(key.clone(), serial);
        self.pods.insert(
            serial,
            PodEntry {
                key,
                uid,
                ident: PodIdent {
                    pod: ident.pod,
                    slot: ident.slot,
                    incarnation: ident.incarnation,
                },
                seed,
                spec,
                run: PodRun::Waiting(node_name.to_string()),
                containers: Containers::default(),
                dirty: false,
                finalised: false,
            },
        );
        if terminal {
            // over before this emulator saw it (another emulator played it)
            if let Some(p) = self.pods.get_mut(&serial) {
                p.run = PodRun::Done;
            }
            if deleting {
                self.finalise(serial);
            }
            return Ok(());
        }
        if let Some(&i) = self.node_index.get(node_name) {
            self.start_playing(serial, i, now);
            if deleting {
                self.delete(serial, now);
            }
            self.settle(now);
        } else if deleting {
            // not on a node of ours: not ours to finalise
            self.forget(serial);
        }
        Ok(())
    }

    /// A pod is gone from the API.
    pub fn pod_gone(&mut self, key: &PodKey, now: Time) {
        let now = self.step_to(now);
        let Some(&serial) = self.pod_index.get(key) else {
            return;
        };
        if let Some(p) = self.pods.get(&serial)
            && let PodRun::Playing { node, lifecycle } = &p.run
        {
            let (node, usage) = (*node, lifecycle.usage());
            self.take_off_node(serial, node, usage);
            self.playing -= 1;
        }
        self.forget(serial);
        self.settle(now);
    }

    /// Every pod the driver knows: after a watch relisted, the caller
    /// forgets those the list did not show.
    pub fn pod_keys(&self) -> Vec<PodKey> {
        self.pod_index.keys().cloned().collect()
    }

    /// Every node the driver plays, for the same purpose.
    pub fn node_names(&self) -> Vec<String> {
        self.node_index.keys().cloned().collect()
    }

    /// A fault kills the pod's running container.
    pub fn kill(&mut self, key: &PodKey, now: Time) -> bool {
        let now = self.step_to(now);
        let Some(&serial) = self.pod_index.get(key) else {
            return false;
        };
        if !self.is_playing(serial) {
            return false;
        }
        self.step(serial, Input::Kill, now);
        self.settle(now);
        true
    }

    /// Evicts every pod on the node at once (the node left the cluster).
    pub fn evict_all(&mut self, name: &str, now: Time) {
        let now = self.step_to(now);
        let Some(&i) = self.node_index.get(name) else {
            return;
        };
        self.step_node_pods(i, Input::Evict, now);
        self.settle(now);
    }

    /// FailNode, RecoverNode and DegradeNode, as the simulator applies them.
    /// Returns whether the node is played here.
    pub fn set_condition(&mut self, name: &str, condition: NodeCondition, now: Time) -> bool {
        let now = self.step_to(now);
        let Some(&i) = self.node_index.get(name) else {
            return false;
        };
        let Some(n) = self.nodes[i].as_mut() else {
            return false;
        };
        let old = n.condition;
        if old == condition {
            return true;
        }
        if condition == NodeCondition::Degraded && old == NodeCondition::NotReady {
            tracing::debug!(node = name, "degrade: the node is not ready; ignored");
            return true;
        }
        n.condition = condition;
        self.outputs.push(Output::NodeCondition {
            name: name.to_string(),
            condition,
        });
        self.notify_pods(i, now);
        self.settle(now);
        true
    }

    /// Fires every timer due at or before `now`, each at its own time.
    pub fn advance(&mut self, now: Time) {
        while let Some(Reverse(due)) = self.timers.peek() {
            if due.at > now {
                break;
            }
            let Some(Reverse(due)) = self.timers.pop() else {
                break;
            };
            let at = self.step_to(due.at);
            self.step(
                due.pod,
                Input::Timer {
                    kind: due.kind,
                    generation: due.generation,
                },
                at,
            );
            self.settle(at);
        }
        self.step_to(now);
    }

    /// What the I/O layer has to do since the last drain: one status per
    /// changed pod (its latest), deletions, node conditions.
    pub fn drain(&mut self, out: &mut Vec<Output>) {
        out.append(&mut self.outputs);
        let dirty = std::mem::take(&mut self.dirty_pods);
        for serial in &dirty {
            let Some(p) = self.pods.get_mut(serial) else {
                continue;
            };
            if !p.dirty {
                continue;
            }
            p.dirty = false;
            let p = &self.pods[serial];
            match (&p.run, p.containers.end) {
                (_, Some(PodEnd::Deleted(_))) => {}
                (_, Some(PodEnd::Evicted)) => out.push(Output::Evict(self.view_of(p))),
                _ => out.push(Output::PodStatus(self.view_of(p))),
            }
        }
        self.dirty_pods = dirty;
        self.dirty_pods.clear();
    }

    fn view_of(&self, p: &PodEntry) -> PodView {
        let phase = match (&p.run, p.containers.end) {
            (PodRun::Playing { lifecycle, .. }, _) => lifecycle.phase(),
            (_, Some(end)) => PodPhase::Ended(end),
            _ => PodPhase::Starting,
        };
        PodView {
            key: p.key.clone(),
            uid: p.uid.clone(),
            phase,
            containers: p.containers.clone(),
        }
    }

    fn is_playing(&self, serial: u64) -> bool {
        self.pods
            .get(&serial)
            .is_some_and(|p| matches!(p.run, PodRun::Playing { .. }))
    }

    fn health(&self, node: usize) -> NodeHealth {
        self.nodes[node].as_ref().map_or(NodeHealth::HEALTHY, |n| NodeHealth {
            condition: n.condition,
            memory_pressure: n.pressure,
        })
    }

    fn start_playing(&mut self, serial: u64, node: usize, now: Time) {
        let health = self.health(node);
        let Some(node_id) = self.nodes[node].as_ref().map(|n| n.id) else {
            return;
        };
        let Some(p) = self.pods.get_mut(&serial) else {
            return;
        };
        let ctx = PodContext {
            spec: &p.spec,
            config: &self.model,
            seed: p.seed,
        };
        self.effects.clear();
        let lifecycle = PodLifecycle::bind(p.ident, node_id, health, now, &ctx, &mut self.effects);
        p.containers.bound_at = now;
        p.containers.ready_changed = now;
        p.run = PodRun::Playing {
            node,
            lifecycle: Box::new(lifecycle),
        };
        self.playing += 1;
        if let Some(n) = self.nodes[node].as_mut() {
            n.pods.push(serial);
        }
        // kubelet reports a bound pod at once (Pending, ContainerCreating)
        p.dirty = true;
        self.dirty_pods.push(serial);
        self.after_step(serial, node, Resources::ZERO, now);
    }

    fn step(&mut self, serial: u64, input: Input, now: Time) {
        let Some(p) = self.pods.get_mut(&serial) else {
            return;
        };
        let PodRun::Playing { node, lifecycle } = &mut p.run else {
            return;
        };
        let ctx = PodContext {
            spec: &p.spec,
            config: &self.model,
            seed: p.seed,
        };
        let before = lifecycle.usage();
        self.effects.clear();
        lifecycle.handle(input, now, &ctx, &mut self.effects);
        let node = *node;
        self.after_step(serial, node, before, now);
    }

    /// Carries out a step's effects: timers, the container view, the node's
    /// memory, and the pod's end.
    fn after_step(&mut self, serial: u64, node: usize, before: Resources, now: Time) {
        let Some(p) = self.pods.get_mut(&serial) else {
            return;
        };
        let PodRun::Playing { lifecycle, .. } = &p.run else {
            return;
        };
        let (after, ended, running) = (lifecycle.usage(), lifecycle.ended(), lifecycle.is_running());
        for t in &self.effects.timers {
            self.timers.push(Reverse(Due {
                at: t.at,
                seq: self.next_seq,
                pod: serial,
                kind: t.kind,
                generation: t.generation,
            }));
            self.next_seq += 1;
        }
        let mut changed = !self.effects.events.is_empty() || p.containers.usage != after;
        for event in &self.effects.events {
            p.containers.on_event(event, now);
        }
        p.containers.usage = after;
        if running != p.containers.ready {
            p.containers.ready = running;
            p.containers.ready_changed = now;
            changed = true;
        }
        if let Some(end) = ended {
            p.containers.end = Some(end);
            p.run = PodRun::Done;
            changed = true;
        }
        if changed && !p.dirty {
            p.dirty = true;
            self.dirty_pods.push(serial);
        }
        if let Some(log) = self.log.as_mut() {
            log.extend(self.effects.events.iter().map(|e| (now, e.clone())));
        }
        if before != after {
            if let Some(n) = self.nodes[node].as_mut() {
                n.used = n.used - before + after;
            }
            self.mark_node(node);
        }
        if let Some(end) = ended {
            self.playing -= 1;
            self.take_off_node(serial, node, Resources::ZERO);
            if matches!(end, PodEnd::Evicted | PodEnd::Deleted(_)) {
                self.finalise(serial);
            }
        }
    }

    /// The pod is being deleted: it ends (if it still plays) and the
    /// deletion is finalised.
    fn delete(&mut self, serial: u64, now: Time) {
        if self
            .pods
            .get(&serial)
            .is_some_and(|p| matches!(p.run, PodRun::Waiting(_)))
        {
            // not on a node of ours: not ours to finalise
            self.forget(serial);
        } else if self.is_playing(serial) {
            // the player knows why it deleted the pod; the emulator does not need to
            self.step(serial, Input::Delete(DeleteCause::Scenario), now);
            self.settle(now);
        } else {
            self.finalise(serial);
        }
    }

    fn finalise(&mut self, serial: u64) {
        let Some(p) = self.pods.get_mut(&serial) else {
            return;
        };
        if p.finalised {
            return;
        }
        p.finalised = true;
        if p.containers.end == Some(PodEnd::Evicted) {
            // the eviction's status goes out with the pod's view at drain
            return;
        }
        self.outputs.push(Output::Delete {
            key: p.key.clone(),
            uid: p.uid.clone(),
        });
    }

    fn forget(&mut self, serial: u64) {
        if let Some(p) = self.pods.remove(&serial) {
            self.pod_index.remove(&p.key);
        }
    }

    fn take_off_node(&mut self, serial: u64, node: usize, usage: Resources) {
        if let Some(n) = self.nodes[node].as_mut() {
            if let Some(pos) = n.pods.iter().position(|&s| s == serial) {
                n.pods.swap_remove(pos);
            }
            if !usage.is_zero() {
                n.used -= usage;
            }
        }
        if !usage.is_zero() {
            self.mark_node(node);
        }
    }

    fn mark_node(&mut self, node: usize) {
        if let Some(n) = self.nodes[node].as_mut()
            && !n.dirty
        {
            n.dirty = true;
            self.dirty_nodes.push(node);
        }
    }

    /// Tells every pod on `node` its current health.
    fn notify_pods(&mut self, node: usize, now: Time) {
        let health = self.health(node);
        self.step_node_pods(node, Input::NodeChanged(health), now);
    }

    /// Feeds `input` to every pod on the node (a copy of its list: a step
    /// may take the pod off it).
    fn step_node_pods(&mut self, node: usize, input: Input, now: Time) {
        let pods = self.nodes[node].as_ref().map(|n| n.pods.clone()).unwrap_or_default();
        for serial in pods {
            self.step(serial, input, now);
        }
    }

    /// The consequences of memory-use changes, as the simulator's `settle`:
    /// OOM kills on nodes past their capacity, then memory-pressure changes.
    fn settle(&mut self, now: Time) {
        while let Some(node) = self.dirty_nodes.pop() {
            let Some(n) = self.nodes[node].as_mut() else {
                continue;
            };
            n.dirty = false;
            self.node_oom(node, now);
            let Some(n) = self.nodes[node].as_mut() else {
                continue;
            };
            let pressure = under_memory_pressure(n.used.memory_bytes, n.allocatable_memory, &self.model);
            if pressure != n.pressure {
                n.pressure = pressure;
                self.notify_pods(node, now);
            }
        }
    }

    fn node_oom(&mut self, node: usize, now: Time) {
        let Some(n) = self.nodes[node].as_ref() else {
            return;
        };
        let capacity = n.capacity_memory;
        if n.used.memory_bytes <= capacity {
            return;
        }
        let mut running: Vec<(PodId, OomCandidate)> = n
            .pods
            .iter()
            .filter_map(|serial| {
                let p = self.pods.get(serial)?;
                let PodRun::Playing { lifecycle, .. } = &p.run else {
                    return None;
                };
                lifecycle.is_running().then(|| {
                    (
                        p.ident.pod,
                        OomCandidate {
                            qos: p.spec.qos_class(),
                            memory_request: p.spec.requests.memory_bytes,
                            usage: lifecycle.usage().memory_bytes,
                        },
                    )
                })
            })
            .collect();
        let victims = oom_victim_pods(&mut running, capacity);
        if victims.is_empty() {
            return;
        }
        let by_pod: HashMap<PodId, u64> = n
            .pods
            .iter()
            .filter_map(|s| Some((self.pods.get(s)?.ident.pod, *s)))
            .collect();
        for pod in victims {
            if let Some(&serial) = by_pod.get(&pod) {
                self.step(serial, Input::OomKill, now);
            }
        }
    }
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
