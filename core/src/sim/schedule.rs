//! Scheduling: pops the active queue and asks the policy, one pod at a time,
//! so each placement sees the ones before it.

use super::Sim;
use super::events::Queued;
use super::pods::PodState;
use crate::decision::DecisionRecord;
use crate::pod::PodId;
use crate::policy::Scheduler;
use crate::queue::scheduling_backoff;
use crate::record::RecordSink;
use crate::verdict::{Answer, Verdict};
use crate::view::{ClusterView, PendingPod, Placement};
use std::borrow::Cow;
use std::time::Instant;

impl Sim {
    /// Decides for the active pods, one at a time; returns whether it did
    /// anything (nothing while a charged decision is still in flight).
    pub(super) fn schedule(&mut self, policy: &mut dyn Scheduler, sink: &mut dyn RecordSink) -> bool {
        let mut progressed = false;
        loop {
            if self.decisions.busy(self.now) {
                return progressed;
            }
            let Some(pod) = self.active.pop() else {
                return progressed;
            };
            progressed = true;
            let Some(entry) = self.pods.get(pod.0 as usize) else {
                continue;
            };
            let PodState::Pending(pending) = &entry.state else {
                continue;
            };
            let w = entry.slot.workload.0 as usize;
            let spec = self.timeline.workloads[w].spec_of(entry.slot.ordinal);
            let request = PendingPod {
                id: pod,
                slot: entry.slot,
                spec,
                created: entry.created,
                attempts: pending.attempts,
                history: self.histories[w],
            };
            let view = ClusterView {
                now: self.now,
                nodes: &self.nodes,
                pending_pods: self.pending_count,
                bound_pods: self.bound_count,
                pods_by_node: &self.node_pods,
                lowest_bound_priority: self.bound_priorities.first_key_value().map(|(&p, _)| p),
                nominated: &self.nominated,
            };
            self.summary.scheduling_attempts += 1;
            let started = Instant::now();
            let placement = policy.schedule(&request, &view);
            let done = self.decisions.decided(self.now, started.elapsed());
            if let Some(explained) = policy.explained() {
                let workload = Some(self.timeline.workloads[w].name.as_str());
                sink.decision(DecisionRecord::of(&request, &view, &placement, &explained, workload));
            }
            if done > self.now {
                self.decisions.hold(pod, placement);
                self.queue.push(done, Queued::DecisionDone);
                return true;
            }
            self.place(pod, placement, sink);
        }
    }

    /// Carries out a decision for a pod that may have changed since (when
    /// decision time is charged): a pod no longer pending is left alone, and
    /// a bind is checked against the cluster as it is now.
    pub(super) fn place(&mut self, pod: PodId, placement: Placement, sink: &mut dyn RecordSink) {
        let Some(entry) = self.pods.get(pod.0 as usize) else {
            return;
        };
        if !matches!(entry.state, PodState::Pending(_)) {
            return;
        }
        let spec = self.timeline.workloads[entry.slot.workload.0 as usize].spec_of(entry.slot.ordinal);
        match placement.verdict(&self.view(), spec) {
            Verdict::Bind(node) => self.bind(pod, node, sink),
            Verdict::NotPlaced {
                answer,
                reason,
                rejected_bind,
            } => {
                if rejected_bind {
                    tracing::warn!(pod = pod.0, %reason, "the scheduler bound a pod where it cannot run; treated as unschedulable");
                    self.summary.rejected_binds += 1;
                }
                self.not_placed(pod, answer, reason, sink);
            }
            Verdict::Preempt { node, victims, reason } => {
                if let Err(why) = self.preempt(pod, node, &victims, sink) {
                    tracing::warn!(pod = pod.0, node = node.0, %why, "the scheduler's preemption cannot be carried out; nothing was deleted");
                    self.summary.rejected_preemptions += 1;
                }
                self.not_placed(pod, Answer::Unschedulable, reason, sink);
            }
        }
        self.settle(sink);
    }

    pub(super) fn view(&self) -> ClusterView<'_> {
        ClusterView {
            now: self.now,
            nodes: &self.nodes,
            pending_pods: self.pending_count,
            bound_pods: self.bound_count,
            pods_by_node: &self.node_pods,
            lowest_bound_priority: self.bound_priorities.first_key_value().map(|(&p, _)| p),
            nominated: &self.nominated,
        }
    }

    /// The pod stays pending and retries after kube-scheduler's back-off;
    /// an event is recorded when its answer changes.
    pub(super) fn not_placed(
        &mut self,
        pod: PodId,
        answer: Answer,
        reason: Cow<'static, str>,
        sink: &mut dyn RecordSink,
    ) {
        let Some(PodState::Pending(pending)) = self.pods.get_mut(pod.0 as usize).map(|e| &mut e.state) else {
            return;
        };
        pending.attempts = pending.attempts.saturating_add(1);
        pending.retry_generation = pending.retry_generation.wrapping_add(1);
        let generation = pending.retry_generation;
        let changed = pending.last_answer != Some(answer);
        pending.last_answer = Some(answer);
        let at = self.now + scheduling_backoff(pending.attempts, &self.model);
        self.queue.push(at, Queued::Retry { pod, generation });
        if changed {
            self.emit(sink, answer.event(pod, reason));
        }
    }

    /// A pending pod's back-off is over: back into the active queue.
    pub(super) fn retry(&mut self, pod: PodId, generation: u32) {
        let Some(entry) = self.pods.get(pod.0 as usize) else {
            return;
        };
        if let PodState::Pending(pending) = &entry.state
            && pending.retry_generation == generation
        {
            let priority = self.timeline.workloads[entry.slot.workload.0 as usize]
                .spec_of(entry.slot.ordinal)
                .priority;
            self.active.push(pod, priority, entry.created);
        }
    }
}
