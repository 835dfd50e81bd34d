//! Carrying out a preemption the scheduler decided (kube-scheduler's
//! DefaultPreemption `PrepareCandidate`): delete the victims, take the
//! nominations of lower-priority pods on that node away, and nominate the
//! preemptor there. The victims go at once: the simulator has no graceful
//! termination, so the room is free when the preemptor's back-off ends.

use super::Sim;
use super::pods::PodState;
use crate::behaviour::Input;
use crate::node::NodeId;
use crate::pod::PodId;
use crate::record::{DeleteCause, EventKind, RecordSink};
use crate::view::Nomination;

impl Sim {
    /// Deletes `victims` from `node` for the pending `pod` and nominates it
    /// there. Refused, with nothing deleted, unless every victim is bound to
    /// `node` with a priority below the pod's.
    pub(super) fn preempt(
        &mut self,
        pod: PodId,
        node: NodeId,
        victims: &[PodId],
        sink: &mut dyn RecordSink,
    ) -> Result<(), String> {
        let entry = self.pods.get(pod.0 as usize).ok_or("the pod does not exist")?;
        let spec = self.timeline.workloads[entry.slot.workload.0 as usize].spec_of(entry.slot.ordinal);
        let (priority, requests) = (spec.priority, spec.requests);
        let on_node = self
            .node_pods
            .get(node.index())
            .ok_or_else(|| format!("node {} does not exist", node.0))?;
        for &victim in victims {
            let bound = on_node
                .iter()
                .find(|b| b.id == victim)
                .ok_or_else(|| format!("pod {} is not bound to node {}", victim.0, node.0))?;
            if bound.priority >= priority {
                return Err(format!(
                    "pod {} has priority {}, not below the preemptor's {priority}",
                    victim.0, bound.priority
                ));
            }
        }
        self.emit(
            sink,
            EventKind::PodNominated {
                pod,
                node,
                victims: u32::try_from(victims.len()).unwrap_or(u32::MAX),
            },
        );
        for &victim in victims {
            if matches!(
                self.pods.get(victim.0 as usize).map(|e| &e.state),
                Some(PodState::Bound { .. })
            ) {
                self.summary.preempted += 1;
                self.step_pod(victim, Input::Delete(DeleteCause::Preempted), sink);
            }
        }
        // `getLowerPriorityNominatedPods`: they lose their claim on the node
        self.nominated.retain(|n| n.node != node || n.priority >= priority);
        self.forget_nomination(pod);
        self.nominated.push(Nomination {
            pod,
            node,
            priority,
            requests,
        });
        Ok(())
    }

    /// A pod that binds or goes away holds no nomination any more.
    pub(super) fn forget_nomination(&mut self, pod: PodId) {
        if !self.nominated.is_empty() {
            self.nominated.retain(|n| n.pod != pod);
        }
    }
}
