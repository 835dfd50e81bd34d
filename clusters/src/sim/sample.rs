//! Samples of every node and of the cluster.

use super::Sim;
use crate::record::{ClusterSample, NodeSample, Record, RecordSink};
use crate::resources::Resources;

impl Sim {
    /// Writes one [`NodeSample`] per node and a [`ClusterSample`]. The
    /// cluster's allocatable, requested and used sum over Ready nodes (Degraded
    /// ones included), so their ratios are the utilisation of the nodes that
    /// can run pods; `nodes_in_use` and `hourly_cost` count every node hosting
    /// a pod, ready or not, since such a node is still billed.
    pub(super) fn sample(&mut self, sink: &mut dyn RecordSink) {
        let t = self.now;
        let mut allocatable = Resources::ZERO;
        let mut requested = Resources::ZERO;
        let mut used = Resources::ZERO;
        let mut nodes_in_use = 0u32;
        let mut nodes_ready = 0u32;
        let mut hourly_cost = 0.0;
        for i in 0..self.nodes.len() {
            let n = &self.nodes[i];
            let record = Record::NodeSample(NodeSample {
                t,
                node: n.id,
                requested: n.requested,
                used: n.used,
                pods: n.pod_count,
                condition: n.condition,
            });
            if n.pod_count > 0 {
                nodes_in_use += 1;
                hourly_cost += n.spec.pool.hourly_price;
            }
            if n.condition.is_ready() {
                nodes_ready += 1;
                allocatable += n.spec.allocatable;
                requested += n.requested;
                used += n.used;
            }
            self.write(sink, record);
        }
        let record = Record::ClusterSample(ClusterSample {
            t,
            allocatable,
            requested,
            used,
            pending: self.pending_count,
            bound: self.bound_count,
            nodes_in_use,
            nodes_ready,
            hourly_cost,
        });
        self.write(sink, record);
        self.summary.samples += 1;
    }
}
