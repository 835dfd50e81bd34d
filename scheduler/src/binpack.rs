//! `binpack`: kube-scheduler configured for bin packing as documented in
//! "Resource Bin Packing" (kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/):
//! the default profile with NodeResourcesFit's `scoringStrategy` set to
//! `MostAllocated` over cpu and memory with weights 1 and 1
//! (`pkg/scheduler/framework/plugins/noderesources/most_allocated.go`).
//! Everything else is v1.33's default profile (see [`crate::default`] and
//! [`crate::release`]; this configuration is documented from v1.22 on): the
//! same filters, node sampling and rotation, BalancedAllocation (weight 1),
//! TaintToleration scoring (weight 3) and seeded tie-breaks.

use crate::api::Scheduler;
use crate::profile::KubeProfile;
use crate::scores::FitStrategy;
use clusters::{ClusterView, PendingPod, Placement};

/// kube-scheduler with the MostAllocated scoring strategy.
#[derive(Debug, Clone)]
pub struct BinPackScheduler {
    profile: KubeProfile,
}

impl BinPackScheduler {
    pub const NAME: &'static str = "binpack";

    /// Tie-breaks draw from the run's `seed` (scheduler stream).
    pub fn new(seed: u64) -> BinPackScheduler {
        BinPackScheduler {
            profile: KubeProfile::new(FitStrategy::MostAllocated, seed),
        }
    }
}

impl Scheduler for BinPackScheduler {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        self.profile.schedule(pod, cluster)
    }
}
