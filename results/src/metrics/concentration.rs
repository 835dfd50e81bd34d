//! Failure concentration: whether a run's failures stay on a few nodes
//! (hotspots isolated) or spread over the cluster.

use schedlab_core::NodeId;
use std::collections::HashMap;

/// Failures per node, as `failures` counts them (each names its node).
#[derive(Debug, Default)]
pub(super) struct FailureSpread {
    per_node: HashMap<NodeId, u64>,
}

impl FailureSpread {
    pub fn failure(&mut self, node: NodeId) {
        *self.per_node.entry(node).or_default() += 1;
    }

    /// The share of the failures on the ⌈10%⌉ of `nodes` (at least one) with
    /// the most failures; `None` without failures.
    pub fn finish(&self, nodes: u32) -> Option<f64> {
        let total: u64 = self.per_node.values().sum();
        if total == 0 {
            return None;
        }
        let k = (u64::from(nodes).div_ceil(10)).max(1) as usize;
        let mut counts: Vec<u64> = self.per_node.values().copied().collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let top: u64 = counts.iter().take(k).sum();
        Some(top as f64 / total as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_tenth_of_nodes_rounded_up() {
        let mut s = FailureSpread::default();
        assert_eq!(s.finish(20), None, "no failures: undefined");
        // 20 nodes: the top 2; failures 5, 3, 1, 1 on four nodes
        for (node, n) in [(0, 5), (1, 3), (7, 1), (9, 1)] {
            for _ in 0..n {
                s.failure(NodeId(node));
            }
        }
        assert_eq!(s.finish(20), Some(0.8));
        // 11 nodes: ⌈1.1⌉ = 2 nodes; 3 nodes: at least 1
        assert_eq!(s.finish(11), Some(0.8));
        assert_eq!(s.finish(3), Some(0.5));
        // 40 nodes: the top 4 hold every failure
        assert_eq!(s.finish(40), Some(1.0));
    }
}
