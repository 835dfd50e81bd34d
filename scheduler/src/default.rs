//! `default`: a re-implementation of kube-scheduler's default profile for
//! what the cluster model has data for, following the rules of kubernetes
//! v1.20 ([`DefaultScheduler::RELEASE`]), the release of the real
//! kube-scheduler on the project's `local` control plane; v1.33's rules are
//! available through [`DefaultScheduler::with_release`] (the differences are
//! listed in [`crate::release`]).
//!
//! Upstream sources followed:
//! - filters ([`crate::filters`]): `plugins/nodeunschedulable/node_unschedulable.go`,
//!   `plugins/tainttoleration/taint_toleration.go`, `plugins/noderesources/fit.go`
//!   (`fitsRequest`); the node Ready check as the node lifecycle controller's
//!   `node.kubernetes.io/unreachable` taints on a node that stopped reporting.
//! - which nodes are examined ([`crate::feasible`]): `numFeasibleNodesToFind`,
//!   `findNodesThatFitPod`/`findNodesThatPassFilters` with the rotating
//!   `nextStartNodeIndex` (`core/generic_scheduler.go` in v1.20,
//!   `schedule_one.go` later).
//! - scores ([`crate::scores`]): NodeResourcesLeastAllocated (weight 1) over
//!   the node's `NonZeroRequested`, NodeResourcesBalancedAllocation (weight
//!   1), TaintToleration's PreferNoSchedule score with reversed
//!   `DefaultNormalizeScore` (weight 1 in v1.20, 3 in v1.33).
//! - host selection ([`crate::select`]): `selectHost`.
//! - the failure message ([`crate::diagnosis`]): `FitError.Error`.
//! - preemption ([`crate::preemption`]): the DefaultPreemption PostFilter
//!   for a pod no node takes (`defaultpreemption/default_preemption.go`).
//!
//! The twin test (`tests/twin_local.rs`) plays one pod sequence against the
//! real v1.20 kube-scheduler and checks that its choice is in this
//! re-implementation's top-score set ([`DefaultScheduler::evaluate`]); a
//! second sequence of pods that must preempt checks the nominated node and
//! the victims ([`DefaultScheduler::evaluate_preemption`]).
//!
//! Not modelled: the plugins whose inputs the model lacks
//! (node affinity, ports, volumes, inter-pod affinity, image locality, and
//! PodTopologySpread's system-default constraints, which spread the pods of a
//! Service, ReplicaSet or StatefulSet over hostnames and zones; the kube
//! backend creates bare pods, which they leave alone). For the project's
//! pods on emulated nodes (no affinities, no owners, no images reported)
//! those plugins score every node alike, so leaving them out changes no
//! decision there; real nodes with cached images may differ through
//! ImageLocality.

use crate::api::Scheduler;
use crate::explain::Explanation;
use crate::preemption::Candidate;
use crate::profile::{Evaluation, KubeProfile, Scoring};
use crate::release::Release;
use crate::scores::FitStrategy;
use schedlab_core::pod::PodSpec;
use schedlab_core::{ClusterView, PendingPod, Placement};

/// kube-scheduler's default profile.
#[derive(Debug, Clone)]
pub struct DefaultScheduler {
    profile: KubeProfile,
}

impl DefaultScheduler {
    pub const NAME: &'static str = "default";
    /// The release whose rules [`DefaultScheduler::new`] follows: that of
    /// the real kube-scheduler this arm stands for on the `local` backend.
    pub const RELEASE: Release = Release::V1_20;

    /// Tie-breaks draw from the run's `seed` (scheduler stream).
    pub fn new(seed: u64) -> DefaultScheduler {
        DefaultScheduler::with_release(Self::RELEASE, seed)
    }

    /// The default profile as `release` scores.
    pub fn with_release(release: Release, seed: u64) -> DefaultScheduler {
        DefaultScheduler {
            profile: KubeProfile::with_scoring(Scoring::new(release, FitStrategy::LeastAllocated), seed),
        }
    }

    pub fn release(&self) -> Release {
        self.profile.scoring().release
    }

    /// The start index of the next attempt's node scan.
    pub fn next_start_node_index(&self) -> usize {
        self.profile.next_start_node_index()
    }

    /// What the next attempt for `pod` would find (feasible nodes, their
    /// scores, the top-score set), without making it.
    pub fn evaluate(&self, pod: &PodSpec, cluster: &ClusterView<'_>) -> Evaluation {
        self.profile.evaluate(pod, cluster)
    }

    /// What DefaultPreemption would find for `pod` (see
    /// [`KubeProfile::evaluate_preemption`]).
    pub fn evaluate_preemption(&self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> (Vec<Candidate>, Vec<usize>) {
        self.profile.evaluate_preemption(pod, cluster)
    }
}

impl Scheduler for DefaultScheduler {
    fn name(&self) -> &str {
        Self::NAME
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        self.profile.schedule(pod, cluster)
    }

    fn set_explain(&mut self, on: bool) {
        self.profile.set_explain(on);
    }

    fn explanation(&self) -> Option<Explanation> {
        self.profile.explanation()
    }
}
