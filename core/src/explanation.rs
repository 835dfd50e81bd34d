//! What a policy says about one decision when asked (`--explain`): the
//! candidates it weighed, the node it chose and the runner-up with their
//! scores, the cluster's stress, and for the AGMARL controller its
//! objective order, selection steps and strategic restraint. Plain data,
//! so that every backend and the decision records read one model; the
//! policies that fill it live in `scheduler`.

use crate::node::{NodeId, NodeState};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One of the three objectives each agent scores. The discriminant is the
/// index of the objective's score everywhere (`[ft, util, cost]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Objective {
    /// the pod keeps running without failure on the node
    FaultTolerance = 0,
    /// the node's resources are well used (packing)
    Utilization = 1,
    /// the placement is cheap
    Cost = 2,
}

impl Objective {
    /// All objectives in score-index order.
    pub const ALL: [Objective; 3] = [Objective::FaultTolerance, Objective::Utilization, Objective::Cost];

    /// Index of this objective's score in a `[f32; 3]` score triple.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Objective::FaultTolerance => "fault-tolerance",
            Objective::Utilization => "utilization",
            Objective::Cost => "cost",
        }
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How stressed the cluster is, as the controller sees it. Ordered:
/// `Calm < Elevated < Stressed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StressLevel {
    #[default]
    Calm,
    Elevated,
    Stressed,
}

impl StressLevel {
    /// All levels, least stressed first.
    pub const ALL: [StressLevel; 3] = [StressLevel::Calm, StressLevel::Elevated, StressLevel::Stressed];

    /// 0 for calm, 1 elevated, 2 stressed.
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            StressLevel::Calm => "calm",
            StressLevel::Elevated => "elevated",
            StressLevel::Stressed => "stressed",
        }
    }
}

impl fmt::Display for StressLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What one decision saw and weighed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Explanation {
    /// nodes that passed the policy's filters among those it examined
    /// (kube-scheduler's profiles stop at `numFeasibleNodesToFind`)
    pub candidates: u32,
    /// the node bound to and its score; None when unschedulable or declined
    pub chosen: Option<NodeChoice>,
    /// the node the same rule picks once the chosen node is left out, among
    /// the nodes the policy scored; None without a second scored node
    pub runner_up: Option<NodeChoice>,
    /// the stress the policy estimated itself (AGMARL arms); [`Explaining`]
    /// fills it in for the others
    pub stress: Option<StressReading>,
    /// the AGMARL controller's part of the decision
    pub agmarl: Option<AgmarlTrace>,
}

impl Explanation {
    /// No feasible node.
    pub fn none_feasible() -> Explanation {
        Explanation::of_candidates(0)
    }

    /// `candidates` feasible nodes, nothing chosen (yet).
    pub fn of_candidates(candidates: usize) -> Explanation {
        Explanation {
            candidates: saturating_u32(candidates),
            chosen: None,
            runner_up: None,
            stress: None,
            agmarl: None,
        }
    }

    /// A decision by the highest integer total among `totals` (node index
    /// into `nodes`, total), as kube-scheduler's `selectHost`: the chosen
    /// node with its total, and the runner-up, the highest total among the
    /// other ranked nodes (the first of them in ranking order on a tie: the
    /// runner-up draws no tie-break). A chosen node that is not ranked (a
    /// lone feasible node, bound unscored) is reported without a score.
    pub fn of_totals(candidates: usize, totals: &[(usize, i64)], chosen: usize, nodes: &[NodeState]) -> Explanation {
        let id = |i: usize| nodes.get(i).map_or(NodeId(saturating_u32(i)), |n| n.id);
        let score = totals
            .iter()
            .find(|(i, _)| *i == chosen)
            .map_or(NodeScore::Unscored, |&(_, t)| NodeScore::Total(t));
        let runner_up = totals
            .iter()
            .filter(|(i, _)| *i != chosen)
            .fold(None::<(usize, i64)>, |best, &(i, t)| match best {
                Some((_, b)) if b >= t => best,
                _ => Some((i, t)),
            })
            .map(|(i, t)| NodeChoice {
                node: id(i),
                score: NodeScore::Total(t),
            });
        Explanation {
            chosen: Some(NodeChoice {
                node: id(chosen),
                score,
            }),
            runner_up,
            ..Explanation::of_candidates(candidates)
        }
    }
}

/// A node and the score the policy gave it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeChoice {
    pub node: NodeId,
    pub score: NodeScore,
}

/// A node's score, in the policy's own terms.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NodeScore {
    /// the policy did not score it (a lone feasible node, `random`)
    Unscored,
    /// the weighted sum of the profile's score plugins the host is picked by
    Total(i64),
    /// an AGMARL agent's `[fault tolerance, utilisation, cost]`, each in
    /// [0, 1] (indexed by [`Objective::index`])
    Objectives([f32; 3]),
}

/// The cluster's stress at a decision, as AGMARL-DKS's stress monitor estimates it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StressReading {
    /// the score in [0, 1] of the decision's cluster view
    pub score: f32,
    /// the level after the monitor's hysteresis
    pub level: StressLevel,
    pub basis: StressBasis,
}

/// Whether the policy acted on the stress it reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StressBasis {
    /// the level chose the objective order and gated restraint
    InForce,
    /// estimated beside the decision, which did not use it
    Observed,
}

impl StressBasis {
    pub fn name(self) -> &'static str {
        match self {
            StressBasis::InForce => "in-force",
            StressBasis::Observed => "observed",
        }
    }
}

/// The AGMARL controller's part of a decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AgmarlTrace {
    /// the level selection and restraint used: the monitor's, or always Calm
    /// for `agmarl-nostress`
    pub level: StressLevel,
    pub selection: Selection,
    /// candidates left after each step of the selection, in order (empty
    /// when it did not run: unschedulable, or every score broken)
    pub kept: Steps,
    /// why the pod was declined, when it was
    pub decline: Option<DeclineTrace>,
}

/// How the controller picks among candidates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Selection {
    /// the objectives in this order (one step each), each keeping the
    /// candidates within max(`delta_lex` × spread, `floor` of that
    /// objective) of the best; `floor` in fault tolerance, utilisation, cost
    /// order (the heads' validation RMSE, or 0 for the spread-only rule)
    Lexicographic {
        order: [Objective; 3],
        delta_lex: f32,
        floor: [f32; 3],
    },
    /// `agmarl-linear`: the highest weighted sum of the scores (one step)
    Weighted([f32; 3]),
}

/// Which rule of strategic restraint declined a pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeclineBy {
    /// the wait head predicted more than the chosen node's score plus the
    /// heads' combined error (`wait` − `bar` is that margin)
    Learned,
    /// a random decline of training's exploration
    Explored,
    /// the workload looked unstable and the chosen node scored far below
    /// the fault tolerance its pods usually get (the only rule of decision
    /// records written before the learned one, hence the default)
    #[default]
    Threshold,
}

/// What made strategic restraint decline a pod; a decision record's
/// `decline` as it is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DeclineTrace {
    #[serde(rename = "rule", default)]
    pub by: DeclineBy,
    /// the wait head's prediction (None for the threshold rule)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<f32>,
    /// the workload's (restarts + failures) per pod created
    pub instability: f32,
    /// the chosen node's fault-tolerance score
    pub predicted_fault_tolerance: f32,
    /// mean and standard deviation of the fault-tolerance scores of the
    /// workload's binds so far, and how many there were
    pub workload_baseline: f32,
    pub workload_spread: f32,
    pub workload_binds: u32,
    /// the score the node needed: baseline − risk_margin × max(spread, 0.01)
    /// for the threshold rule, wait − margin for the learned one
    pub bar: f32,
}

/// Counts after up to three selection steps, without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Steps {
    counts: [u32; 3],
    len: usize,
}

impl Steps {
    /// Appends a count; a fourth and later step is not kept (no selection
    /// has more than three).
    pub fn push(&mut self, count: usize) {
        if let Some(slot) = self.counts.get_mut(self.len) {
            *slot = saturating_u32(count);
            self.len += 1;
        }
    }

    pub fn as_slice(&self) -> &[u32] {
        &self.counts[..self.len]
    }
}

fn saturating_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// One explained decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Explained {
    /// the policy's explanation; None for a policy that does not explain
    pub policy: Option<Explanation>,
    /// the policy's own stress when it reports one, else the observer's
    pub stress: StressReading,
}
