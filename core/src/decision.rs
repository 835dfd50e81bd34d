//! Decision records: one per scheduling decision, on request (`--explain`),
//! the policy's explanation ([`crate::explanation`]) with what only the
//! decision loop knows (the time, the pod, its workload's name, the node
//! names). One model from the decision to the file: the run folder's
//! `decisions.jsonl` (owned by `results`, which writes and reads it) holds
//! these lines.
//!
//! ```json
//! {"t":61000,"pod":412,"workload":"unstable","attempts":2,"outcome":"bind","candidates":12,
//!  "chosen":{"node":5,"name":"spot-5","objectives":{"fault_tolerance":0.71,"utilization":0.4,"cost":0.93}},
//!  "runner_up":{"node":7,"name":"spot-7","objectives":{"fault_tolerance":0.69,"utilization":0.38,"cost":0.93}},
//!  "stress":{"score":0.31,"level":"elevated","basis":"in-force"},
//!  "agmarl":{"level":"elevated","selection":"lexicographic","order":["cost","fault-tolerance","utilization"],
//!            "kept":[4,2,1]}}
//! ```

use crate::explanation::{Explained, NodeScore, Selection, StressBasis};
pub use crate::explanation::{Objective, StressLevel as Level};
use crate::node::NodeId;
use crate::pod::PodId;
use crate::time::Time;
use crate::view::{ClusterView, PendingPod, Placement};
use serde::{Deserialize, Serialize};

/// One scheduling decision, as the policy explained it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// the decision's scenario time (the cluster view's), in ms
    pub t: Time,
    pub pod: PodId,
    /// the pod's workload (scenario template); absent when unknown (a pod
    /// schedlab did not create)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    /// scheduling attempts of the pod before this one
    pub attempts: u32,
    pub outcome: Outcome,
    /// why the pod was not bound (unschedulable or declined), as the policy
    /// said it in the pod's event
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// nodes that passed the policy's filters among those it examined;
    /// absent for a policy that does not explain
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidates: Option<u32>,
    /// the node bound to, with its score
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen: Option<NodeChoice>,
    /// the node the same rule picks once the chosen one is left out, among
    /// the nodes the policy scored
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_up: Option<NodeChoice>,
    /// where a preemption nominated the pod and whom it deleted there
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preempt: Option<Preemption>,
    pub stress: Stress,
    /// the AGMARL controller's part (the `agmarl*` arms only)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agmarl: Option<AgmarlDecision>,
}

/// What the decision did with the pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    Bind,
    /// no feasible node
    Unschedulable,
    /// feasible nodes, but the policy kept the pod pending (strategic restraint)
    Decline,
    /// no feasible node; pods of lower priority deleted to make room (see `preempt`)
    Preempt,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [
        Outcome::Bind,
        Outcome::Unschedulable,
        Outcome::Decline,
        Outcome::Preempt,
    ];

    pub fn index(self) -> usize {
        self as usize
    }
}

/// A preemption: the node the pod was nominated to and the pods deleted there.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Preemption {
    pub node: NodeId,
    pub name: String,
    pub victims: Vec<PodId>,
}

/// A node and the policy's score of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeChoice {
    pub node: NodeId,
    pub name: String,
    /// a kube-scheduler profile's weighted total of its score plugins
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<i64>,
    /// an AGMARL agent's three objective scores
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objectives: Option<Objectives>,
}

/// An AGMARL agent's scores of its node, each in [0, 1], higher is better;
/// null where the network gave a number that is not finite.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Objectives {
    pub fault_tolerance: Option<f32>,
    pub utilization: Option<f32>,
    pub cost: Option<f32>,
}

/// The cluster's stress at the decision, as AGMARL-DKS's stress monitor
/// estimates it from the decision's cluster view.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stress {
    /// the weighted, saturated signals, in [0, 1]
    pub score: f32,
    /// the level after the monitor's hysteresis
    pub level: Level,
    pub basis: Basis,
}

/// Whether the arm acted on the stress of its records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// the level chose the objective order and gated restraint (agmarl,
    /// agmarl-nognn, agmarl-linear)
    InForce,
    /// estimated beside the decision, which did not use it (every other arm)
    Observed,
}

impl Basis {
    pub fn name(self) -> &'static str {
        match self {
            Basis::InForce => "in force",
            Basis::Observed => "observed",
        }
    }
}

/// How the controller chose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SelectionRule {
    /// objective by objective, in `order`
    Lexicographic,
    /// `agmarl-linear`: a fixed weighted sum of the three scores
    Weighted,
}

/// The AGMARL controller's part of a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgmarlDecision {
    /// the level selection and restraint used (always calm for agmarl-nostress)
    pub level: Level,
    pub selection: SelectionRule,
    /// the objective order in force, first first (lexicographic only)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<[Objective; 3]>,
    /// the weights of fault tolerance, utilisation and cost (weighted only)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<[f32; 3]>,
    /// how near the best a candidate must be to survive each step
    /// (lexicographic only; absent in records written before it was kept)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<SelectionTolerance>,
    /// candidates left after each step of the selection (one per objective,
    /// or one for the weighted sum); empty when no selection ran
    #[serde(default)]
    pub kept: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decline: Option<Decline>,
}

/// The lexicographic filter's tolerance: a step keeps the candidates within
/// max(`delta_lex` × the step's spread of scores, `floor` of its objective)
/// of the best.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SelectionTolerance {
    pub delta_lex: f32,
    /// per objective, in fault tolerance, utilisation, cost order: the
    /// checkpoint's heads' validation RMSE (0: the spread-only rule)
    pub floor: [f32; 3],
}

/// Which rule of strategic restraint declined a pod, and why: the
/// policy's own trace.
pub use crate::explanation::{DeclineBy as DeclineRule, DeclineTrace as Decline};

impl DecisionRecord {
    /// The decision record of `placement` for `pod` on `view`, as `explained`
    /// says it; `workload` is the name of the pod's workload, when known.
    pub fn of(
        pod: &PendingPod<'_>,
        view: &ClusterView<'_>,
        placement: &Placement,
        explained: &Explained,
        workload: Option<&str>,
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
        let choice = |c: crate::explanation::NodeChoice| node_choice(view, c);
        DecisionRecord {
            t: view.now,
            pod: pod.id,
            workload: workload.map(str::to_string),
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
                    decline: t.decline,
                }
            }),
        }
    }
}

fn node_choice(view: &ClusterView<'_>, c: crate::explanation::NodeChoice) -> NodeChoice {
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
