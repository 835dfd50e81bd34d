//! A decision record (`schedlab_core::decision::DecisionRecord`) made from
//! what an explained policy said: node names, the workload, the stress and
//! the AGMARL controller's order and steps.
#![allow(clippy::unwrap_used)]

use schedlab_core::decision::{Basis, DecisionRecord, Objective, Outcome, SelectionRule};
use schedlab_core::{NodeId, Placement, Scheduler};
use scheduler::explain::Explaining;
use scheduler::testing::{cluster, node, pending, pod, view};

#[test]
fn a_bind_is_recorded_with_node_names_and_the_workload() {
    let nodes = cluster([node("small").cpu("1"), node("big").cpu("8")]);
    let spec = pod().cpu("2").build();
    let mut explaining = Explaining::new(scheduler::arm("binpack", 1).unwrap());
    let v = view(&nodes);
    let p = pending(&spec);
    let placement = explaining.schedule(&p, &v);
    let explained = explaining.explained().unwrap();
    let record = DecisionRecord::of(&p, &v, &placement, &explained, Some("web"));
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
    let record = DecisionRecord::of(&p, &v, &placement, &explained, None);
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
    let explained = explaining.explained().unwrap();
    let record = DecisionRecord::of(&p, &v, &placement, &explained, None);
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
    let record = DecisionRecord::of(&p, &v, &unschedulable, &explained, None);
    assert_eq!(record.reason.as_deref(), Some("0/2 nodes are available"));
}

#[test]
fn a_policy_that_is_not_wrapped_gives_no_record() {
    let nodes = cluster([node("a")]);
    let spec = pod().cpu("1").build();
    let mut policy = scheduler::arm("binpack", 1).unwrap();
    policy.schedule(&pending(&spec), &view(&nodes));
    assert!(policy.explained().is_none());
}
