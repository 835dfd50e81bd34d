//! `binpack`: kube-scheduler configured for bin packing, following the same
//! release as `default` ([`DefaultScheduler::RELEASE`], v1.20 on the
//! simulator) with only the fit strategy swapped, so that the two arms
//! differ in nothing else.
//!
//! In v1.20 that configuration is the default profile with the
//! NodeResourcesMostAllocated score plugin (weight 1, cpu and memory
//! weighted 1 and 1) in place of NodeResourcesLeastAllocated
//! (`pkg/scheduler/framework/plugins/noderesources/most_allocated.go` of
//! v1.20, scored as [`crate::scores::FitStrategy::score_as`] says: a
//! resource requested beyond capacity scores 0). Everything else is
//! `default`'s (see [`crate::default`] and [`crate::release`]): the same
//! filters, node sampling and rotation, v1.20's BalancedAllocation (weight
//! 1), TaintToleration scoring (weight 1), the v1.20 failure message and
//! seeded tie-breaks.
//!
//! From v1.22 on the same configuration is written as NodeResourcesFit's
//! `scoringStrategy: MostAllocated`, as documented in "Resource Bin Packing"
//! (kubernetes.io/docs/concepts/scheduling-eviction/resource-bin-packing/);
//! [`BinPackScheduler::with_release`] with [`Release::V1_33`] builds that
//! variant (MostAllocated caps a request beyond capacity instead, and
//! TaintToleration weighs 3).

use crate::default::DefaultScheduler;
use crate::profile::{Cycle, DEFAULT_FILTERS, Profile, Sampling, Scored, kube_default_scores, profile_arm};
use crate::release::Release;
use crate::scores::FitStrategy;

/// The bin-packing configuration by `default`'s release (v1.20): the `binpack` arm.
pub const PROFILE: Profile = profile(DefaultScheduler::RELEASE);
/// The bin-packing configuration by v1.33's rules.
pub const PROFILE_V1_33: Profile = profile(Release::V1_33);

/// The default profile as `release` enables it, with MostAllocated.
pub const fn profile(release: Release) -> Profile {
    Profile {
        name: "binpack",
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

const V1_20_SCORES: [Scored; 3] = kube_default_scores(Release::V1_20, FitStrategy::MostAllocated);
const V1_33_SCORES: [Scored; 3] = kube_default_scores(Release::V1_33, FitStrategy::MostAllocated);

/// kube-scheduler with the MostAllocated fit score.
#[derive(Debug, Clone)]
pub struct BinPackScheduler(Cycle);

impl BinPackScheduler {
    pub const NAME: &'static str = PROFILE.name;

    /// `default`'s release with MostAllocated; tie-breaks draw from the
    /// run's `seed` (scheduler stream).
    pub fn new(seed: u64) -> BinPackScheduler {
        BinPackScheduler::with_release(DefaultScheduler::RELEASE, seed)
    }

    /// The bin-packing configuration as `release` scores it.
    pub fn with_release(release: Release, seed: u64) -> BinPackScheduler {
        BinPackScheduler(Cycle::new(profile(release), seed))
    }

    pub fn release(&self) -> Release {
        self.0.profile().release
    }
}

profile_arm!(BinPackScheduler);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::Scheduler;
    use crate::testing::{cluster, node, pending, view};
    use schedlab_core::Placement;
    use schedlab_core::node::NodeId;
    use schedlab_core::testing::{GI, pod};

    #[test]
    fn follows_the_default_release_where_v1_20_and_v1_33_disagree() {
        // a memory-only pod counts as 100m cpu, pushing `full-cpu` past its cpu
        let nodes = cluster([
            node("full-cpu").cpu("2").memory("8Gi").requested("2", "2Gi"),
            node("roomy").cpu("4").memory("8Gi").requested("1", "2Gi"),
        ]);
        let spec = pod(0, 2 * GI);
        let totals = |release| {
            profile(release)
                .node_scores(&spec, &nodes, &[0, 1])
                .iter()
                .map(|s| (s.plugins[0], s.plugins[1], s.total))
                .collect::<Vec<_>>()
        };
        // v1.20, full-cpu: cpu 2100 > 2000 scores 0, memory 4Gi/8Gi 50 -> 25;
        //   balanced: cpu fraction 1.05 reaches 1 -> 0; taint 100 * 1 -> 125
        // v1.20, roomy: cpu 1100 * 100 / 4000 = 27.5 -> 27, memory 50 -> 38;
        //   balanced: 1 - |0.275 - 0.5| = 0.775 -> 77; 38 + 77 + 100 = 215
        assert_eq!(totals(Release::V1_20), vec![(25, 0, 125), (38, 77, 215)]);
        // v1.33, full-cpu: cpu capped -> 100, memory 50 -> 75; balanced on the
        //   real requests 1.0 vs 0.5, std 0.25 -> 75; 75 + 75 + 300 = 450
        // v1.33, roomy: 38; balanced 0.25 vs 0.5, std 0.125 -> 87; 38 + 87 + 300 = 425
        assert_eq!(totals(Release::V1_33), vec![(75, 75, 450), (38, 87, 425)]);

        let mut binpack = BinPackScheduler::new(1);
        assert_eq!(binpack.release(), Release::V1_20);
        let mut v1_33 = BinPackScheduler::with_release(Release::V1_33, 1);
        for _ in 0..5 {
            assert_eq!(
                binpack.schedule(&pending(&spec), &view(&nodes)),
                Placement::Bind(NodeId(1))
            );
            assert_eq!(
                v1_33.schedule(&pending(&spec), &view(&nodes)),
                Placement::Bind(NodeId(0))
            );
        }
    }
}
