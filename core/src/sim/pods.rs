//! The pod table: creating pods, driving bound pods' lifecycles and carrying
//! out their effects on nodes, records and owners.

use super::Sim;
use super::events::Queued;
use crate::behaviour::{Input, NodeHealth, PodContext, PodEnd, PodIdent, PodLifecycle, owner_recreates};
use crate::node::NodeId;
use crate::pod::{PodId, PodSlot};
use crate::record::{DeleteCause, Event, EventKind, Record, RecordSink};
use crate::resources::Resources;
use crate::trouble::Trouble;
use crate::verdict::Answer;
use crate::view::BoundPod;

#[derive(Debug, Clone, Default)]
pub(crate) struct Pending {
    pub(crate) attempts: u32,
    /// the scheduler's last answer, to record only changes
    pub(crate) last_answer: Option<Answer>,
    /// invalidates retries queued before the latest attempt
    pub(crate) retry_generation: u32,
}

#[derive(Debug, Clone)]
pub(crate) enum PodState {
    Pending(Pending),
    Bound {
        lifecycle: Box<PodLifecycle>,
        /// index in the node's pod list
        pos: usize,
    },
    Gone,
}

#[derive(Debug, Clone)]
pub(crate) struct PodEntry {
    pub(crate) slot: PodSlot,
    pub(crate) incarnation: u32,
    pub(crate) created: crate::time::Time,
    pub(crate) state: PodState,
}

/// A slot's current pod and how many pods it had.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct SlotState {
    pub(crate) current: Option<PodId>,
    pub(crate) incarnations: u32,
}

impl Sim {
    pub(super) fn node_health(&self, node: NodeId) -> NodeHealth {
        NodeHealth {
            condition: self.nodes[node.index()].condition,
            memory_pressure: self.node_pressure[node.index()],
        }
    }

    pub(super) fn emit(&mut self, sink: &mut dyn RecordSink, kind: EventKind) {
        let t = self.now;
        self.write(sink, Record::Event(Event { t, kind }));
    }

    /// Creates the next pod of `slot` (pending) unless the slot has one.
    pub(super) fn create_pod(&mut self, slot: PodSlot, sink: &mut dyn RecordSink) {
        let w = slot.workload.0 as usize;
        let Some(workload) = self.timeline.workloads.get(w) else {
            return;
        };
        let state = self.slots.entry(slot).or_default();
        if let Some(current) = state.current {
            tracing::warn!(?slot, pod = current.0, "slot already has a pod; create ignored");
            return;
        }
        let id = PodId(self.pods.len() as u64);
        let incarnation = state.incarnations;
        state.incarnations = state.incarnations.saturating_add(1);
        state.current = Some(id);
        let spec = workload.spec_of(slot.ordinal);
        let event = EventKind::pod_created(id, slot, spec);
        let priority = spec.priority;
        self.pods.push(PodEntry {
            slot,
            incarnation,
            created: self.now,
            state: PodState::Pending(Pending::default()),
        });
        self.pending_count += 1;
        self.histories[w].pods = self.histories[w].pods.saturating_add(1);
        self.summary.pods_created += 1;
        self.emit(sink, event);
        self.active.push(id, priority, self.now);
    }

    /// The slot's current pod, if it has one.
    pub(super) fn current_pod(&self, slot: PodSlot) -> Option<PodId> {
        self.slots.get(&slot).and_then(|s| s.current)
    }

    pub(super) fn is_pending(&self, pod: PodId) -> bool {
        matches!(
            self.pods.get(pod.0 as usize).map(|p| &p.state),
            Some(PodState::Pending(_))
        )
    }

    /// Deletes a pod that has no node yet.
    pub(super) fn delete_pending(&mut self, pod: PodId, cause: DeleteCause, sink: &mut dyn RecordSink) {
        let Some(entry) = self.pods.get_mut(pod.0 as usize) else {
            return;
        };
        if !matches!(entry.state, PodState::Pending(_)) {
            return;
        }
        entry.state = PodState::Gone;
        let slot = entry.slot;
        self.pending_count = self.pending_count.saturating_sub(1);
        self.forget_nomination(pod);
        self.emit(sink, EventKind::PodDeleted { pod, node: None, cause });
        self.pod_gone(pod, slot, PodEnd::Deleted(cause), sink);
    }

    /// Binds a pending pod to `node` (already checked to have room).
    pub(super) fn bind(&mut self, pod: PodId, node: NodeId, sink: &mut dyn RecordSink) {
        let health = self.node_health(node);
        let Some(entry) = self.pods.get_mut(pod.0 as usize) else {
            return;
        };
        if !matches!(entry.state, PodState::Pending(_)) {
            return;
        }
        let slot = entry.slot;
        let spec = self.timeline.workloads[slot.workload.0 as usize].spec_of(slot.ordinal);
        let ctx = PodContext {
            spec,
            config: &self.model,
            seed: self.seed,
        };
        let ident = PodIdent {
            pod,
            slot,
            incarnation: entry.incarnation,
        };
        self.effects.clear();
        let lifecycle = PodLifecycle::bind(ident, node, health, self.now, &ctx, &mut self.effects);
        let usage = lifecycle.usage();
        let pos = self.node_pods[node.index()].len();
        self.node_pods[node.index()].push(BoundPod {
            id: pod,
            priority: spec.priority,
            requests: spec.requests,
            started: self.now,
        });
        *self.bound_priorities.entry(spec.priority).or_default() += 1;
        entry.state = PodState::Bound {
            lifecycle: Box::new(lifecycle),
            pos,
        };
        let n = &mut self.nodes[node.index()];
        n.requested += spec.requests;
        n.non_zero_requested += spec.requests.non_zero_for_scoring();
        n.pod_count += 1;
        if spec.memory_limit().is_none() {
            n.unlimited.pods += 1;
        }
        self.pending_count = self.pending_count.saturating_sub(1);
        self.bound_count += 1;
        self.forget_nomination(pod);
        self.summary.binds += 1;
        self.emit(sink, EventKind::PodBound { pod, node });
        self.after_step(pod, node, Resources::ZERO, usage, None, sink);
    }

    /// Feeds `input` to a bound pod's lifecycle and carries out the effects.
    pub(super) fn step_pod(&mut self, pod: PodId, input: Input, sink: &mut dyn RecordSink) {
        let Some(entry) = self.pods.get_mut(pod.0 as usize) else {
            return;
        };
        let PodState::Bound { lifecycle, .. } = &mut entry.state else {
            return;
        };
        let ctx = PodContext {
            spec: self.timeline.workloads[entry.slot.workload.0 as usize].spec_of(entry.slot.ordinal),
            config: &self.model,
            seed: self.seed,
        };
        let before = lifecycle.usage();
        self.effects.clear();
        lifecycle.handle(input, self.now, &ctx, &mut self.effects);
        let (after, node, ended) = (lifecycle.usage(), lifecycle.node(), lifecycle.ended());
        self.after_step(pod, node, before, after, ended, sink);
    }

    fn after_step(
        &mut self,
        pod: PodId,
        node: NodeId,
        before: Resources,
        after: Resources,
        ended: Option<PodEnd>,
        sink: &mut dyn RecordSink,
    ) {
        let mut effects = std::mem::take(&mut self.effects);
        for t in &effects.timers {
            self.queue.push(
                t.at,
                Queued::Timer {
                    pod,
                    kind: t.kind,
                    generation: t.generation,
                },
            );
        }
        let w = self.pods[pod.0 as usize].slot.workload.0 as usize;
        for event in effects.events.drain(..) {
            if let EventKind::ContainerStarted { .. } = event {
                self.summary.container_starts += 1;
            }
            if let Some(trouble) = Trouble::of(&event) {
                self.trouble.note(self.now, node, trouble, &mut self.nodes);
                trouble.add_to_history(&mut self.histories[w]);
            }
            self.emit(sink, event);
        }
        self.effects = effects;
        if before != after {
            let spec = self.timeline.workloads[w].spec_of(self.pods[pod.0 as usize].slot.ordinal);
            let n = &mut self.nodes[node.index()];
            if spec.memory_limit().is_none() {
                let excess = |u: Resources| u.memory_bytes.saturating_sub(spec.requests.memory_bytes);
                n.unlimited.excess_bytes = (n.unlimited.excess_bytes + excess(after)).saturating_sub(excess(before));
            }
            n.set_used(n.used - before + after, self.now);
            self.mark_dirty(node);
        }
        if let Some(end) = ended {
            self.release(pod, end, sink);
        }
    }

    /// Takes an ended pod off its node.
    fn release(&mut self, pod: PodId, end: PodEnd, sink: &mut dyn RecordSink) {
        let Some(entry) = self.pods.get_mut(pod.0 as usize) else {
            return;
        };
        let PodState::Bound { lifecycle, pos } = std::mem::replace(&mut entry.state, PodState::Gone) else {
            return;
        };
        let slot = entry.slot;
        let node = lifecycle.node();
        let list = &mut self.node_pods[node.index()];
        let gone = list.swap_remove(pos);
        if let Some(count) = self.bound_priorities.get_mut(&gone.priority) {
            *count -= 1;
            if *count == 0 {
                self.bound_priorities.remove(&gone.priority);
            }
        }
        if let Some(moved) = list.get(pos)
            && let Some(PodState::Bound { pos: moved_pos, .. }) =
                self.pods.get_mut(moved.id.0 as usize).map(|e| &mut e.state)
        {
            *moved_pos = pos;
        }
        let spec = self.timeline.workloads[slot.workload.0 as usize].spec_of(slot.ordinal);
        let requests = spec.requests;
        let unlimited = spec.memory_limit().is_none();
        let n = &mut self.nodes[node.index()];
        if unlimited {
            n.unlimited.pods = n.unlimited.pods.saturating_sub(1);
        }
        n.requested -= requests;
        n.non_zero_requested -= requests.non_zero_for_scoring();
        n.pod_count = n.pod_count.saturating_sub(1);
        self.bound_count = self.bound_count.saturating_sub(1);
        self.pod_gone(pod, slot, end, sink);
    }

    /// The slot lost its pod; its owner may replace it.
    fn pod_gone(&mut self, pod: PodId, slot: PodSlot, end: PodEnd, sink: &mut dyn RecordSink) {
        if let Some(state) = self.slots.get_mut(&slot)
            && state.current == Some(pod)
        {
            state.current = None;
        }
        let recreate = self.timeline.workloads[slot.workload.0 as usize].recreate;
        if owner_recreates(recreate, end) {
            self.create_pod(slot, sink);
        }
    }
}
