//! What a backend makes of a policy's [`Placement`], one rule for the
//! simulator and the bind loop: a bind is checked against the cluster
//! first ([`ClusterView::check_bind`]) and one the node cannot take counts
//! as unschedulable, so a policy's mistake never reaches the cluster.

use crate::node::NodeId;
use crate::pod::{PodId, PodSpec};
use crate::record::EventKind;
use crate::view::{ClusterView, Placement};
use std::borrow::Cow;

/// Why a pod was not placed: what its `pod_unschedulable` or
/// `pod_declined` event (and, on a real cluster, its PodScheduled
/// condition) says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Answer {
    Unschedulable,
    Declined,
}

impl Answer {
    /// The event recording this answer for `pod`.
    pub fn event(self, pod: PodId, reason: Cow<'static, str>) -> EventKind {
        match self {
            Answer::Unschedulable => EventKind::PodUnschedulable { pod, reason },
            Answer::Declined => EventKind::PodDeclined { pod, reason },
        }
    }
}

/// A placement, checked: what the backend carries out.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// bind the pod to this node, which can take it
    Bind(NodeId),
    /// the pod stays pending and retries with back-off; `rejected_bind`
    /// says the policy chose a node that cannot take it
    NotPlaced {
        answer: Answer,
        reason: Cow<'static, str>,
        rejected_bind: bool,
    },
    /// delete `victims` on `node`, nominate the pod there; it stays pending
    /// with `reason` and retries with back-off
    Preempt {
        node: NodeId,
        victims: Vec<PodId>,
        reason: Cow<'static, str>,
    },
}

impl Verdict {
    /// A bind that cannot be carried out (`why`): unschedulable.
    pub fn rejected_bind(why: &str) -> Verdict {
        Verdict::NotPlaced {
            answer: Answer::Unschedulable,
            reason: Cow::Owned(format!("bind rejected: {why}")),
            rejected_bind: true,
        }
    }
}

impl Placement {
    /// The placement of a pod of `spec`, checked against `view`.
    pub fn verdict(self, view: &ClusterView<'_>, spec: &PodSpec) -> Verdict {
        match self {
            Placement::Bind(node) => match view.check_bind(node, spec) {
                Ok(()) => Verdict::Bind(node),
                Err(why) => Verdict::rejected_bind(&why),
            },
            Placement::Unschedulable { reason } => Verdict::NotPlaced {
                answer: Answer::Unschedulable,
                reason,
                rejected_bind: false,
            },
            Placement::Decline { reason } => Verdict::NotPlaced {
                answer: Answer::Declined,
                reason,
                rejected_bind: false,
            },
            Placement::Preempt { node, victims, reason } => Verdict::Preempt { node, victims, reason },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::node::NodeState;
    use crate::testing::{node, pod};
    use crate::time::Time;

    #[test]
    fn a_bind_the_node_cannot_take_is_unschedulable() {
        let nodes = [NodeState::new(NodeId(0), node("n", 1000, 1 << 30, 1.0), Time::ZERO)];
        let view = ClusterView::of_nodes(Time::ZERO, &nodes, 1, 0);
        assert_eq!(
            Placement::Bind(NodeId(0)).verdict(&view, &pod(500, 1 << 20)),
            Verdict::Bind(NodeId(0))
        );
        let Verdict::NotPlaced {
            answer,
            reason,
            rejected_bind,
        } = Placement::Bind(NodeId(0)).verdict(&view, &pod(2000, 1 << 20))
        else {
            panic!("a pod larger than its node was bound");
        };
        assert_eq!((answer, rejected_bind), (Answer::Unschedulable, true));
        assert!(reason.starts_with("bind rejected: "), "{reason}");
        assert!(matches!(
            Placement::Bind(NodeId(9)).verdict(&view, &pod(1, 1)),
            Verdict::NotPlaced {
                rejected_bind: true,
                ..
            }
        ));
    }

    #[test]
    fn declines_and_unschedulables_keep_their_reason() {
        let view = ClusterView::of_nodes(Time::ZERO, &[], 1, 0);
        let decline = Placement::Decline {
            reason: "restraint".into(),
        };
        assert_eq!(
            decline.verdict(&view, &pod(1, 1)),
            Verdict::NotPlaced {
                answer: Answer::Declined,
                reason: "restraint".into(),
                rejected_bind: false
            }
        );
        assert!(matches!(
            Answer::Declined.event(PodId(3), "r".into()),
            EventKind::PodDeclined { pod: PodId(3), .. }
        ));
    }
}
