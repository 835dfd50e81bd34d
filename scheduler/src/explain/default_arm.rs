//! The `default` arm as [`crate::registry`] builds it: [`DefaultScheduler`]
//! with explanations.
//!
//! [`DefaultScheduler`] keeps its profile to itself, but its
//! [`DefaultScheduler::evaluate`] answers what the next attempt will see
//! (feasible nodes in scan order and their scores) without rotating the
//! scan or drawing a tie-break. Explaining evaluates first and then lets the
//! scheduler decide as it always does, so the decision is the one it makes
//! unexplained; the price, paid only while explaining, is filtering and
//! scoring twice.

use crate::api::Scheduler;
use crate::default::DefaultScheduler;
use crate::explain::Explanation;
use clusters::{ClusterView, PendingPod, Placement};

/// kube-scheduler's default profile, explainable.
#[derive(Debug, Clone)]
pub struct DefaultArm {
    inner: DefaultScheduler,
    /// None while not explaining, else the last decision's
    explanation: Option<Option<Explanation>>,
}

impl DefaultArm {
    /// [`DefaultScheduler::new`] with its tie-breaks from `seed`.
    pub fn new(seed: u64) -> DefaultArm {
        DefaultArm::wrap(DefaultScheduler::new(seed))
    }

    pub fn wrap(inner: DefaultScheduler) -> DefaultArm {
        DefaultArm {
            inner,
            explanation: None,
        }
    }

    pub fn inner(&self) -> &DefaultScheduler {
        &self.inner
    }
}

impl Scheduler for DefaultArm {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        let Some(slot) = &mut self.explanation else {
            return self.inner.schedule(pod, cluster);
        };
        let seen = self.inner.evaluate(pod.spec, cluster);
        let placement = self.inner.schedule(pod, cluster);
        *slot = Some(match &placement {
            Placement::Bind(node) => {
                let totals: Vec<(usize, i64)> = seen.scores.iter().map(|s| (s.node, s.total)).collect();
                Explanation::of_totals(seen.feasible.len(), &totals, node.index(), cluster.nodes)
            }
            _ => Explanation::of_candidates(seen.feasible.len()),
        });
        placement
    }

    fn set_explain(&mut self, on: bool) {
        self.explanation = on.then_some(None);
    }

    fn explanation(&self) -> Option<Explanation> {
        self.explanation.flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::{NodeChoice, NodeScore};
    use crate::testing::{cluster, node, pending, pod, view};
    use clusters::node::NodeId;

    #[test]
    fn explains_the_pick_it_makes_unexplained() {
        let nodes = cluster([
            node("full").cpu("4").memory("16Gi").requested("3", "12Gi"),
            node("empty").cpu("4").memory("16Gi"),
            node("half").cpu("4").memory("16Gi").requested("2", "8Gi"),
        ]);
        let spec = pod().cpu("500m").memory("1Gi").build();
        let mut plain = DefaultScheduler::new(3);
        let mut explained = DefaultArm::new(3);
        explained.set_explain(true);
        assert_eq!(explained.explanation(), None);
        for _ in 0..5 {
            let want = plain.schedule(&pending(&spec), &view(&nodes));
            let got = explained.schedule(&pending(&spec), &view(&nodes));
            assert_eq!(got, want);
            let e = explained.explanation().unwrap();
            assert_eq!(e.candidates, 3);
            let chosen = e.chosen.unwrap();
            assert_eq!(Placement::Bind(chosen.node), got);
            assert_eq!(chosen.node, NodeId(1));
            let (
                NodeScore::Total(best),
                Some(NodeChoice {
                    node: second,
                    score: NodeScore::Total(next),
                }),
            ) = (chosen.score, e.runner_up)
            else {
                panic!("{e:?}");
            };
            // least allocated: the half-full node is second
            assert!(best > next, "{e:?}");
            assert_eq!(second, NodeId(2));
        }
        assert_eq!(explained.inner().next_start_node_index(), plain.next_start_node_index());
    }

    #[test]
    fn unschedulable_has_no_candidates_and_off_keeps_nothing() {
        let nodes = cluster([node("small").cpu("1")]);
        let spec = pod().cpu("8").build();
        let mut arm = DefaultArm::new(1);
        arm.set_explain(true);
        assert!(matches!(
            arm.schedule(&pending(&spec), &view(&nodes)),
            Placement::Unschedulable { .. }
        ));
        assert_eq!(arm.explanation(), Some(Explanation::none_feasible()));
        arm.set_explain(false);
        arm.schedule(&pending(&spec), &view(&nodes));
        assert_eq!(arm.explanation(), None);
    }
}
