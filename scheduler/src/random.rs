//! `random`: a uniformly random feasible node. Feasibility is the default
//! profile's ([`crate::filters`]); every node is examined (no sampling), so
//! each feasible node has the same chance.

use crate::api::Scheduler;
use crate::diagnosis::Diagnosis;
use crate::explain::{Explanation, NodeChoice, NodeScore};
use crate::feasible::NodeScan;
use rand::Rng;
use schedlab_core::rng::{SimRng, purpose, stream};
use schedlab_core::{ClusterView, PendingPod, Placement};

/// Uniform choice among all feasible nodes, from a seeded stream.
#[derive(Debug, Clone)]
pub struct RandomScheduler {
    rng: SimRng,
    scan: NodeScan,
    feasible: Vec<usize>,
    /// None while not explaining, else the last decision's
    explanation: Option<Option<Explanation>>,
}

impl RandomScheduler {
    pub const NAME: &'static str = "random";

    pub fn new(seed: u64) -> RandomScheduler {
        RandomScheduler {
            rng: stream(seed, &[purpose::SCHEDULER]),
            scan: NodeScan::new(),
            feasible: Vec::new(),
            explanation: None,
        }
    }
}

impl Scheduler for RandomScheduler {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        let nodes = cluster.nodes;
        let mut diagnosis = Diagnosis::new();
        // a full scan leaves the start index where it was: always from 0
        self.scan
            .find(pod.spec, nodes, nodes.len(), &mut self.feasible, &mut diagnosis);
        if self.feasible.is_empty() {
            if let Some(slot) = &mut self.explanation {
                *slot = Some(Explanation::none_feasible());
            }
            return Placement::Unschedulable {
                reason: diagnosis.message(nodes.len()).into(),
            };
        }
        let pick = self.feasible[self.rng.random_range(0..self.feasible.len())];
        if let Some(slot) = &mut self.explanation {
            // a uniform pick has no scores and no second choice
            *slot = Some(Explanation {
                chosen: Some(NodeChoice {
                    node: nodes[pick].id,
                    score: NodeScore::Unscored,
                }),
                ..Explanation::of_candidates(self.feasible.len())
            });
        }
        Placement::Bind(nodes[pick].id)
    }

    fn set_explain(&mut self, on: bool) {
        self.explanation = on.then_some(None);
    }

    fn explanation(&self) -> Option<Explanation> {
        self.explanation.flatten()
    }
}
