//! Which nodes a scheduling attempt examines, after
//! `pkg/scheduler/schedule_one.go`: `numFeasibleNodesToFind` caps how many
//! feasible nodes are looked for in a large cluster, and
//! `findNodesThatPassFilters` scans from a start index that rotates across
//! attempts so every node gets its turn.
//!
//! Upstream checks nodes in parallel and may examine a few more nodes than it
//! needs before the cancellation lands; this scan is sequential and stops at
//! exactly the quota, so runs are reproducible.

use crate::diagnosis::Diagnosis;
use crate::filters::{FilterFailure, run_filters};
use schedlab_core::node::NodeState;
use schedlab_core::pod::PodSpec;

/// `minFeasibleNodesToFind`: below this many nodes every node is examined,
/// and at least this many feasible nodes are looked for.
pub const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// `minFeasibleNodesPercentageToFind`: the floor of the adaptive percentage.
pub const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: usize = 5;

/// `numFeasibleNodesToFind` with `percentageOfNodesToScore` unset (the
/// default): the adaptive percentage `50 - numAllNodes/125`, floored at 5%,
/// and never fewer than 100 nodes. Integer arithmetic as upstream.
pub fn num_feasible_nodes_to_find(num_all_nodes: usize) -> usize {
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND {
        return num_all_nodes;
    }
    let percentage = 50usize
        .saturating_sub(num_all_nodes / 125)
        .max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    (num_all_nodes * percentage / 100).max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// `numFeasibleNodesToFind` with `percentageOfNodesToScore` set to
/// `percentage` (1..=100; 0 is unset, [`num_feasible_nodes_to_find`]):
/// that share of the nodes, never fewer than 100, every node at 100.
pub fn num_feasible_nodes_to_find_with(num_all_nodes: usize, percentage: u32) -> usize {
    if percentage == 0 {
        return num_feasible_nodes_to_find(num_all_nodes);
    }
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND || percentage >= 100 {
        return num_all_nodes;
    }
    (num_all_nodes * percentage as usize / 100).max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// The rotating scan of `findNodesThatPassFilters`, holding the scheduler's
/// `nextStartNodeIndex` between attempts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeScan {
    next_start_node_index: usize,
}

impl NodeScan {
    pub fn new() -> NodeScan {
        NodeScan::default()
    }

    /// Where the next scan starts (taken modulo the node count then).
    pub fn next_start_node_index(&self) -> usize {
        self.next_start_node_index
    }

    /// Scans `nodes` from the start index, wrapping around, until `limit`
    /// feasible nodes are found or every node was examined. Writes the indices
    /// of the feasible nodes into `feasible` (cleared first) in scan order,
    /// records each rejection into `diagnosis`, and advances the start index
    /// by the number of nodes examined.
    pub fn find<'a>(
        &mut self,
        pod: &PodSpec,
        nodes: &'a [NodeState],
        limit: usize,
        feasible: &mut Vec<usize>,
        diagnosis: &mut Diagnosis<'a>,
    ) {
        self.find_with(pod, nodes, limit, feasible, diagnosis, run_filters);
    }

    /// [`NodeScan::find`] with the Filter plugins `filter` instead of the
    /// default profile's (a profile that adds plugins runs the default ones
    /// first, then its own).
    pub fn find_with<'a>(
        &mut self,
        pod: &PodSpec,
        nodes: &'a [NodeState],
        limit: usize,
        feasible: &mut Vec<usize>,
        diagnosis: &mut Diagnosis<'a>,
        mut filter: impl FnMut(&PodSpec, &'a NodeState) -> Result<(), FilterFailure<'a>>,
    ) {
        feasible.clear();
        let n = nodes.len();
        if n == 0 || limit == 0 {
            return;
        }
        let start = self.next_start_node_index % n;
        let mut processed = 0;
        for i in (start..n).chain(0..start) {
            processed += 1;
            // indices come from 0..n, so indexing cannot fail
            match filter(pod, &nodes[i]) {
                Ok(()) => {
                    feasible.push(i);
                    if feasible.len() == limit {
                        break;
                    }
                }
                Err(failure) => diagnosis.record(failure),
            }
        }
        self.next_start_node_index = (start + processed) % n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cluster, node};
    use schedlab_core::testing::pod;

    #[test]
    fn percentage_of_nodes_to_score() {
        // 0 is unset: the adaptive share
        assert_eq!(
            num_feasible_nodes_to_find_with(5000, 0),
            num_feasible_nodes_to_find(5000)
        );
        // every node below 100 nodes or at 100%
        assert_eq!(num_feasible_nodes_to_find_with(99, 10), 99);
        assert_eq!(num_feasible_nodes_to_find_with(5000, 100), 5000);
        // the share, never below 100 nodes
        assert_eq!(num_feasible_nodes_to_find_with(5000, 30), 1500);
        assert_eq!(num_feasible_nodes_to_find_with(500, 10), 100);
    }

    #[test]
    fn num_feasible_nodes_to_find_table() {
        let cases = [
            // below minFeasibleNodesToFind: all
            (0, 0),
            (50, 50),
            (99, 99),
            // 100: pct = 50 - 100/125 = 50; 100*50/100 = 50 < 100 -> 100
            (100, 100),
            // 199: pct 50 - 1 = 49; 199*49/100 = 97 -> 100
            (199, 100),
            // 1000: pct = 50 - 1000/125 = 42; 1000*42/100 = 420
            (1000, 420),
            // 5000: pct = 50 - 40 = 10; 5000*10/100 = 500
            (5000, 500),
            // 6000: pct = 50 - 48 = 2 -> floor 5; 6000*5/100 = 300
            (6000, 300),
            // 10000: pct 50 - 80 < 0 -> 5; 500
            (10000, 500),
        ];
        for (nodes, want) in cases {
            assert_eq!(num_feasible_nodes_to_find(nodes), want, "{nodes} nodes");
        }
    }

    #[test]
    fn start_index_rotates_by_nodes_processed() {
        // 10 nodes, the even ones cordoned: feasible are 1, 3, 5, 7, 9
        let nodes = cluster((0..10).map(|i| {
            let n = node(&format!("n{i}"));
            if i % 2 == 0 { n.cordoned() } else { n }
        }));
        let p = pod(100, 0);
        let mut scan = NodeScan::new();
        let mut feasible = Vec::new();

        let mut diag = Diagnosis::new();
        // from 0, two feasible: examines 0,1,2,3 -> next start 4
        scan.find(&p, &nodes, 2, &mut feasible, &mut diag);
        assert_eq!(feasible, vec![1, 3]);
        assert_eq!(diag.count(crate::diagnosis::reason::UNSCHEDULABLE), 2);
        assert_eq!(scan.next_start_node_index(), 4);

        // from 4, three feasible: 4..=9 examined -> next start 0
        let mut diag = Diagnosis::new();
        scan.find(&p, &nodes, 3, &mut feasible, &mut diag);
        assert_eq!(feasible, vec![5, 7, 9]);
        assert_eq!(scan.next_start_node_index(), 0);

        // from 0, four feasible: 0..=7 examined -> next start 8
        let mut diag = Diagnosis::new();
        scan.find(&p, &nodes, 4, &mut feasible, &mut diag);
        assert_eq!(feasible, vec![1, 3, 5, 7]);
        assert_eq!(scan.next_start_node_index(), 8);
        // wraps around: from 8, two feasible: 8, 9, 0, 1 examined -> (8 + 4) % 10 = 2
        let mut diag = Diagnosis::new();
        scan.find(&p, &nodes, 2, &mut feasible, &mut diag);
        assert_eq!(feasible, vec![9, 1]);
        assert_eq!(scan.next_start_node_index(), 2);

        // not enough feasible nodes: every node examined, start unchanged
        let mut diag = Diagnosis::new();
        scan.find(&p, &nodes, 8, &mut feasible, &mut diag);
        assert_eq!(feasible, vec![3, 5, 7, 9, 1]);
        assert_eq!(diag.count(crate::diagnosis::reason::UNSCHEDULABLE), 5);
        assert_eq!(scan.next_start_node_index(), 2);
    }

    #[test]
    fn start_index_survives_a_shrinking_cluster() {
        let p = pod(0, 0);
        let mut scan = NodeScan::new();
        let mut feasible = Vec::new();
        let big = cluster((0..10).map(|i| node(&format!("n{i}"))));
        scan.find(&p, &big, 8, &mut feasible, &mut Diagnosis::new());
        assert_eq!(scan.next_start_node_index(), 8);
        // 3 nodes now: start at 8 % 3 = 2
        let small = cluster((0..3).map(|i| node(&format!("n{i}"))));
        scan.find(&p, &small, 2, &mut feasible, &mut Diagnosis::new());
        assert_eq!(feasible, vec![2, 0]);
        assert_eq!(scan.next_start_node_index(), 1);
        scan.find(&p, &[], 2, &mut feasible, &mut Diagnosis::new());
        assert!(feasible.is_empty());
    }
}
