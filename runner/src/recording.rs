//! `--explain`: every decision of a policy explained and kept as a decision
//! record ([`schedlab_core::decision`]) for the run's decisions.jsonl,
//! whose file `results` writes.

use schedlab_core::decision::DecisionRecord;
use schedlab_core::{ClusterView, PendingPod, Placement};
use scheduler::Scheduler;
use scheduler::explain::Explaining;
use std::sync::{Arc, Mutex};

/// A policy whose every decision is explained and kept as a decision
/// record, for the run's decisions.jsonl (written between decisions, so
/// that writing is never counted as the policy's time).
#[derive(Debug)]
pub struct Recording {
    explaining: Explaining,
    pending: Arc<Mutex<Vec<DecisionRecord>>>,
    /// the run's workloads, by id
    workloads: Vec<String>,
}

impl Recording {
    pub fn new(policy: Box<dyn Scheduler>, pending: Arc<Mutex<Vec<DecisionRecord>>>, workloads: Vec<String>) -> Self {
        Recording {
            explaining: Explaining::new(policy),
            pending,
            workloads,
        }
    }
}

impl Scheduler for Recording {
    fn name(&self) -> &str {
        self.explaining.name()
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, view: &ClusterView<'_>) -> Placement {
        let placement = self.explaining.schedule(pod, view);
        if let (Some(e), Ok(mut pending)) = (self.explaining.last(), self.pending.lock()) {
            pending.push(DecisionRecord::of(pod, view, &placement, e, &self.workloads));
        }
        placement
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::NodeId;
    use schedlab_core::decision::{Basis, Objective, Outcome, SelectionRule};
    use scheduler::testing::{cluster, node, pending, pod, view};

    #[test]
    fn a_bind_is_recorded_with_node_names_and_the_workload() {
        let nodes = cluster([node("small").cpu("1"), node("big").cpu("8")]);
        let spec = pod().cpu("2").build();
        let mut explaining = Explaining::new(scheduler::arm("binpack", 1).unwrap());
        let v = view(&nodes);
        let p = pending(&spec);
        let placement = explaining.schedule(&p, &v);
        let record = DecisionRecord::of(&p, &v, &placement, explaining.last().unwrap(), &["web".into()]);
        assert_eq!(record.outcome, Outcome::Bind);
        assert_eq!(record.workload.as_deref(), Some("web"));
        assert_eq!(record.candidates, Some(1));
        let chosen = record.chosen.unwrap();
        assert_eq!(
            (chosen.node, chosen.name.as_str(), chosen.score),
            (NodeId(1), "big", None)
        );
        assert_eq!(record.stress.basis, Basis::Observed);
        assert!(record.agmarl.is_none() && record.reason.is_none());
        // a workload the run does not know is left out
        let record = DecisionRecord::of(&p, &v, &placement, explaining.last().unwrap(), &[]);
        assert_eq!(record.workload, None);
    }

    #[test]
    fn an_agmarl_decision_carries_its_order_and_steps() {
        let nodes = cluster([node("a"), node("b")]);
        let spec = pod().cpu("1").build();
        let mut explaining = Explaining::new(scheduler::arm("agmarl", 1).unwrap());
        let v = view(&nodes);
        let p = pending(&spec);
        let placement = explaining.schedule(&p, &v);
        let record = DecisionRecord::of(&p, &v, &placement, explaining.last().unwrap(), &[]);
        let agmarl = record.agmarl.unwrap();
        assert_eq!(agmarl.selection, SelectionRule::Lexicographic);
        assert_eq!(
            agmarl.order,
            Some([Objective::Cost, Objective::Utilization, Objective::FaultTolerance])
        );
        assert_eq!(agmarl.kept.len(), 3);
        assert_eq!(record.stress.basis, Basis::InForce);
        assert!(record.chosen.unwrap().objectives.is_some() && record.runner_up.is_some());
        let unschedulable = Placement::Unschedulable {
            reason: "0/2 nodes are available".into(),
        };
        let record = DecisionRecord::of(&p, &v, &unschedulable, explaining.last().unwrap(), &[]);
        assert_eq!(record.reason.as_deref(), Some("0/2 nodes are available"));
    }
}
