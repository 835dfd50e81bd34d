//! A scheduling profile as data, after kube-scheduler's framework
//! (`pkg/scheduler/apis/config` `KubeSchedulerProfile`): the plugins enabled
//! at each extension point, in order, the score plugins with their weights
//! and normalisation, and each plugin's configuration ([`plugins`]). One
//! generic [`Cycle`] runs any profile; the baselines `default`, `binpack`,
//! `cost-binpack`, `target-load` and `load-aware` are constants of this type
//! (listed in [`crate::registry::PROFILES`]).
//!
//! What differs between kube-scheduler releases is either the profile's
//! data (the default TaintToleration weight, [`kube_default_scores`]) or a
//! field of the configuration of the plugin it concerns (NodeResourcesFit's
//! and BalancedAllocation's `rules`); the profile's own [`Profile::release`]
//! only words the failure message.
//!
//! - [`Cycle`]: one scheduling attempt of a profile, and the [`crate::Scheduler`]
//!   every profile arm is.
//! - [`Evaluation`]: what an attempt sees, plugin by plugin, for diagnostics
//!   such as the twin test against a real kube-scheduler.
//! - [`file`]: a `KubeSchedulerConfiguration` file read into a profile, the
//!   arms `profile:FILE`.

mod cycle;
mod evaluation;
pub mod file;
pub mod plugins;

pub use cycle::Cycle;
pub(crate) use cycle::{Extension, profile_arm};
pub use evaluation::{Evaluation, NodeScores};
pub use plugins::{FilterPlugin, FitArgs, Normalize, Preference, ScorePlugin, Scored};

use crate::feasible::{num_feasible_nodes_to_find, num_feasible_nodes_to_find_with};
use crate::filters::{FilterFailure, run_filters};
use crate::release::Release;
use crate::scores::{FitStrategy, ResourceWeights};
use schedlab_core::node::NodeState;
use schedlab_core::pod::PodSpec;
use std::fmt;

/// Which nodes an attempt examines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Sampling {
    /// kube-scheduler's: from the rotating start until
    /// [`num_feasible_nodes_to_find`] nodes fit.
    Adaptive,
    /// kube-scheduler's with `percentageOfNodesToScore` set (1..=100): as
    /// [`Sampling::Adaptive`] with this percentage of the nodes instead of
    /// the adaptive one, never fewer than 100 nodes.
    Percentage(u32),
    /// Every node, so a global preference (the cheapest node) sees them all.
    /// A full scan leaves the start index where it was.
    Every,
}

impl Sampling {
    /// How many feasible nodes an attempt over `num_nodes` nodes looks for.
    pub fn limit(self, num_nodes: usize) -> usize {
        match self {
            Sampling::Adaptive => num_feasible_nodes_to_find(num_nodes),
            Sampling::Percentage(percentage) => num_feasible_nodes_to_find_with(num_nodes, percentage),
            Sampling::Every => num_nodes,
        }
    }
}

impl fmt::Display for Sampling {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sampling::Adaptive => f.write_str("adaptive"),
            Sampling::Percentage(p) => write!(f, "{p}%"),
            Sampling::Every => f.write_str("every node"),
        }
    }
}

/// A profile: its plugins at each extension point, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Profile {
    /// the arm name
    pub name: &'static str,
    /// the release whose words the "0/N nodes are available" message uses
    pub release: Release,
    pub sampling: Sampling,
    /// Filter: the first plugin that rejects a node decides its reason
    pub filters: &'static [FilterPlugin],
    /// applied in order to the feasible nodes before scoring
    pub preferences: &'static [Preference],
    /// Score and NormalizeScore: a node's total is the weighted sum
    pub scores: &'static [Scored],
    /// PostFilter: DefaultPreemption for a pod no node takes
    pub preemption: bool,
}

/// The Filter plugins of kube-scheduler's default profile the model has data
/// for, in its order (`apis/config/v1/default_plugins.go`).
pub const DEFAULT_FILTERS: &[FilterPlugin] = &[
    FilterPlugin::NodeUnschedulable,
    FilterPlugin::TaintToleration,
    FilterPlugin::NodeResourcesFit,
];

/// The Score plugins of kube-scheduler's default profile the model has data
/// for, as `release` enables them, with NodeResourcesFit's `strategy`:
/// NodeResourcesFit (1), NodeResourcesBalancedAllocation (1) and
/// TaintToleration (1 in v1.20, 3 as of v1.33), each plugin following the
/// release's rules.
pub const fn kube_default_scores(release: Release, strategy: FitStrategy) -> [Scored; 3] {
    let taint_toleration_weight = match release {
        Release::V1_20 => 1,
        Release::V1_33 => 3,
    };
    [
        Scored {
            plugin: ScorePlugin::NodeResourcesFit(FitArgs {
                strategy,
                rules: release,
                resources: ResourceWeights::CPU_MEMORY,
            }),
            weight: 1,
            normalize: Normalize::None,
        },
        Scored {
            plugin: ScorePlugin::BalancedAllocation { rules: release },
            weight: 1,
            normalize: Normalize::None,
        },
        Scored {
            plugin: ScorePlugin::TaintToleration,
            weight: taint_toleration_weight,
            normalize: Normalize::Reversed,
        },
    ]
}

impl Profile {
    /// Runs the Filter plugins on `node` in order; the first rejection wins.
    pub fn filter<'a>(&self, pod: &PodSpec, node: &'a NodeState) -> Result<(), FilterFailure<'a>> {
        filter_chain(*self)(pod, node)
    }

    /// Whether `node` passes the profile's filters for `pod`.
    pub fn is_feasible(&self, pod: &PodSpec, node: &NodeState) -> bool {
        self.filter(pod, node).is_ok()
    }

    /// The nodes of `feasible` left to score once the preferences have
    /// narrowed them: `feasible` itself when the profile has none, else
    /// `kept` filled.
    pub fn narrow<'s>(&self, nodes: &[NodeState], feasible: &'s [usize], kept: &'s mut Vec<usize>) -> &'s [usize] {
        if self.preferences.is_empty() {
            return feasible;
        }
        kept.clear();
        kept.extend_from_slice(feasible);
        for preference in self.preferences {
            preference.narrow(nodes, kept);
        }
        kept
    }

    /// Scores `ranked` (indices into `nodes`) with each Score plugin in turn:
    /// `each` sees the plugin and its normalised scores, in `ranked`'s order.
    /// `column` is scratch space.
    #[inline]
    pub fn score_each(
        &self,
        pod: &PodSpec,
        nodes: &[NodeState],
        ranked: &[usize],
        column: &mut Vec<i64>,
        mut each: impl FnMut(&Scored, &[i64]),
    ) {
        for scored in self.scores {
            column.clear();
            scored.plugin.score_into(pod, nodes, ranked, column);
            scored.normalize.apply(column);
            each(scored, column);
        }
    }

    /// `prioritizeNodes`: each of `ranked` with its weighted total, into
    /// `totals` (cleared first), in order.
    pub fn prioritize(
        &self,
        pod: &PodSpec,
        nodes: &[NodeState],
        ranked: &[usize],
        column: &mut Vec<i64>,
        totals: &mut Vec<(usize, i64)>,
    ) {
        totals.clear();
        totals.extend(ranked.iter().map(|&i| (i, 0)));
        self.score_each(pod, nodes, ranked, column, |scored, column| {
            for ((_, total), score) in totals.iter_mut().zip(column) {
                *total += scored.weight * score;
            }
        });
    }

    /// Each of `ranked` with every plugin's score and the total, in order.
    pub fn node_scores(&self, pod: &PodSpec, nodes: &[NodeState], ranked: &[usize]) -> Vec<NodeScores> {
        let mut scores: Vec<NodeScores> = ranked.iter().map(|&node| NodeScores::new(node)).collect();
        self.score_each(pod, nodes, ranked, &mut Vec::new(), |scored, column| {
            for (s, &score) in scores.iter_mut().zip(column) {
                s.plugins.push(score);
                s.total += scored.weight * score;
            }
        });
        scores
    }
}

/// The Filter plugins of `profile` as the closure the node scan and
/// preemption take (its signature spelled out so the closure is inferred as
/// general over the node's lifetime).
///
/// A list that starts with the default filters runs them as [`run_filters`]'
/// direct calls, then the rest plugin by plugin: the node scan runs the
/// chain on every node it examines, and a loop matching each plugin there
/// made the default profile's decisions half as slow again.
pub fn filter_chain(profile: Profile) -> impl for<'x> FnMut(&PodSpec, &'x NodeState) -> Result<(), FilterFailure<'x>> {
    let (defaults_first, rest) = match profile.filters.strip_prefix(DEFAULT_FILTERS) {
        Some(rest) => (true, rest),
        None => (false, profile.filters),
    };
    move |pod, node| {
        if defaults_first {
            run_filters(pod, node)?;
        }
        for plugin in rest {
            plugin.filter(pod, node)?;
        }
        Ok(())
    }
}
