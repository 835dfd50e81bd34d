//! `random`: a uniformly random feasible node. Feasibility is the default
//! profile's ([`crate::filters`]); every node is examined (no sampling), so
//! each feasible node has the same chance.

use crate::api::Scheduler;
use crate::diagnosis::Diagnosis;
use crate::feasible::NodeScan;
use clusters::rng::{SimRng, purpose, stream};
use clusters::{ClusterView, PendingPod, Placement};
use rand::Rng;

/// Uniform choice among all feasible nodes, from a seeded stream.
#[derive(Debug, Clone)]
pub struct RandomScheduler {
    rng: SimRng,
    scan: NodeScan,
    feasible: Vec<usize>,
}

impl RandomScheduler {
    pub const NAME: &'static str = "random";

    pub fn new(seed: u64) -> RandomScheduler {
        RandomScheduler {
            rng: stream(seed, &[purpose::SCHEDULER]),
            scan: NodeScan::new(),
            feasible: Vec::new(),
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
            return Placement::Unschedulable {
                reason: diagnosis.message(nodes.len()).into(),
            };
        }
        let pick = self.feasible[self.rng.random_range(0..self.feasible.len())];
        Placement::Bind(nodes[pick].id)
    }
}
