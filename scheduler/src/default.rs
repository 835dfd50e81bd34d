//! `default`: a re-implementation of kube-scheduler's default profile
//! (kubernetes v1.33) for what the cluster model has data for.
//!
//! Upstream sources followed:
//! - filters ([`crate::filters`]): `plugins/nodeunschedulable/node_unschedulable.go`,
//!   `plugins/tainttoleration/taint_toleration.go`, `plugins/noderesources/fit.go`
//!   (`fitsRequest`); the node Ready check as the node lifecycle controller's
//!   `node.kubernetes.io/unreachable` taints on a node that stopped reporting.
//! - which nodes are examined ([`crate::feasible`]): `schedule_one.go`
//!   `numFeasibleNodesToFind`, `findNodesThatFitPod`/`findNodesThatPassFilters`
//!   with the rotating `nextStartNodeIndex`.
//! - scores ([`crate::scores`]): NodeResourcesFit LeastAllocated
//!   (`least_allocated.go`, weight 1), NodeResourcesBalancedAllocation
//!   (`balanced_allocation.go`, weight 1), TaintToleration's PreferNoSchedule
//!   score with reversed `DefaultNormalizeScore` (weight 3).
//! - host selection ([`crate::select`]): `schedule_one.go` `selectHost`.
//! - the failure message ([`crate::diagnosis`]): `FitError.Error`.
//!
//! Not modelled: preemption (DefaultPreemption PostFilter; an unschedulable
//! pod simply stays pending), and the plugins whose inputs the model lacks
//! (node affinity, ports, volumes, inter-pod affinity, image locality, and
//! PodTopologySpread, whose system-default constraints spread a workload's
//! pods over hostnames and zones upstream; modelling it needs per-node pod
//! counts per workload in the view). Known approximation: NodeResourcesFit scores with the node's
//! real requested total where upstream uses `NonZeroRequested` (see
//! [`crate::scores`]).

use crate::api::Scheduler;
use crate::profile::KubeProfile;
use crate::scores::FitStrategy;
use clusters::{ClusterView, PendingPod, Placement};

/// kube-scheduler's default profile.
#[derive(Debug, Clone)]
pub struct DefaultScheduler {
    profile: KubeProfile,
}

impl DefaultScheduler {
    pub const NAME: &'static str = "default";

    /// Tie-breaks draw from the run's `seed` (scheduler stream).
    pub fn new(seed: u64) -> DefaultScheduler {
        DefaultScheduler {
            profile: KubeProfile::new(FitStrategy::LeastAllocated, seed),
        }
    }

    /// The start index of the next attempt's node scan.
    pub fn next_start_node_index(&self) -> usize {
        self.profile.next_start_node_index()
    }
}

impl Scheduler for DefaultScheduler {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        self.profile.schedule(pod, cluster)
    }
}
