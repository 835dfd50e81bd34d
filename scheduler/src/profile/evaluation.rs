//! What one scheduling attempt finds before it picks a host, plugin by
//! plugin, for diagnostics ([`super::Cycle::evaluate`]).

use super::Profile;

/// The plugin scores of one scored node (upstream's `NodePluginScores`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeScores {
    /// index of the node in the view's node list
    pub node: usize,
    /// each Score plugin's score after its normalisation, unweighted, in
    /// the order of the profile's [`Profile::scores`]
    pub plugins: Vec<i64>,
    /// the weighted sum the host is picked by
    pub total: i64,
}

impl NodeScores {
    pub(super) fn new(node: usize) -> NodeScores {
        NodeScores {
            node,
            plugins: Vec::new(),
            total: 0,
        }
    }
}

/// What one scheduling attempt finds before it picks a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    /// the profile evaluated, whose [`Profile::scores`] name [`NodeScores::plugins`]
    pub profile: Profile,
    /// indices of the feasible nodes found, in scan order
    pub feasible: Vec<usize>,
    /// the scores of the feasible nodes the preferences keep, in scan order;
    /// empty when fewer than two are feasible, since upstream binds a lone
    /// feasible node unscored
    pub scores: Vec<NodeScores>,
    /// the failure message when no node is feasible
    pub unschedulable: Option<String>,
}

impl Evaluation {
    /// The nodes (indices into the view's node list) the attempt may bind:
    /// the lone feasible node, or every scored node with the top total, in
    /// scan order; empty when the pod is unschedulable.
    pub fn top_score_set(&self) -> Vec<usize> {
        if let [only] = self.feasible.as_slice() {
            return vec![*only];
        }
        let Some(top) = self.scores.iter().map(|s| s.total).max() else {
            return Vec::new();
        };
        self.scores.iter().filter(|s| s.total == top).map(|s| s.node).collect()
    }

    /// The scores of node `node` (an index), if it was scored.
    pub fn scores_of(&self, node: usize) -> Option<&NodeScores> {
        self.scores.iter().find(|s| s.node == node)
    }

    /// The score plugin `name` gave node `node`, if both were scored.
    pub fn plugin_score(&self, node: usize, name: &str) -> Option<i64> {
        let k = self.profile.scores.iter().position(|s| s.plugin.name() == name)?;
        self.scores_of(node)?.plugins.get(k).copied()
    }
}
