//! The timeline's actions, and what follows from a node's memory use:
//! pressure (a crash-hazard factor) and the kernel's OOM killer.

use super::Sim;
use super::pods::PodState;
use crate::behaviour::{Input, OomCandidate, oom_victim_pods, under_memory_pressure};
use crate::node::{MemoryTrend, NodeCondition, NodeId};
use crate::pod::PodId;
use crate::record::{DeleteCause, EventKind, RecordSink};
use crate::timeline::Action;
use crate::view::BoundPod;

impl Sim {
    pub(super) fn apply_action(&mut self, action: Action, sink: &mut dyn RecordSink) {
        match action {
            Action::CreatePod { slot } => self.create_pod(slot, sink),
            Action::DeletePod { slot, recreate } => {
                let cause = if recreate {
                    DeleteCause::Churn
                } else {
                    DeleteCause::Scenario
                };
                match self.current_pod(slot) {
                    Some(pod) if self.is_pending(pod) => self.delete_pending(pod, cause, sink),
                    Some(pod) => self.step_pod(pod, Input::Delete(cause), sink),
                    None => tracing::debug!(?slot, "delete: the slot has no pod"),
                }
            }
            Action::KillPod { slot } => match self.current_pod(slot) {
                Some(pod) => self.step_pod(pod, Input::Kill, sink),
                None => tracing::debug!(?slot, "kill: the slot has no pod"),
            },
            Action::FailNode { node } => self.set_condition(node, NodeCondition::NotReady, sink),
            Action::RecoverNode { node } => self.set_condition(node, NodeCondition::Ready, sink),
            Action::DegradeNode { node } => self.set_condition(node, NodeCondition::Degraded, sink),
            Action::LoseNode { node } => self.lose_node(node, sink),
            Action::ReplaceNode { node } => self.replace_node(node, sink),
        }
    }

    /// The node leaves: NotReady to schedulers, every pod on it evicted now.
    fn lose_node(&mut self, node: NodeId, sink: &mut dyn RecordSink) {
        let Some(state) = self.nodes.get_mut(node.index()) else {
            return;
        };
        if self.lost[node.index()] {
            return;
        }
        self.lost[node.index()] = true;
        state.set_condition(NodeCondition::NotReady, self.now);
        self.emit(sink, EventKind::NodeLost { node });
        self.step_node_pods(node, Input::Evict, sink);
    }

    /// A fresh node in the lost one's place.
    fn replace_node(&mut self, node: NodeId, sink: &mut dyn RecordSink) {
        if !self.lost.get(node.index()).copied().unwrap_or(false) {
            tracing::debug!(node = node.0, "replace: the node was not lost; ignored");
            return;
        }
        self.lost[node.index()] = false;
        self.trouble.forget_node(node, &mut self.nodes);
        let now = self.now;
        let state = &mut self.nodes[node.index()];
        state.set_condition(NodeCondition::Ready, now);
        state.condition_since = now;
        state.unschedulable = false;
        state.since = now;
        // a fresh machine: no memory history
        state.memory_trend = MemoryTrend {
            smoothed_bytes: 0.0,
            at: now,
        };
        self.emit(sink, EventKind::NodeReplaced { node });
    }

    fn set_condition(&mut self, node: NodeId, condition: NodeCondition, sink: &mut dyn RecordSink) {
        let Some(state) = self.nodes.get_mut(node.index()) else {
            return;
        };
        let old = state.condition;
        if old == condition {
            return;
        }
        if self.lost[node.index()] {
            tracing::debug!(node = node.0, ?condition, "the node is lost until replaced; ignored");
            return;
        }
        if condition == NodeCondition::Degraded && old == NodeCondition::NotReady {
            tracing::debug!(node = node.0, "degrade: the node is not ready; ignored");
            return;
        }
        state.set_condition(condition, self.now);
        let event = match condition {
            NodeCondition::NotReady => EventKind::NodeFailed { node },
            NodeCondition::Degraded => EventKind::NodeDegraded { node },
            NodeCondition::Ready => EventKind::NodeRecovered { node },
        };
        self.emit(sink, event);
        self.notify_pods(node, sink);
    }

    /// Tells every pod on `node` its current health.
    fn notify_pods(&mut self, node: NodeId, sink: &mut dyn RecordSink) {
        let health = self.node_health(node);
        self.step_node_pods(node, Input::NodeChanged(health), sink);
    }

    /// Feeds `input` to every pod on `node` (the list is copied first: a
    /// step may take the pod off the node).
    fn step_node_pods(&mut self, node: NodeId, input: Input, sink: &mut dyn RecordSink) {
        let mut pods = std::mem::take(&mut self.scratch_pods);
        pods.clear();
        pods.extend(self.node_pods[node.index()].iter().map(|b| b.id));
        for &pod in &pods {
            self.step_pod(pod, input, sink);
        }
        self.scratch_pods = pods;
    }

    pub(super) fn mark_dirty(&mut self, node: NodeId) {
        if !self.is_dirty[node.index()] {
            self.is_dirty[node.index()] = true;
            self.dirty.push(node);
        }
    }

    /// Handles the consequences of memory-use changes: OOM kills on nodes
    /// past their capacity, then memory-pressure changes.
    pub(super) fn settle(&mut self, sink: &mut dyn RecordSink) {
        while let Some(node) = self.dirty.pop() {
            self.is_dirty[node.index()] = false;
            self.node_oom(node, sink);
            let n = &self.nodes[node.index()];
            let pressure = under_memory_pressure(n.used.memory_bytes, n.spec.allocatable.memory_bytes, &self.model);
            if pressure != self.node_pressure[node.index()] {
                self.node_pressure[node.index()] = pressure;
                self.notify_pods(node, sink);
            }
        }
    }

    /// The kernel's OOM killer on a node whose containers use more memory
    /// than it has.
    fn node_oom(&mut self, node: NodeId, sink: &mut dyn RecordSink) {
        let n = &self.nodes[node.index()];
        let capacity = n.spec.capacity.memory_bytes;
        if n.used.memory_bytes <= capacity {
            return;
        }
        let mut running: Vec<(PodId, OomCandidate)> = self.node_pods[node.index()]
            .iter()
            .filter_map(|&BoundPod { id: pod, .. }| {
                let entry = self.pods.get(pod.0 as usize)?;
                let PodState::Bound { lifecycle, .. } = &entry.state else {
                    return None;
                };
                if !lifecycle.is_running() {
                    return None;
                }
                let spec = self.timeline.workloads[entry.slot.workload.0 as usize].spec_of(entry.slot.ordinal);
                Some((
                    pod,
                    OomCandidate {
                        qos: spec.qos_class(),
                        memory_request: spec.requests.memory_bytes,
                        usage: lifecycle.usage().memory_bytes,
                    },
                ))
            })
            .collect();
        for pod in oom_victim_pods(&mut running, capacity) {
            self.step_pod(pod, Input::OomKill, sink);
        }
    }
}
