//! Decision explanations: what a policy saw and weighed when it answered,
//! for a reader who wants to check a scheduler's story decision by decision.
//!
//! A policy explains only when asked ([`crate::Scheduler::set_explain`]);
//! then, after each [`crate::Scheduler::schedule`], it answers
//! [`crate::Scheduler::explanation`]. Explaining reads what the decision
//! computed anyway and never draws from the policy's random stream, so the
//! decisions are the same with explanations on or off; off, the only cost is
//! one branch per decision.
//!
//! [`Explaining`] wraps any policy for a backend's bind or placer loop: it
//! switches explanations on and adds the cluster's stress as AGMARL-DKS
//! estimates it ([`crate::agmarl::stress`]) to every decision, in force for
//! the AGMARL arms that act on it, observed passively for every other arm
//! (`agmarl-nostress` included, which computes it and ignores it), so that
//! arms can be compared on how stressed the cluster got under each.

use crate::agmarl::stress::{Objective, StressConfig, StressLevel, StressMonitor, signals};
use crate::api::Scheduler;
use schedlab_core::node::NodeId;
use schedlab_core::{ClusterView, PendingPod, Placement};

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
    pub fn of_totals(
        candidates: usize,
        totals: &[(usize, i64)],
        chosen: usize,
        nodes: &[schedlab_core::node::NodeState],
    ) -> Explanation {
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

/// The cluster's stress at a decision, as [`StressMonitor`] estimates it.
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeclineBy {
    /// the wait head predicted more than the chosen node's score plus the
    /// heads' combined error (`wait` − `bar` is that margin)
    Learned,
    /// a random decline of training's exploration
    Explored,
    /// the workload looked unstable and the chosen node scored far below
    /// the fault tolerance its pods usually get
    Threshold,
}

/// What made strategic restraint decline a pod.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeclineTrace {
    pub by: DeclineBy,
    /// the wait head's prediction (None for the threshold rule)
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

/// Any policy with its decisions explained, and the cluster's stress
/// observed for the policies that do not estimate it themselves.
pub struct Explaining {
    policy: Box<dyn Scheduler>,
    /// the passive estimator, fed once per decision as the AGMARL
    /// controller feeds its own (its hysteresis counts decisions)
    observer: StressMonitor,
    last: Option<Explained>,
}

impl std::fmt::Debug for Explaining {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Explaining")
            .field("policy", &self.policy.name())
            .field("last", &self.last)
            .finish()
    }
}

/// One explained decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Explained {
    /// the policy's explanation; None for a policy that does not explain
    pub policy: Option<Explanation>,
    /// the policy's own stress when it reports one, else the observer's
    pub stress: StressReading,
}

impl Explaining {
    /// `policy` with explanations switched on; the observer uses the AGMARL
    /// arms' default stress configuration.
    pub fn new(mut policy: Box<dyn Scheduler>) -> Explaining {
        policy.set_explain(true);
        Explaining {
            policy,
            observer: StressMonitor::new(StressConfig::default()),
            last: None,
        }
    }

    pub fn name(&self) -> &str {
        self.policy.name()
    }

    /// The policy's decision for `pod`, explained into [`Explaining::last`].
    pub fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        let placement = self.policy.schedule(pod, cluster);
        let policy = self.policy.explanation();
        let stress = match policy.and_then(|e| e.stress) {
            Some(own) => own,
            None => {
                let level = self.observer.update(&signals(cluster));
                StressReading {
                    score: self.observer.last_score(),
                    level,
                    basis: StressBasis::Observed,
                }
            }
        };
        self.last = Some(Explained { policy, stress });
        placement
    }

    /// The explanation of the last decision; None before the first.
    pub fn last(&self) -> Option<&Explained> {
        self.last.as_ref()
    }

    /// The wrapped policy, explanations off again.
    pub fn into_inner(mut self) -> Box<dyn Scheduler> {
        self.policy.set_explain(false);
        self.policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cluster, node};

    #[test]
    fn totals_give_the_chosen_score_and_the_best_other_node() {
        let nodes = cluster([node("a"), node("b"), node("c"), node("d")]);
        // b and d tie at the top: the chosen one (d) was the tie-break's
        let totals = [(0, 150), (1, 180), (2, 120), (3, 180)];
        let e = Explanation::of_totals(4, &totals, 3, &nodes);
        assert_eq!(e.candidates, 4);
        assert_eq!(
            e.chosen,
            Some(NodeChoice {
                node: NodeId(3),
                score: NodeScore::Total(180)
            })
        );
        // the runner-up is the other top node, first in ranking order
        assert_eq!(
            e.runner_up,
            Some(NodeChoice {
                node: NodeId(1),
                score: NodeScore::Total(180)
            })
        );
        let e = Explanation::of_totals(4, &[(0, 10), (2, 30), (1, 20), (3, 20)], 2, &nodes);
        assert_eq!(e.runner_up.map(|c| c.node), Some(NodeId(1)));
    }

    #[test]
    fn a_lone_or_unranked_choice_has_no_score_and_no_runner_up() {
        let nodes = cluster([node("a"), node("b")]);
        let e = Explanation::of_totals(1, &[], 1, &nodes);
        assert_eq!(
            e.chosen,
            Some(NodeChoice {
                node: NodeId(1),
                score: NodeScore::Unscored
            })
        );
        assert_eq!(e.runner_up, None);
        assert_eq!(Explanation::none_feasible().candidates, 0);
    }

    #[test]
    fn the_observer_is_the_agmarl_monitor_fed_once_per_decision() {
        use crate::agmarl::stress::StressSignals;
        use crate::random::RandomScheduler;
        use crate::testing::{pending, view};
        use schedlab_core::testing::pod;
        // one of four nodes down, then all well: the level rises at once and
        // falls only after the monitor's exit dwell, counted in decisions
        let troubled = cluster([node("a").not_ready(), node("b"), node("c"), node("d")]);
        let healthy = cluster([node("a"), node("b"), node("c"), node("d")]);
        let spec = pod(100, 0);
        let mut explaining = Explaining::new(Box::new(RandomScheduler::new(1)));
        let mut reference = StressMonitor::new(StressConfig::default());
        let mut plain = RandomScheduler::new(1);
        for nodes in [&troubled, &troubled, &healthy, &healthy, &healthy, &healthy] {
            let mut v = view(nodes);
            v.pending_pods = 3;
            v.bound_pods = 1;
            let placement = explaining.schedule(&pending(&spec), &v);
            assert_eq!(
                placement,
                plain.schedule(&pending(&spec), &v),
                "explaining changed a pick"
            );
            let level = reference.update(&signals(&v));
            let last = explaining.last().unwrap();
            assert_eq!(last.stress.basis, StressBasis::Observed);
            assert_eq!((last.stress.level, last.stress.score), (level, reference.last_score()));
            assert_eq!(
                last.policy.map(|e| e.candidates),
                Some(if nodes == &troubled { 3 } else { 4 })
            );
        }
        assert_ne!(signals(&view(&troubled)), StressSignals::default());
        assert_eq!(explaining.name(), "random");
    }

    #[test]
    fn a_policy_that_does_not_explain_still_gets_its_stress() {
        struct Silent;
        impl Scheduler for Silent {
            fn name(&self) -> &str {
                "silent"
            }
            fn schedule(&mut self, _: &PendingPod<'_>, _: &ClusterView<'_>) -> Placement {
                Placement::Bind(NodeId(0))
            }
        }
        let nodes = cluster([node("a")]);
        let spec = schedlab_core::testing::pod(0, 0);
        let mut explaining = Explaining::new(Box::new(Silent));
        assert!(explaining.last().is_none());
        explaining.schedule(&crate::testing::pending(&spec), &crate::testing::view(&nodes));
        let last = explaining.last().unwrap();
        assert_eq!(last.policy, None);
        assert_eq!(last.stress.basis, StressBasis::Observed);
        assert_eq!(explaining.into_inner().explanation(), None);
    }

    #[test]
    fn steps_keep_at_most_three_counts() {
        let mut s = Steps::default();
        assert!(s.as_slice().is_empty());
        for n in [9, 4, 2, 1] {
            s.push(n);
        }
        assert_eq!(s.as_slice(), &[9, 4, 2]);
    }
}
