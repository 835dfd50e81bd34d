//! `--explain`: a policy's explanation of each decision as a line of the
//! run's decisions.jsonl. The scheduler says what it weighed
//! ([`scheduler::explain`]); results owns the file's format
//! ([`results::decisions`]); this is the wiring between them, with what only
//! the decision loop knows (the time, the pod, its workload's name, the node
//! names).

use results::decisions::{
    AgmarlDecision, Basis, DecisionRecord, Decline, DeclineRule, NodeChoice, Objectives, Outcome, Preemption,
    SelectionRule, SelectionTolerance, Stress,
};
use schedlab_core::{ClusterView, NodeId, PendingPod, Placement};
use scheduler::Scheduler;
use scheduler::explain::{Explained, Explaining, NodeScore, Selection, StressBasis};
use std::sync::{Arc, Mutex};

/// A policy whose every decision is explained and kept as a decision
/// record, for the run's decisions.jsonl (written between decisions, so
/// that writing is never counted as the policy's time).
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
            pending.push(decision_record(pod, view, &placement, e, &self.workloads));
        }
        placement
    }
}

/// The decision record of `placement` for `pod` on `view`, as `explained`
/// says it; `workloads` names the run's workloads by id.
pub fn decision_record(
    pod: &PendingPod<'_>,
    view: &ClusterView<'_>,
    placement: &Placement,
    explained: &Explained,
    workloads: &[String],
) -> DecisionRecord {
    let (outcome, reason) = match placement {
        Placement::Bind(_) => (Outcome::Bind, None),
        Placement::Unschedulable { reason } => (Outcome::Unschedulable, Some(reason.to_string())),
        Placement::Decline { reason } => (Outcome::Decline, Some(reason.to_string())),
        Placement::Preempt { reason, .. } => (Outcome::Preempt, Some(reason.to_string())),
    };
    let preempt = match placement {
        Placement::Preempt { node, victims, .. } => Some(Preemption {
            node: *node,
            name: node_name(view, *node),
            victims: victims.clone(),
        }),
        _ => None,
    };
    let policy = explained.policy;
    let choice = |c: scheduler::explain::NodeChoice| node_choice(view, c);
    DecisionRecord {
        t: view.now,
        pod: pod.id,
        workload: workloads.get(pod.slot.workload.0 as usize).cloned(),
        attempts: pod.attempts,
        outcome,
        reason,
        candidates: policy.map(|e| e.candidates),
        chosen: policy.and_then(|e| e.chosen).map(choice),
        runner_up: policy.and_then(|e| e.runner_up).map(choice),
        preempt,
        stress: Stress {
            score: explained.stress.score,
            level: explained.stress.level,
            basis: match explained.stress.basis {
                StressBasis::InForce => Basis::InForce,
                StressBasis::Observed => Basis::Observed,
            },
        },
        agmarl: policy.and_then(|e| e.agmarl).map(|t| {
            let (selection, order, weights, tolerance) = match t.selection {
                Selection::Lexicographic {
                    order,
                    delta_lex,
                    floor,
                } => (
                    SelectionRule::Lexicographic,
                    Some(order),
                    None,
                    Some(SelectionTolerance { delta_lex, floor }),
                ),
                Selection::Weighted(weights) => (SelectionRule::Weighted, None, Some(weights), None),
            };
            AgmarlDecision {
                level: t.level,
                selection,
                order,
                weights,
                tolerance,
                kept: t.kept.as_slice().to_vec(),
                decline: t.decline.map(|d| Decline {
                    rule: match d.by {
                        scheduler::explain::DeclineBy::Learned => DeclineRule::Learned,
                        scheduler::explain::DeclineBy::Explored => DeclineRule::Explored,
                        scheduler::explain::DeclineBy::Threshold => DeclineRule::Threshold,
                    },
                    wait: d.wait,
                    instability: d.instability,
                    predicted_fault_tolerance: d.predicted_fault_tolerance,
                    workload_baseline: d.workload_baseline,
                    workload_spread: d.workload_spread,
                    workload_binds: d.workload_binds,
                    bar: d.bar,
                }),
            }
        }),
    }
}

fn node_choice(view: &ClusterView<'_>, c: scheduler::explain::NodeChoice) -> NodeChoice {
    let name = node_name(view, c.node);
    let finite = |x: f32| x.is_finite().then_some(x);
    let (score, objectives) = match c.score {
        NodeScore::Unscored => (None, None),
        NodeScore::Total(total) => (Some(total), None),
        NodeScore::Objectives([ft, util, cost]) => (
            None,
            Some(Objectives {
                fault_tolerance: finite(ft),
                utilization: finite(util),
                cost: finite(cost),
            }),
        ),
    };
    NodeChoice {
        node: c.node,
        name,
        score,
        objectives,
    }
}

fn node_name(view: &ClusterView<'_>, node: NodeId) -> String {
    view.node(node)
        .map_or_else(|| format!("node {}", node.0), |n| n.spec.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use results::decisions::Objective;
    use scheduler::testing::{cluster, node, pending, pod, view};

    #[test]
    fn a_bind_is_recorded_with_node_names_and_the_workload() {
        let nodes = cluster([node("small").cpu("1"), node("big").cpu("8")]);
        let spec = pod().cpu("2").build();
        let mut explaining = Explaining::new(scheduler::arm("binpack", 1).unwrap());
        let v = view(&nodes);
        let p = pending(&spec);
        let placement = explaining.schedule(&p, &v);
        let record = decision_record(&p, &v, &placement, explaining.last().unwrap(), &["web".into()]);
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
        let record = decision_record(&p, &v, &placement, explaining.last().unwrap(), &[]);
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
        let record = decision_record(&p, &v, &placement, explaining.last().unwrap(), &[]);
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
        let record = decision_record(&p, &v, &unschedulable, explaining.last().unwrap(), &[]);
        assert_eq!(record.reason.as_deref(), Some("0/2 nodes are available"));
    }
}
