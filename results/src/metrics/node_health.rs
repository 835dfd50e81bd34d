//! Each node's health over the run, from the node events: which nodes are
//! Degraded at a moment (for placements onto degraded nodes) and the fault
//! window (for cost volatility under faults).

use schedlab_core::record::EventKind;
use schedlab_core::{NodeId, Time};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Health {
    Degraded,
    Failed,
    Lost,
}

/// Nodes not healthy now (absent: healthy, as every node starts), and the
/// times that bound the fault window.
#[derive(Debug, Default)]
pub(super) struct NodeHealth {
    down: BTreeMap<NodeId, Health>,
    first_fault: Option<Time>,
    last_restore: Option<Time>,
}

impl NodeHealth {
    pub fn event(&mut self, t: Time, kind: &EventKind) {
        let (node, health) = match kind {
            EventKind::NodeDegraded { node } => (*node, Some(Health::Degraded)),
            EventKind::NodeFailed { node } => (*node, Some(Health::Failed)),
            EventKind::NodeLost { node } => (*node, Some(Health::Lost)),
            EventKind::NodeRecovered { node } | EventKind::NodeReplaced { node } => (*node, None),
            _ => return,
        };
        match health {
            Some(h) => {
                self.first_fault.get_or_insert(t);
                self.down.insert(node, h);
            }
            None => {
                self.last_restore = Some(t);
                self.down.remove(&node);
            }
        }
    }

    /// Whether `node` is Degraded now (a Failed or Lost node is not: it
    /// takes no pods at all).
    pub fn is_degraded(&self, node: NodeId) -> bool {
        self.down.get(&node) == Some(&Health::Degraded)
    }

    /// From the first NodeFailed / NodeDegraded / NodeLost to the last
    /// NodeRecovered / NodeReplaced, or to `end` when a node is still down
    /// then; `None` without faults.
    pub fn fault_window(&self, end: Time) -> Option<(Time, Time)> {
        let start = self.first_fault?;
        let stop = if self.down.is_empty() {
            self.last_restore.unwrap_or(end).max(start)
        } else {
            end
        };
        Some((start, stop))
    }
}
