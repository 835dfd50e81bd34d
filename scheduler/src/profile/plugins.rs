//! The plugins a [`super::Profile`] is made of, one enum per extension
//! point, each variant carrying that plugin's configuration (its args, in
//! kube-scheduler's terms). A release difference is a field of the
//! configuration of the plugin it concerns, so the functions below match on
//! the plugin, never on a profile-wide release.
//!
//! Enums rather than trait objects: the cycle matches on the plugin kind for
//! every node it examines, which costs a jump where a virtual call would
//! cost an indirect one and block inlining.

use crate::cost_binpack::cheapest_per_core;
use crate::filters::{FilterFailure, node_resources_fit, node_unschedulable, taint_toleration};
use crate::load_aware::{load_aware_score, usage_filter};
use crate::release::Release;
use crate::scores::{
    FitStrategy, MAX_NODE_SCORE, ResourceWeights, balanced_allocation_as, default_normalize_score,
    intolerable_prefer_no_schedule, node_resources_fit_weighted,
};
use crate::target_load::target_load_packing_score;
use schedlab_core::node::{NodeCondition, NodeState};
use schedlab_core::pod::PodSpec;
use std::fmt;

/// A Filter plugin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum FilterPlugin {
    /// a cordoned node rejects pods not tolerating its unschedulable taint
    NodeUnschedulable,
    /// untolerated NoSchedule/NoExecute taints, a NotReady node's unreachable ones included
    TaintToleration,
    /// pod count and requests against allocatable
    NodeResourcesFit,
    /// Koordinator's observed-usage thresholds ([`usage_filter`])
    LoadAwareScheduling,
}

impl FilterPlugin {
    pub fn name(self) -> &'static str {
        match self {
            FilterPlugin::NodeUnschedulable => "NodeUnschedulable",
            FilterPlugin::TaintToleration => "TaintToleration",
            FilterPlugin::NodeResourcesFit => "NodeResourcesFit",
            FilterPlugin::LoadAwareScheduling => "LoadAwareScheduling",
        }
    }

    /// The plugin's verdict on `node` for `pod`.
    pub fn filter<'a>(self, pod: &PodSpec, node: &'a NodeState) -> Result<(), FilterFailure<'a>> {
        match self {
            FilterPlugin::NodeUnschedulable => node_unschedulable(pod, node),
            FilterPlugin::TaintToleration => taint_toleration(pod, node),
            FilterPlugin::NodeResourcesFit => node_resources_fit(pod, node),
            // out of line: inlined, its float rounding is hoisted above the
            // match and paid by every profile on every node
            FilterPlugin::LoadAwareScheduling => usage_filter_out_of_line(node),
        }
    }
}

#[inline(never)]
fn usage_filter_out_of_line(node: &NodeState) -> Result<(), FilterFailure<'static>> {
    usage_filter(node)
}

impl fmt::Display for FilterPlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// NodeResourcesFit's score configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct FitArgs {
    /// `scoringStrategy.type`
    pub strategy: FitStrategy,
    /// whose scorer: v1.20 keeps the weight of a resource the node has none
    /// of and scores MostAllocated beyond capacity 0 (see [`crate::release`])
    pub rules: Release,
    /// `scoringStrategy.resources`: cpu and memory, 1 and 1 by default
    pub resources: ResourceWeights,
}

/// A Score plugin with its configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ScorePlugin {
    NodeResourcesFit(FitArgs),
    /// NodeResourcesBalancedAllocation, by the rules of a release (v1.20
    /// balances the non-zero requests with a steeper formula)
    BalancedAllocation {
        rules: Release,
    },
    /// the count of untolerated PreferNoSchedule taints (lower is better)
    TaintToleration,
    /// Trimaran's TargetLoadPacking ([`target_load_packing_score`])
    TargetLoadPacking,
    /// Koordinator's LoadAwareScheduling ([`load_aware_score`])
    LoadAwareScheduling,
}

impl ScorePlugin {
    pub fn name(self) -> &'static str {
        match self {
            ScorePlugin::NodeResourcesFit(_) => "NodeResourcesFit",
            ScorePlugin::BalancedAllocation { .. } => "NodeResourcesBalancedAllocation",
            ScorePlugin::TaintToleration => "TaintToleration",
            ScorePlugin::TargetLoadPacking => "TargetLoadPacking",
            ScorePlugin::LoadAwareScheduling => "LoadAwareScheduling",
        }
    }

    /// The raw scores of `ranked` (indices into `nodes`) for `pod`, appended
    /// to `out` in order. The plugin is matched once, outside the loop over
    /// the nodes: matched per node, the arms merge and the float rounding of
    /// the usage plugins is computed for every plugin.
    pub fn score_into(self, pod: &PodSpec, nodes: &[NodeState], ranked: &[usize], out: &mut Vec<i64>) {
        let each = ranked.iter().map(|&i| &nodes[i]);
        match self {
            ScorePlugin::NodeResourcesFit(args) => {
                out.extend(
                    each.map(|node| node_resources_fit_weighted(args.rules, args.strategy, args.resources, node, pod)),
                );
            }
            ScorePlugin::BalancedAllocation { rules } => {
                out.extend(each.map(|node| balanced_allocation_as(rules, node, pod)));
            }
            ScorePlugin::TaintToleration => {
                out.extend(each.map(|node| intolerable_prefer_no_schedule(&node.spec.taints, &pod.tolerations)));
            }
            ScorePlugin::TargetLoadPacking => out.extend(each.map(|node| target_load_packing_score(node, pod))),
            ScorePlugin::LoadAwareScheduling => out.extend(each.map(|node| load_aware_score(node, pod))),
        }
    }
}

impl fmt::Display for ScorePlugin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        match self {
            ScorePlugin::NodeResourcesFit(args) => {
                f.write_str(" ")?;
                f.write_str(args.strategy.type_name())?;
                if let FitStrategy::RequestedToCapacityRatio(shape) = args.strategy {
                    let points: Vec<String> = shape.iter().map(|p| format!("{}:{}", p.utilization, p.score)).collect();
                    write!(f, " [{}]", points.join(" "))?;
                }
                if args.resources != ResourceWeights::CPU_MEMORY {
                    write!(f, " cpu {} memory {}", args.resources.cpu, args.resources.memory)?;
                }
                write!(f, " {}", args.rules)
            }
            ScorePlugin::BalancedAllocation { rules } => write!(f, " {rules}"),
            _ => Ok(()),
        }
    }
}

/// A plugin's NormalizeScore.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Normalize {
    /// the raw score is already on 0..=100
    None,
    /// `helper.DefaultNormalizeScore(MaxNodeScore, reverse: true)`: more is
    /// worse, scaled by the worst node
    Reversed,
}

impl Normalize {
    pub fn apply(self, scores: &mut [i64]) {
        match self {
            Normalize::None => {}
            Normalize::Reversed => default_normalize_score(MAX_NODE_SCORE, true, scores),
        }
    }
}

/// A Score plugin as a profile enables it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct Scored {
    pub plugin: ScorePlugin,
    pub weight: i64,
    pub normalize: Normalize,
}

impl fmt::Display for Scored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.plugin)?;
        if self.normalize == Normalize::Reversed {
            f.write_str(" reversed")?;
        }
        write!(f, " ({})", self.weight)
    }
}

/// A rule narrowing the feasible nodes before any is scored; not a
/// kube-scheduler extension point, but how `cost-binpack` puts price before
/// packing without folding it into a weighted sum. Only the nodes left are
/// scored (and so ranked in explanations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum Preference {
    /// Degraded nodes are set aside unless every node left is Degraded
    Healthy,
    /// the nodes of the lowest price per allocatable core
    /// ([`cheapest_per_core`])
    CheapestPerCore,
}

impl Preference {
    pub fn name(self) -> &'static str {
        match self {
            Preference::Healthy => "Healthy",
            Preference::CheapestPerCore => "CheapestPerCore",
        }
    }

    /// Keeps, in order, the nodes of `kept` (indices into `nodes`) this rule prefers.
    pub fn narrow(self, nodes: &[NodeState], kept: &mut Vec<usize>) {
        match self {
            Preference::Healthy => {
                let healthy = |i: &usize| nodes[*i].condition != NodeCondition::Degraded;
                if kept.iter().any(healthy) {
                    kept.retain(healthy);
                }
            }
            Preference::CheapestPerCore => cheapest_per_core(nodes, kept),
        }
    }
}

impl fmt::Display for Preference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
