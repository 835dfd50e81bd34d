//! Realised metrics: what a placement turned out to be worth, measured from
//! the records a backend writes after it. They are the targets the actors'
//! scores learn to predict, in the score order used everywhere:
//! `[fault tolerance, utilisation, cost]`, each in `[0, 1]`, higher better.
//!
//! For a pod incarnation bound to node `m` at time `b`:
//!
//! - **fault tolerance** is 0 if, at a time `t` with `b ≤ t ≤ b + H`, one of
//!   these happened to the pod before it ended: a container exited with
//!   `Error` or `OOMKilled`, the pod was evicted, the pod failed for good, or
//!   node `m` failed (went NotReady). Otherwise it is 1: the horizon passed,
//!   or the pod succeeded or was deleted, or the run ended, first. The node
//!   failure goes beyond the exit/eviction/failure list of the design: when a
//!   node stops reporting, its containers stop without any exit event and the
//!   pod is evicted only after its toleration time (5 minutes by default), so
//!   a node that comes back quickly would otherwise leave a placement on it
//!   looking fault tolerant although the pod stopped running.
//! - **utilisation** is the mean over cpu and memory of `m`'s requested ÷
//!   allocatable right after the bind (the pod's requests included), each
//!   capped at 1: how well the placement packs the node it lands on.
//! - **cost** is `1 − (price(m) ÷ max price) × (0.5 + 0.5 × empty)`, where the
//!   max price is over every node of the cluster and `empty` is 1 when `m`
//!   hosted no pod before the bind: a cheap node is better, and waking an
//!   idle node (which starts billing it, as a cluster autoscaler would)
//!   counts its full price while joining a node already billed counts half.
//!
//! The tracker rebuilds the nodes' requested resources and pod counts from
//! the records alone (`PodCreated` gives a pod's requests, `PodBound` adds
//! them to its node; `PodSucceeded`, `PodFailed`, `PodEvicted` and a
//! `PodDeleted` naming a node take them off), exactly as the simulator
//! accounts them, so it works on any backend's record stream.
//!
//! A placement's outcome is final (and reported by [`RealisedTracker::take_completed`])
//! as soon as its fault tolerance is known: at the failure, at the pod's end,
//! when a later record shows the horizon has passed, or at the run's `End`.

use clusters::node::NodeId;
use clusters::pod::PodId;
use clusters::record::{Event, EventKind, ExitReason, Record};
use clusters::resources::Resources;
use clusters::time::{Span, Time};
use std::collections::{HashMap, VecDeque};

/// The default horizon H: 10 simulated minutes.
pub const DEFAULT_HORIZON: Span = Span(10 * 60 * 1000);

/// Why a placement's outcome became final.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Settled {
    /// a failure within the horizon (fault tolerance 0)
    Failed,
    /// the pod succeeded before any failure
    Succeeded,
    /// the pod was deleted before any failure
    Deleted,
    /// the horizon passed without a failure
    HorizonPassed,
    /// the run ended first
    RunEnded,
}

/// The realised metrics of one placement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Realised {
    pub pod: PodId,
    pub node: NodeId,
    pub bound_at: Time,
    /// `[fault tolerance, utilisation, cost]`
    pub metrics: [f32; 3],
    pub settled: Settled,
}

#[derive(Debug, Clone)]
struct NodeBook {
    allocatable: Resources,
    hourly_price: f64,
    requested: Resources,
    pods: u32,
}

#[derive(Debug, Clone, Copy)]
struct Open {
    node: NodeId,
    bound_at: Time,
    util: f32,
    cost: f32,
}

/// Follows a run's records and turns every bind into its [`Realised`]
/// metrics once they are known.
#[derive(Debug, Clone)]
pub struct RealisedTracker {
    horizon: Span,
    nodes: Vec<Option<NodeBook>>,
    max_price: f64,
    /// requests of pods created and not yet ended
    requests: HashMap<PodId, Resources>,
    /// node of every pod currently bound
    bound_on: HashMap<PodId, NodeId>,
    /// placements whose fault tolerance is not known yet
    open: HashMap<PodId, Open>,
    /// open placements in bind order (hence deadline order); settled ones are
    /// skipped when they reach the front
    deadlines: VecDeque<(Time, PodId)>,
    completed: Vec<Realised>,
    now: Time,
    ended: bool,
}

impl Default for RealisedTracker {
    fn default() -> Self {
        RealisedTracker::new(DEFAULT_HORIZON)
    }
}

impl RealisedTracker {
    pub fn new(horizon: Span) -> RealisedTracker {
        RealisedTracker {
            horizon,
            nodes: Vec::new(),
            max_price: 0.0,
            requests: HashMap::new(),
            bound_on: HashMap::new(),
            open: HashMap::new(),
            deadlines: VecDeque::new(),
            completed: Vec::new(),
            now: Time::ZERO,
            ended: false,
        }
    }

    pub fn horizon(&self) -> Span {
        self.horizon
    }

    /// Placements whose outcome is not final yet.
    pub fn open_count(&self) -> usize {
        self.open.len()
    }

    /// True once the run's `End` record was seen.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Requested resources and pod count of `node` as the records tell them.
    pub fn node_load(&self, node: NodeId) -> Option<(Resources, u32)> {
        self.nodes
            .get(node.index())
            .and_then(Option::as_ref)
            .map(|b| (b.requested, b.pods))
    }

    /// Takes the outcomes that became final since the last call, in the
    /// order they settled.
    pub fn take_completed(&mut self) -> Vec<Realised> {
        std::mem::take(&mut self.completed)
    }

    /// Feeds one record (records must come in the order the backend wrote them).
    pub fn observe(&mut self, record: &Record) {
        match record {
            Record::Node { node, spec } => {
                let i = node.index();
                if self.nodes.len() <= i {
                    self.nodes.resize(i + 1, None);
                }
                self.nodes[i] = Some(NodeBook {
                    allocatable: spec.allocatable,
                    hourly_price: spec.pool.hourly_price,
                    requested: Resources::ZERO,
                    pods: 0,
                });
                if spec.pool.hourly_price.is_finite() {
                    self.max_price = self.max_price.max(spec.pool.hourly_price);
                }
            }
            Record::Event(Event { t, kind }) => {
                self.advance(*t);
                self.event(*t, kind);
            }
            Record::Workload { .. } => {}
            Record::NodeSample(s) => self.advance(s.t),
            Record::ClusterSample(s) => self.advance(s.t),
            Record::End { t } => {
                self.advance(*t);
                self.end();
            }
        }
    }

    /// Settles every placement whose horizon ended before `t`.
    fn advance(&mut self, t: Time) {
        self.now = self.now.max(t);
        while let Some(&(deadline, pod)) = self.deadlines.front() {
            if deadline >= t {
                break;
            }
            self.deadlines.pop_front();
            self.settle(pod, Settled::HorizonPassed);
        }
    }

    fn end(&mut self) {
        self.ended = true;
        while let Some((_, pod)) = self.deadlines.pop_front() {
            self.settle(pod, Settled::RunEnded);
        }
    }

    fn event(&mut self, t: Time, kind: &EventKind) {
        match kind {
            EventKind::PodCreated { pod, requests, .. } => {
                self.requests.insert(*pod, *requests);
            }
            EventKind::PodBound { pod, node } => self.bind(t, *pod, *node),
            EventKind::ContainerExited { pod, reason, .. } => {
                if matches!(reason, ExitReason::Error | ExitReason::OOMKilled) {
                    self.settle(*pod, Settled::Failed);
                }
            }
            EventKind::PodFailed { pod, .. } | EventKind::PodEvicted { pod, .. } => {
                self.settle(*pod, Settled::Failed);
                self.release(*pod);
            }
            EventKind::PodSucceeded { pod, .. } => {
                self.settle(*pod, Settled::Succeeded);
                self.release(*pod);
            }
            EventKind::PodDeleted { pod, .. } => {
                self.settle(*pod, Settled::Deleted);
                self.release(*pod);
                self.requests.remove(pod);
            }
            EventKind::NodeFailed { node } | EventKind::NodeLost { node } => {
                let mut hit: Vec<PodId> = self
                    .open
                    .iter()
                    .filter(|(_, o)| o.node == *node)
                    .map(|(p, _)| *p)
                    .collect();
                // HashMap order is arbitrary; settle in pod order so the
                // completed list is reproducible
                hit.sort_unstable();
                for pod in hit {
                    self.settle(pod, Settled::Failed);
                }
            }
            EventKind::PodUnschedulable { .. }
            | EventKind::PodDeclined { .. }
            | EventKind::PodNominated { .. }
            | EventKind::ContainerStarted { .. }
            | EventKind::NodeDegraded { .. }
            | EventKind::NodeRecovered { .. }
            | EventKind::NodeReplaced { .. } => {}
        }
    }

    fn bind(&mut self, t: Time, pod: PodId, node: NodeId) {
        let requests = self.requests.get(&pod).copied().unwrap_or(Resources::ZERO);
        let max_price = self.max_price;
        let Some(book) = self.nodes.get_mut(node.index()).and_then(Option::as_mut) else {
            tracing::warn!(
                pod = pod.0,
                node = node.0,
                "bind to a node the records never introduced"
            );
            return;
        };
        let was_empty = book.pods == 0;
        book.requested += requests;
        book.pods = book.pods.saturating_add(1);
        let util = 0.5
            * (share(book.requested.cpu_milli, book.allocatable.cpu_milli)
                + share(book.requested.memory_bytes, book.allocatable.memory_bytes));
        let price_share = if max_price > 0.0 {
            (book.hourly_price / max_price).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let cost = 1.0 - price_share * if was_empty { 1.0 } else { 0.5 };
        self.bound_on.insert(pod, node);
        // a pod incarnation is bound at most once; a repeated bind restarts its clock
        self.open.insert(
            pod,
            Open {
                node,
                bound_at: t,
                util: util as f32,
                cost: cost as f32,
            },
        );
        self.deadlines.push_back((t + self.horizon, pod));
        if self.ended {
            self.settle(pod, Settled::RunEnded);
        }
    }

    fn release(&mut self, pod: PodId) {
        let Some(node) = self.bound_on.remove(&pod) else {
            return;
        };
        let requests = self.requests.get(&pod).copied().unwrap_or(Resources::ZERO);
        if let Some(book) = self.nodes.get_mut(node.index()).and_then(Option::as_mut) {
            book.requested -= requests;
            book.pods = book.pods.saturating_sub(1);
        }
    }

    fn settle(&mut self, pod: PodId, settled: Settled) {
        let Some(open) = self.open.remove(&pod) else {
            return;
        };
        let ft = if settled == Settled::Failed { 0.0 } else { 1.0 };
        self.completed.push(Realised {
            pod,
            node: open.node,
            bound_at: open.bound_at,
            metrics: [ft, open.util, open.cost],
            settled,
        });
    }
}

/// `used ÷ total`, capped at 1; a zero total counts as full.
fn share(used: u64, total: u64) -> f64 {
    if total == 0 {
        return 1.0;
    }
    (used as f64 / total as f64).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clusters::node::{NodePool, NodeSpec, Provisioning};
    use clusters::pod::{PodSlot, QosClass, WorkloadId};
    use clusters::record::DeleteCause;
    use std::collections::BTreeMap;

    const GI: u64 = 1 << 30;
    const MIN: u64 = 60_000;

    fn node(i: u32, price: f64) -> Record {
        Record::Node {
            node: NodeId(i),
            spec: NodeSpec {
                name: format!("n{i}"),
                pool: NodePool {
                    name: "p".into(),
                    machine_type: "m".into(),
                    hourly_price: price,
                    provisioning: Provisioning::OnDemand,
                },
                capacity: Resources::new(4000, 16 * GI),
                allocatable: Resources::new(4000, 16 * GI),
                max_pods: 110,
                labels: BTreeMap::new(),
                taints: Vec::new(),
            },
        }
    }

    fn ev(t: u64, kind: EventKind) -> Record {
        Record::Event(Event { t: Time(t), kind })
    }

    fn created(t: u64, pod: u64, cpu: u64, mem: u64) -> Record {
        ev(
            t,
            EventKind::PodCreated {
                pod: PodId(pod),
                slot: PodSlot {
                    workload: WorkloadId(0),
                    ordinal: pod as u32,
                },
                requests: Resources::new(cpu, mem),
                memory_limit: None,
                priority: 0,
                qos: QosClass::Burstable,
                unstable: false,
            },
        )
    }

    fn bound(t: u64, pod: u64, node: u32) -> Record {
        ev(
            t,
            EventKind::PodBound {
                pod: PodId(pod),
                node: NodeId(node),
            },
        )
    }

    fn exited(t: u64, pod: u64, node: u32, reason: ExitReason) -> Record {
        ev(
            t,
            EventKind::ContainerExited {
                pod: PodId(pod),
                node: NodeId(node),
                reason,
                oom_cause: None,
            },
        )
    }

    fn tracker(records: &[Record]) -> RealisedTracker {
        let mut t = RealisedTracker::default();
        for r in records {
            t.observe(r);
        }
        t
    }

    fn outcome(t: &mut RealisedTracker, pod: u64) -> Option<Realised> {
        t.take_completed().into_iter().find(|r| r.pod == PodId(pod))
    }

    #[test]
    fn a_failure_inside_the_horizon_zeroes_fault_tolerance_at_once() {
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, 4 * GI),
            bound(1000, 0, 0),
            exited(1000 + 10 * MIN, 0, 0, ExitReason::OOMKilled),
        ]);
        let r = outcome(&mut t, 0).expect("settled by the failure");
        assert_eq!(r.settled, Settled::Failed);
        assert_eq!(r.metrics[0], 0.0);
        assert_eq!(r.bound_at, Time(1000));
        assert_eq!(t.open_count(), 0);
    }

    #[test]
    fn a_failure_after_the_horizon_does_not_count() {
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, 4 * GI),
            bound(1000, 0, 0),
            exited(1001 + 10 * MIN, 0, 0, ExitReason::Error),
        ]);
        let r = outcome(&mut t, 0).expect("settled when the horizon passed");
        assert_eq!(r.settled, Settled::HorizonPassed);
        assert_eq!(r.metrics[0], 1.0);
    }

    #[test]
    fn a_completed_exit_is_no_failure_and_the_horizon_needs_a_later_record() {
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, GI),
            bound(0, 0, 0),
            exited(MIN, 0, 0, ExitReason::Completed),
        ]);
        assert!(t.take_completed().is_empty());
        // a sample exactly at the deadline does not settle yet: a failure
        // then would still count
        t.observe(&ev(10 * MIN, EventKind::NodeRecovered { node: NodeId(0) }));
        assert!(t.take_completed().is_empty());
        t.observe(&Record::End { t: Time(10 * MIN + 1) });
        let r = outcome(&mut t, 0).expect("settled");
        assert_eq!(r.settled, Settled::HorizonPassed);
    }

    #[test]
    fn deletion_and_success_settle_fault_tolerant() {
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, GI),
            created(0, 1, 1000, GI),
            bound(0, 0, 0),
            bound(0, 1, 0),
            ev(
                MIN,
                EventKind::PodDeleted {
                    pod: PodId(0),
                    node: Some(NodeId(0)),
                    cause: DeleteCause::Churn,
                },
            ),
            ev(
                2 * MIN,
                EventKind::PodSucceeded {
                    pod: PodId(1),
                    node: NodeId(0),
                },
            ),
            // later failures of ended pods change nothing
            ev(
                3 * MIN,
                EventKind::PodFailed {
                    pod: PodId(0),
                    node: NodeId(0),
                },
            ),
        ]);
        let done = t.take_completed();
        assert_eq!(done.len(), 2);
        assert_eq!(
            (done[0].pod, done[0].settled, done[0].metrics[0]),
            (PodId(0), Settled::Deleted, 1.0)
        );
        assert_eq!(
            (done[1].pod, done[1].settled, done[1].metrics[0]),
            (PodId(1), Settled::Succeeded, 1.0)
        );
        assert_eq!(t.node_load(NodeId(0)), Some((Resources::ZERO, 0)));
    }

    #[test]
    fn the_run_end_settles_what_is_still_open() {
        let mut t = tracker(&[node(0, 1.0), created(0, 0, 1000, GI), bound(5 * MIN, 0, 0)]);
        assert!(t.take_completed().is_empty());
        t.observe(&Record::End { t: Time(6 * MIN) });
        let r = outcome(&mut t, 0).expect("settled by the end");
        assert_eq!((r.settled, r.metrics[0]), (Settled::RunEnded, 1.0));
        assert!(t.ended());
    }

    #[test]
    fn eviction_and_node_failure_are_failures() {
        let mut t = tracker(&[
            node(0, 1.0),
            node(1, 1.0),
            created(0, 0, 1000, GI),
            created(0, 1, 1000, GI),
            bound(0, 0, 0),
            bound(0, 1, 1),
            ev(MIN, EventKind::NodeFailed { node: NodeId(1) }),
            ev(
                2 * MIN,
                EventKind::PodEvicted {
                    pod: PodId(0),
                    node: NodeId(0),
                },
            ),
        ]);
        let done = t.take_completed();
        assert_eq!(done.len(), 2);
        assert!(done.iter().all(|r| r.settled == Settled::Failed && r.metrics[0] == 0.0));
        // the failed node's pod stays bound (and counted) until it is evicted
        assert_eq!(t.node_load(NodeId(1)), Some((Resources::new(1000, GI), 1)));
        assert_eq!(t.node_load(NodeId(0)), Some((Resources::ZERO, 0)));
    }

    #[test]
    fn utilisation_and_cost_follow_the_node_right_after_the_bind() {
        let mut t = tracker(&[
            node(0, 1.0),
            node(1, 0.25),
            created(0, 0, 1000, 4 * GI),
            created(0, 1, 3000, 16 * GI),
            created(0, 2, 1000, 2 * GI),
            bound(0, 0, 0),
            bound(0, 1, 0),
            bound(0, 2, 1),
            Record::End { t: Time(1) },
        ]);
        let done = t.take_completed();
        let by_pod = |p: u64| {
            done.iter()
                .find(|r| r.pod == PodId(p))
                .map(|r| r.metrics)
                .expect("settled")
        };
        // pod 0 on the empty, priciest node: 1/4 cpu, 1/4 memory; full price
        assert_eq!(by_pod(0), [1.0, 0.25, 0.0]);
        // pod 1 joins it: cpu 4/4, memory 20/16 capped at 1; half price
        assert_eq!(by_pod(1), [1.0, 1.0, 0.5]);
        // pod 2 on the empty cheap node: cpu 1/4, memory 2/16; a quarter of the max price
        assert_eq!(by_pod(2), [1.0, 0.5 * (0.25 + 0.125), 0.75]);
    }

    #[test]
    fn released_requests_make_room_for_later_binds() {
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 2000, 8 * GI),
            bound(0, 0, 0),
            ev(
                MIN,
                EventKind::PodDeleted {
                    pod: PodId(0),
                    node: Some(NodeId(0)),
                    cause: DeleteCause::Scenario,
                },
            ),
            created(MIN, 1, 2000, 8 * GI),
            bound(MIN, 1, 0),
            Record::End { t: Time(2 * MIN) },
        ]);
        let r = outcome(&mut t, 1).expect("settled");
        // the node was empty again: util 1/2, full price
        assert_eq!(r.metrics, [1.0, 0.5, 0.0]);
    }
}
