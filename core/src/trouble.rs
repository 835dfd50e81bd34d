//! Recent trouble per node ([`NodeState::recent`]) over a sliding window.
//!
//! Trouble is noted in time order, so one FIFO for all nodes suffices: each
//! instant drops what fell out of the window from the front, O(1) amortised
//! per note and never a scan over nodes or pods.

use crate::node::{NodeId, NodeState, RecentTrouble};
use crate::record::{EventKind, ExitReason};
use crate::time::Time;
use crate::view::WorkloadHistory;
use std::collections::VecDeque;

/// What an event counts as, for [`RecentTrouble`] and [`WorkloadHistory`].
/// Failures are [`EventKind::is_failure`], as the `results` crate counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trouble {
    Restart,
    OomKill,
    Failure,
}

impl Trouble {
    pub fn of(event: &EventKind) -> Option<Trouble> {
        match event {
            EventKind::ContainerStarted { restart_count, .. } if *restart_count > 0 => Some(Trouble::Restart),
            EventKind::ContainerExited {
                reason: ExitReason::OOMKilled,
                ..
            } => Some(Trouble::OomKill),
            e if e.is_failure() => Some(Trouble::Failure),
            _ => None,
        }
    }

    fn apply(self, r: &mut RecentTrouble, add: bool) {
        let step = |v: &mut u32| *v = if add { v.saturating_add(1) } else { v.saturating_sub(1) };
        match self {
            Trouble::Restart => step(&mut r.restarts),
            Trouble::OomKill => {
                step(&mut r.oom_kills);
                step(&mut r.failures);
            }
            Trouble::Failure => step(&mut r.failures),
        }
    }

    pub fn add_to_history(self, h: &mut WorkloadHistory) {
        match self {
            Trouble::Restart => h.restarts = h.restarts.saturating_add(1),
            Trouble::OomKill => {
                h.oom_kills = h.oom_kills.saturating_add(1);
                h.failures = h.failures.saturating_add(1);
            }
            Trouble::Failure => h.failures = h.failures.saturating_add(1),
        }
    }
}

#[derive(Debug, Default)]
pub struct TroubleWindow {
    noted: VecDeque<(Time, NodeId, Trouble)>,
}

impl TroubleWindow {
    pub fn note(&mut self, now: Time, node: NodeId, trouble: Trouble, nodes: &mut [NodeState]) {
        if let Some(n) = nodes.get_mut(node.index()) {
            trouble.apply(&mut n.recent, true);
            self.noted.push_back((now, node, trouble));
        }
    }

    /// Forgets everything noted on `node`: a replacement node has no history.
    pub fn forget_node(&mut self, node: NodeId, nodes: &mut [NodeState]) {
        self.noted.retain(|&(_, n, _)| n != node);
        if let Some(n) = nodes.get_mut(node.index()) {
            n.recent = RecentTrouble::default();
        }
    }

    /// Forgets trouble at least [`NodeState::RECENT_WINDOW`] old.
    pub fn expire(&mut self, now: Time, nodes: &mut [NodeState]) {
        while let Some(&(at, node, trouble)) = self.noted.front() {
            if at + NodeState::RECENT_WINDOW > now {
                break;
            }
            self.noted.pop_front();
            if let Some(n) = nodes.get_mut(node.index()) {
                trouble.apply(&mut n.recent, false);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::{NodePool, NodeSpec, Provisioning};
    use crate::pod::PodId;
    use crate::resources::Resources;

    fn node() -> NodeState {
        let spec = NodeSpec {
            name: "n".into(),
            pool: NodePool {
                name: "p".into(),
                machine_type: "m".into(),
                hourly_price: 1.0,
                provisioning: Provisioning::OnDemand,
            },
            capacity: Resources::new(1000, 1 << 30),
            allocatable: Resources::new(1000, 1 << 30),
            max_pods: 110,
            labels: Default::default(),
            taints: vec![],
        };
        NodeState::new(NodeId(0), spec, Time::ZERO)
    }

    #[test]
    fn counts_expire_after_the_window() {
        let mut nodes = vec![node()];
        let mut w = TroubleWindow::default();
        let oom = EventKind::ContainerExited {
            pod: PodId(0),
            node: NodeId(0),
            reason: ExitReason::OOMKilled,
            oom_cause: None,
        };
        let restart = EventKind::ContainerStarted {
            pod: PodId(0),
            node: NodeId(0),
            restart_count: 1,
            usage: Resources::ZERO,
        };
        let first = EventKind::ContainerStarted {
            pod: PodId(0),
            node: NodeId(0),
            restart_count: 0,
            usage: Resources::ZERO,
        };
        assert_eq!(Trouble::of(&first), None);
        w.note(Time(1000), NodeId(0), Trouble::of(&oom).unwrap(), &mut nodes);
        w.note(Time(5000), NodeId(0), Trouble::of(&restart).unwrap(), &mut nodes);
        let expect = |restarts, oom_kills, failures| RecentTrouble {
            restarts,
            oom_kills,
            failures,
        };
        assert_eq!(nodes[0].recent, expect(1, 1, 1));
        let window = NodeState::RECENT_WINDOW;
        w.expire(Time(1000 + window.as_millis() - 1), &mut nodes);
        assert_eq!(nodes[0].recent, expect(1, 1, 1));
        w.expire(Time(1000) + window, &mut nodes);
        assert_eq!(nodes[0].recent, expect(1, 0, 0));
        w.expire(Time(5000) + window, &mut nodes);
        assert_eq!(nodes[0].recent, expect(0, 0, 0));
    }
}
