//! Scheduling: pops the active queue and asks the placer, one pod at a time,
//! so each placement sees the ones before it.

use super::active::scheduling_backoff;
use super::events::Queued;
use super::pods::{Answer, PodState};
use super::{Placer, Sim};
use crate::pod::PodId;
use crate::record::{EventKind, RecordSink};
use crate::view::{ClusterView, PendingPod, Placement};
use std::borrow::Cow;

impl Sim {
    pub(super) fn schedule(&mut self, placer: &mut Placer<'_>, sink: &mut dyn RecordSink) {
        while let Some(pod) = self.active.pop() {
            let Some(entry) = self.pods.get(pod.0 as usize) else {
                continue;
            };
            let PodState::Pending(pending) = &entry.state else {
                continue;
            };
            let w = entry.slot.workload.0 as usize;
            let spec = &self.timeline.workloads[w].spec;
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
            };
            self.summary.scheduling_attempts += 1;
            let placement = placer(&request, &view);
            match placement {
                Placement::Bind(node) => match view.check_bind(node, spec) {
                    Ok(()) => self.bind(pod, node, sink),
                    Err(why) => {
                        tracing::warn!(pod = pod.0, node = node.0, %why, "the scheduler bound a pod where it cannot run; treated as unschedulable");
                        self.summary.rejected_binds += 1;
                        self.not_placed(
                            pod,
                            Answer::Unschedulable,
                            Cow::Owned(format!("bind rejected: {why}")),
                            sink,
                        );
                    }
                },
                Placement::Unschedulable { reason } => self.not_placed(pod, Answer::Unschedulable, reason, sink),
                Placement::Decline { reason } => self.not_placed(pod, Answer::Declined, reason, sink),
            }
            self.settle(sink);
        }
    }

    /// The pod stays pending and retries after kube-scheduler's back-off;
    /// an event is recorded when its answer changes.
    fn not_placed(&mut self, pod: PodId, answer: Answer, reason: Cow<'static, str>, sink: &mut dyn RecordSink) {
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
            let event = match answer {
                Answer::Unschedulable => EventKind::PodUnschedulable { pod, reason },
                Answer::Declined => EventKind::PodDeclined { pod, reason },
            };
            self.emit(sink, event);
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
            let priority = self.timeline.workloads[entry.slot.workload.0 as usize].spec.priority;
            self.active.push(pod, priority, entry.created);
        }
    }
}
