//! Samples of every node and of the cluster, computed the same way by every
//! backend from the nodes as schedulers see them.

use crate::node::NodeState;
use crate::record::{ClusterSample, NodeSample, Record};
use crate::resources::Resources;
use crate::time::Time;

/// Writes one [`NodeSample`] per node, then a [`ClusterSample`], to `out`.
/// The cluster's allocatable, requested and used sum over Ready nodes
/// (Degraded ones included), so their ratios are the utilisation of the
/// nodes that can run pods; `nodes_in_use` and `hourly_cost` count every
/// node hosting a pod, ready or not, since such a node is still billed.
pub fn write_samples(t: Time, nodes: &[NodeState], pending: u32, bound: u32, out: &mut dyn FnMut(Record)) {
    let mut allocatable = Resources::ZERO;
    let mut requested = Resources::ZERO;
    let mut used = Resources::ZERO;
    let mut nodes_in_use = 0u32;
    let mut nodes_ready = 0u32;
    let mut hourly_cost = 0.0;
    for n in nodes {
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
        out(Record::NodeSample(NodeSample {
            t,
            node: n.id,
            requested: n.requested,
            used: n.used,
            pods: n.pod_count,
            condition: n.condition,
        }));
    }
    out(Record::ClusterSample(ClusterSample {
        t,
        allocatable,
        requested,
        used,
        pending,
        bound,
        nodes_in_use,
        nodes_ready,
        hourly_cost,
    }));
}
