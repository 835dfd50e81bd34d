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
//! - scores ([`crate::scores`], enabled as [`kube_default_scores`] says):
//!   NodeResourcesLeastAllocated (weight 1) over the node's
//!   `NonZeroRequested`, NodeResourcesBalancedAllocation (weight 1),
//!   TaintToleration's PreferNoSchedule score with reversed
//!   `DefaultNormalizeScore` (weight 1 in v1.20, 3 in v1.33).
//! - host selection ([`crate::select`]): `selectHost`.
//! - the failure message ([`crate::diagnosis`]): `FitError.Error`.
//! - preemption ([`crate::preemption`]): the DefaultPreemption PostFilter
//!   for a pod no node takes (`defaultpreemption/default_preemption.go`).
//!
//! The twin test (`tests/twin_local.rs`) plays one pod sequence against the
//! real v1.20 kube-scheduler and checks that its choice is in this
//! re-implementation's top-score set ([`Cycle::evaluate`]); a
//! second sequence of pods that must preempt checks the nominated node and
//! the victims ([`Cycle::evaluate_preemption`]).
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

use crate::profile::{Cycle, DEFAULT_FILTERS, Profile, Sampling, Scored, kube_default_scores, profile_arm};
use crate::release::Release;
use crate::scores::FitStrategy;

/// kube-scheduler's default profile by v1.20's rules: the `default` arm.
pub const PROFILE: Profile = profile(Release::V1_20);
/// kube-scheduler's default profile by v1.33's rules.
pub const PROFILE_V1_33: Profile = profile(Release::V1_33);

/// The default profile as `release` enables it.
pub const fn profile(release: Release) -> Profile {
    Profile {
        name: "default",
        release,
        sampling: Sampling::Adaptive,
        filters: DEFAULT_FILTERS,
        preferences: &[],
        preemption: true,
        scores: match release {
            Release::V1_20 => &V1_20_SCORES,
            Release::V1_33 => &V1_33_SCORES,
        },
    }
}

const V1_20_SCORES: [Scored; 3] = kube_default_scores(Release::V1_20, FitStrategy::LeastAllocated);
const V1_33_SCORES: [Scored; 3] = kube_default_scores(Release::V1_33, FitStrategy::LeastAllocated);

/// kube-scheduler's default profile, run by a [`Cycle`] (whose `evaluate`
/// and `evaluate_preemption` it answers through `Deref`).
#[derive(Debug, Clone)]
pub struct DefaultScheduler(Cycle);

impl DefaultScheduler {
    pub const NAME: &'static str = PROFILE.name;
    /// The release whose rules [`DefaultScheduler::new`] follows: that of
    /// the real kube-scheduler this arm stands for on the `local` backend.
    pub const RELEASE: Release = PROFILE.release;

    /// Tie-breaks draw from the run's `seed` (scheduler stream).
    pub fn new(seed: u64) -> DefaultScheduler {
        DefaultScheduler::with_release(Self::RELEASE, seed)
    }

    /// The default profile as `release` scores.
    pub fn with_release(release: Release, seed: u64) -> DefaultScheduler {
        DefaultScheduler(Cycle::new(profile(release), seed))
    }

    pub fn release(&self) -> Release {
        self.0.profile().release
    }
}

profile_arm!(DefaultScheduler);
