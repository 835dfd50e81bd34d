//! The pods each node holds, as preemption weighs them
//! ([`schedlab_core::ClusterView::pods_by_node`]), and the lowest priority
//! among them, kept in step with the nodes' `requested` so that a victim's
//! requests are exactly what its node counts for it.

use schedlab_core::node::NodeId;
use schedlab_core::pod::PodId;
use schedlab_core::view::BoundPod;
use std::collections::BTreeMap;

/// The pods counted on each node.
#[derive(Debug, Default)]
pub(super) struct Placed {
    /// indexed by NodeId
    by_node: Vec<Vec<BoundPod>>,
    /// how many pods of each priority the nodes hold
    priorities: BTreeMap<i32, u32>,
}

impl Placed {
    pub(super) fn add(&mut self, node: NodeId, pod: BoundPod) {
        let i = node.index();
        if self.by_node.len() <= i {
            self.by_node.resize_with(i + 1, Vec::new);
        }
        self.by_node[i].push(pod);
        *self.priorities.entry(pod.priority).or_default() += 1;
    }

    /// Takes `pod` off `node`; false when it was not there.
    pub(super) fn remove(&mut self, node: NodeId, pod: PodId) -> bool {
        let Some(list) = self.by_node.get_mut(node.index()) else {
            return false;
        };
        let Some(at) = list.iter().position(|b| b.id == pod) else {
            return false;
        };
        let gone = list.swap_remove(at);
        if let Some(count) = self.priorities.get_mut(&gone.priority) {
            *count -= 1;
            if *count == 0 {
                self.priorities.remove(&gone.priority);
            }
        }
        true
    }

    pub(super) fn by_node(&self) -> &[Vec<BoundPod>] {
        &self.by_node
    }

    pub(super) fn on(&self, node: NodeId) -> &[BoundPod] {
        self.by_node.get(node.index()).map_or(&[], Vec::as_slice)
    }

    pub(super) fn lowest_priority(&self) -> Option<i32> {
        self.priorities.first_key_value().map(|(&p, _)| p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::resources::Resources;
    use schedlab_core::time::Time;

    fn bound(id: u64, priority: i32) -> BoundPod {
        BoundPod {
            id: PodId(id),
            priority,
            requests: Resources::new(100, 100),
            started: Time(id),
        }
    }

    #[test]
    fn the_lowest_priority_follows_adds_and_removes() {
        let mut p = Placed::default();
        assert_eq!(p.lowest_priority(), None);
        p.add(NodeId(2), bound(1, 5));
        p.add(NodeId(0), bound(2, -3));
        p.add(NodeId(2), bound(3, -3));
        assert_eq!(p.by_node().len(), 3);
        assert_eq!(p.lowest_priority(), Some(-3));
        assert!(p.remove(NodeId(2), PodId(3)));
        assert_eq!(p.lowest_priority(), Some(-3), "pod 2 still holds it");
        assert!(!p.remove(NodeId(2), PodId(2)), "pod 2 is on node 0");
        assert!(p.remove(NodeId(0), PodId(2)));
        assert_eq!(p.lowest_priority(), Some(5));
        assert_eq!(p.on(NodeId(2)), [bound(1, 5)]);
        assert!(p.on(NodeId(9)).is_empty());
        assert!(!p.remove(NodeId(9), PodId(1)));
    }
}
