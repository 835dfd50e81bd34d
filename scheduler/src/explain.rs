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

pub use schedlab_core::explanation::{
    AgmarlTrace, DeclineBy, DeclineTrace, Explained, Explanation, NodeChoice, NodeScore, Selection, Steps, StressBasis,
    StressReading,
};

use crate::agmarl::stress::{StressConfig, StressMonitor, signals};
use crate::api::Scheduler;
use schedlab_core::{ClusterView, PendingPod, Placement};

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

impl Scheduler for Explaining {
    fn name(&self) -> &str {
        self.policy.name()
    }

    /// The policy's decision for `pod`, explained into [`Explaining::last`].
    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
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

    fn explanation(&self) -> Option<Explanation> {
        self.last.and_then(|e| e.policy)
    }

    fn explained(&self) -> Option<Explained> {
        self.last
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cluster, node};
    use schedlab_core::node::NodeId;

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
