//! The DRS state vector: every node's feature row in a fixed node order,
//! then the pod's features, as DRS concatenates its nodes' metrics and the
//! pod's profile. The rows are AGMARL's local node features
//! ([`crate::agmarl::features`]), so the two methods see the same facts and
//! differ in architecture only.
//!
//! Slot `i` holds the node of [`schedlab_core::NodeId`] index `i`, which is
//! the node's place in the order the cluster's nodes joined (the view lists
//! nodes by it): a node's name plays no part, so renaming nodes changes no
//! slot, and every arm of a seed sees the same order. A slot without a node
//! is zeros. A node that joins when every slot is taken (an autoscaler
//! growing the cluster past the size the network was built for) has no slot
//! and is never chosen: the network has no output for it.

use crate::agmarl::features::{NODE_FEATURES, Observation, POD_FEATURES};
use crate::drs::network::input_dim;

/// The slot of the view row `row` in a network for `nodes` nodes, if it has one.
pub fn slot_of(row: usize, nodes: usize) -> Option<usize> {
    (row < nodes).then_some(row)
}

/// Writes the state of `obs` for a network of `nodes` nodes into `out`
/// ([`input_dim`]`(nodes)` numbers).
pub fn state_into(obs: &Observation, nodes: usize, out: &mut Vec<f32>) {
    out.clear();
    out.resize(input_dim(nodes), 0.0);
    let rows = obs.n.min(nodes);
    out[..rows * NODE_FEATURES].copy_from_slice(&obs.node_features[..rows * NODE_FEATURES]);
    let pod = nodes * NODE_FEATURES;
    out[pod..pod + POD_FEATURES].copy_from_slice(&obs.pod_features[..POD_FEATURES]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::features::observe;
    use crate::testing::{cluster, node, pending, view};
    use schedlab_core::testing::{GI, pod};

    #[test]
    fn rows_by_join_order_padding_and_the_pod_last() {
        let nodes = cluster([node("b").cpu("4"), node("a").cpu("8")]);
        let spec = pod(500, GI);
        let obs = observe(&pending(&spec), &view(&nodes));
        let mut state = Vec::new();
        state_into(&obs, 3, &mut state);
        assert_eq!(state.len(), 3 * NODE_FEATURES + POD_FEATURES);
        assert_eq!(&state[..NODE_FEATURES], obs.node(0).unwrap());
        assert_eq!(&state[NODE_FEATURES..2 * NODE_FEATURES], obs.node(1).unwrap());
        assert!(state[2 * NODE_FEATURES..3 * NODE_FEATURES].iter().all(|&x| x == 0.0));
        assert_eq!(&state[3 * NODE_FEATURES..], obs.pod_features.as_slice());

        // renaming the nodes changes nothing: the order is the join order
        let renamed = cluster([node("zz").cpu("4"), node("aa").cpu("8")]);
        let obs2 = observe(&pending(&spec), &view(&renamed));
        let mut state2 = Vec::new();
        state_into(&obs2, 3, &mut state2);
        assert_eq!(state, state2);

        // a node beyond the network's size has no slot
        state_into(&obs, 1, &mut state2);
        assert_eq!(state2.len(), NODE_FEATURES + POD_FEATURES);
        assert_eq!(&state2[..NODE_FEATURES], obs.node(0).unwrap());
        assert_eq!(slot_of(1, 1), None);
        assert_eq!(slot_of(0, 1), Some(0));
    }
}
