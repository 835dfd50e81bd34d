//! Realised metrics: what a placement turned out to be worth, measured from
//! the records a backend writes after it. They are the targets the actors'
//! scores learn to predict, in the score order used everywhere:
//! `[fault tolerance, utilisation, cost]`, each in `[0, 1]`, higher better.
//! None of them is a function of what the network sees at the decision:
//! each is measured over the horizon `H` after the bind, from what happened.
//!
//! For a pod incarnation bound to node `m` at time `b`, with window
//! `W = [b, min(b + H, run end)]`:
//!
//! - **fault tolerance** is 0 if, within `W`, one of these happened to the
//!   pod before it ended: a container exited with `Error` or `OOMKilled`, the
//!   pod was evicted, the pod failed for good, or node `m` failed (went
//!   NotReady) or was lost. It is 1 when the pod survived the whole horizon
//!   or succeeded first. A pod deleted before the horizon, or still running
//!   when the run ended, is **censored**: its outcome is unknown, only that
//!   it survived until then. The tracker reports it as such
//!   ([`Settled::Deleted`], [`Settled::RunEnded`], [`Realised::observed`]);
//!   [`super::censoring`] then replaces its label by a survival estimate
//!   (never by a success). The node failure goes beyond the container
//!   exits: when a node stops reporting, its containers stop without any
//!   exit event and the pod is evicted only after its toleration time.
//! - **utilisation** is the mean, over `m`'s node samples inside `W`, of the
//!   mean over cpu and memory of the node's *measured usage* ÷ allocatable,
//!   each capped at 1: what the node actually does after the placement. Not
//!   known (weight 0 in training) when no sample fell inside `W`.
//! - **cost** is `1 − min(1, C ÷ (p_max × |W|))`, where `p_max` is the
//!   highest hourly price in the cluster and `C` the placement's billed cost
//!   in dollars: over the part of `W` the pod occupies `m`, the node's bill
//!   (its price while it hosts a pod, as the cost metric bills it) split
//!   among its pods by requests (the mean over cpu and memory of the pod's
//!   share of the node's requested total; a resource nobody on the node
//!   requests carries no bill), so a pod alone on a node pays the whole
//!   price of keeping it alive; plus, when `m` is lost inside `W` (a spot
//!   reclaim) while the pod is on it, the rest of the horizon at `m`'s price
//!   again, the work to redo elsewhere. The expected reclaim is what the
//!   scores learn as the mean of this over placements. Not known when `W` is
//!   empty. Bills are integrated exactly between the events that change
//!   the node's requests.
//!
//! The tracker rebuilds the nodes' requested resources and pod counts from
//! the records alone (`PodCreated` gives a pod's requests, `PodBound` adds
//! them to its node; `PodSucceeded`, `PodFailed`, `PodEvicted` and a
//! `PodDeleted` naming a node take them off), exactly as the simulator
//! accounts them, so it works on any backend's record stream.
//!
//! A placement is final (and reported by
//! [`RealisedTracker::take_completed`]) when its window closes: when a
//! later record shows `b + H` has passed, or at the run's `End`.

use schedlab_core::node::NodeId;
use schedlab_core::pod::{PodId, WorkloadId};
use schedlab_core::record::{Event, EventKind, ExitReason, NodeSample, Record};
use schedlab_core::resources::Resources;
use schedlab_core::time::{Span, Time};
use std::collections::{HashMap, VecDeque};

/// The default horizon H: 10 simulated minutes.
pub const DEFAULT_HORIZON: Span = Span(10 * 60 * 1000);

const MS_PER_HOUR: f64 = 3_600_000.0;

/// How a placement's fault tolerance was observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Settled {
    /// a failure within the horizon (fault tolerance 0)
    Failed,
    /// the pod succeeded before any failure (1)
    Succeeded,
    /// the pod was deleted before the horizon and any failure: censored
    Deleted,
    /// the horizon passed without a failure (1)
    HorizonPassed,
    /// the run ended before the horizon and any failure: censored
    RunEnded,
}

impl Settled {
    /// The outcome is unknown: the pod was only seen to survive until [`Realised::observed`].
    pub fn censored(self) -> bool {
        matches!(self, Settled::Deleted | Settled::RunEnded)
    }
}

/// The realised metrics of one placement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Realised {
    pub pod: PodId,
    pub workload: WorkloadId,
    pub node: NodeId,
    pub bound_at: Time,
    /// `[fault tolerance, utilisation, cost]`; a censored fault tolerance is
    /// 1 here until [`super::censoring::estimate_censored`] replaces it
    pub metrics: [f32; 3],
    /// which of `metrics` were measured (a censored fault tolerance counts
    /// as measured once estimated; utilisation needs a sample, cost a window)
    pub known: [bool; 3],
    pub settled: Settled,
    /// from the bind to the failure, the success, the censoring, or `H`
    pub observed: Span,
}

#[derive(Debug, Clone)]
struct NodeBook {
    allocatable: Resources,
    hourly_price: f64,
    requested: Resources,
    pods: u32,
    /// the bill is accrued up to here
    billed_to: Time,
    /// running sums over the node's samples: usage share and sample count
    usage_sum: f64,
    samples: u64,
    /// running sums of `bill ÷ requested cpu` and `bill ÷ requested memory`
    /// (dollars per milli-core and per byte): a pod's split of the bill over
    /// an interval is its requests times their growth
    bill_per_cpu: f64,
    bill_per_byte: f64,
}

impl NodeBook {
    /// Adds the bill from `billed_to` to `t` at the node's current requests
    /// (call before they change).
    fn accrue(&mut self, t: Time) {
        if t <= self.billed_to {
            return;
        }
        if self.pods > 0 {
            let bill = self.hourly_price * t.since(self.billed_to).as_millis() as f64 / MS_PER_HOUR;
            if self.requested.cpu_milli > 0 {
                self.bill_per_cpu += bill / self.requested.cpu_milli as f64;
            }
            if self.requested.memory_bytes > 0 {
                self.bill_per_byte += bill / self.requested.memory_bytes as f64;
            }
        }
        self.billed_to = t;
    }

    fn sample(&mut self, s: &NodeSample) {
        self.usage_sum += 0.5
            * (share(s.used.cpu_milli, self.allocatable.cpu_milli)
                + share(s.used.memory_bytes, self.allocatable.memory_bytes));
        self.samples += 1;
    }

    fn bill_marks(&self) -> (f64, f64) {
        (self.bill_per_cpu, self.bill_per_byte)
    }
}

#[derive(Debug, Clone, Copy)]
struct Open {
    node: NodeId,
    workload: WorkloadId,
    bound_at: Time,
    requests: Resources,
    /// the fault-tolerance outcome once known, and when
    outcome: Option<(Settled, Time)>,
    /// the node's usage sums at the bind
    usage_at_bind: (f64, u64),
    /// the node's bill marks at the bind, and when the pod left it (None: still on it)
    bill_at_bind: (f64, f64),
    bill_at_leave: Option<(f64, f64)>,
    /// dollars of reclaimed work to redo
    reclaim_usd: f64,
}

/// Follows a run's records and turns every bind into its [`Realised`]
/// metrics once they are known.
#[derive(Debug, Clone)]
pub struct RealisedTracker {
    horizon: Span,
    nodes: Vec<Option<NodeBook>>,
    max_price: f64,
    /// requests and workload of pods created and not yet deleted
    pods: HashMap<PodId, (Resources, WorkloadId)>,
    /// node of every pod currently bound
    bound_on: HashMap<PodId, NodeId>,
    /// placements whose window is still open
    open: HashMap<PodId, Open>,
    /// open placements' deadlines in bind order (hence deadline order); a
    /// deadline whose placement was closed already (a rebind) is skipped
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
            pods: HashMap::new(),
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

    /// Placements whose window is still open.
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
    /// order they closed.
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
                    hourly_price: if spec.pool.hourly_price.is_finite() {
                        spec.pool.hourly_price.max(0.0)
                    } else {
                        0.0
                    },
                    requested: Resources::ZERO,
                    pods: 0,
                    billed_to: Time::ZERO,
                    usage_sum: 0.0,
                    samples: 0,
                    bill_per_cpu: 0.0,
                    bill_per_byte: 0.0,
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
            Record::NodeSample(s) => {
                self.advance(s.t);
                if let Some(book) = self.nodes.get_mut(s.node.index()).and_then(Option::as_mut) {
                    book.sample(s);
                }
            }
            Record::ClusterSample(s) => self.advance(s.t),
            Record::End { t } => {
                self.advance(*t);
                self.end(*t);
            }
        }
    }

    /// Closes every placement whose horizon ended before `t`.
    fn advance(&mut self, t: Time) {
        self.now = self.now.max(t);
        while let Some(&(deadline, pod)) = self.deadlines.front() {
            if deadline >= t {
                break;
            }
            self.deadlines.pop_front();
            if self
                .open
                .get(&pod)
                .is_some_and(|o| o.bound_at + self.horizon == deadline)
            {
                self.close(pod, deadline);
            }
        }
    }

    fn end(&mut self, t: Time) {
        self.ended = true;
        while let Some((_, pod)) = self.deadlines.pop_front() {
            self.close(pod, t);
        }
    }

    fn event(&mut self, t: Time, kind: &EventKind) {
        match kind {
            EventKind::PodCreated {
                pod, requests, slot, ..
            } => {
                self.pods.insert(*pod, (*requests, slot.workload));
            }
            EventKind::PodBound { pod, node } => self.bind(t, *pod, *node),
            EventKind::ContainerExited { pod, reason, .. } => {
                if matches!(reason, ExitReason::Error | ExitReason::OOMKilled) {
                    self.outcome(*pod, Settled::Failed, t);
                }
            }
            EventKind::PodFailed { pod, .. } | EventKind::PodEvicted { pod, .. } => {
                self.outcome(*pod, Settled::Failed, t);
                self.release(t, *pod);
            }
            EventKind::PodSucceeded { pod, .. } => {
                self.outcome(*pod, Settled::Succeeded, t);
                self.release(t, *pod);
            }
            EventKind::PodDeleted { pod, .. } => {
                self.outcome(*pod, Settled::Deleted, t);
                self.release(t, *pod);
                self.pods.remove(pod);
            }
            EventKind::NodeFailed { node } => self.node_down(t, *node, false),
            EventKind::NodeLost { node } => self.node_down(t, *node, true),
            EventKind::PodUnschedulable { .. }
            | EventKind::PodDeclined { .. }
            | EventKind::PodNominated { .. }
            | EventKind::ContainerStarted { .. }
            | EventKind::NodeDegraded { .. }
            | EventKind::NodeRecovered { .. }
            | EventKind::NodeReplaced { .. } => {}
        }
    }

    /// A node failed or was lost: every pod still on it fails; a loss also
    /// charges the rest of each such placement's horizon as work to redo.
    fn node_down(&mut self, t: Time, node: NodeId, lost: bool) {
        let price = self.book(node).map_or(0.0, |b| b.hourly_price);
        let mut hit: Vec<PodId> = self
            .open
            .iter()
            .filter(|(p, o)| o.node == node && self.bound_on.get(p) == Some(&node))
            .map(|(p, _)| *p)
            .collect();
        // HashMap order is arbitrary; go in pod order so results are reproducible
        hit.sort_unstable();
        let horizon = self.horizon;
        for pod in hit {
            if let Some(open) = self.open.get_mut(&pod)
                && lost
            {
                let rest = (open.bound_at + horizon).since(t);
                open.reclaim_usd += price * rest.as_millis() as f64 / MS_PER_HOUR;
            }
            self.outcome(pod, Settled::Failed, t);
        }
    }

    fn book(&self, node: NodeId) -> Option<&NodeBook> {
        self.nodes.get(node.index()).and_then(Option::as_ref)
    }

    fn bind(&mut self, t: Time, pod: PodId, node: NodeId) {
        let (requests, workload) = self.pods.get(&pod).copied().unwrap_or((Resources::ZERO, WorkloadId(0)));
        let Some(book) = self.nodes.get_mut(node.index()).and_then(Option::as_mut) else {
            tracing::warn!(
                pod = pod.0,
                node = node.0,
                "bind to a node the records never introduced"
            );
            return;
        };
        book.accrue(t);
        book.requested += requests;
        book.pods = book.pods.saturating_add(1);
        let open = Open {
            node,
            workload,
            bound_at: t,
            requests,
            outcome: None,
            usage_at_bind: (book.usage_sum, book.samples),
            bill_at_bind: book.bill_marks(),
            bill_at_leave: None,
            reclaim_usd: 0.0,
        };
        self.bound_on.insert(pod, node);
        // a pod incarnation is bound at most once; a repeated bind closes the
        // earlier placement and starts a new one
        if self.open.contains_key(&pod) {
            self.close(pod, t);
        }
        self.open.insert(pod, open);
        self.deadlines.push_back((t + self.horizon, pod));
        if self.ended {
            self.close(pod, t);
        }
    }

    fn release(&mut self, t: Time, pod: PodId) {
        let Some(node) = self.bound_on.remove(&pod) else {
            return;
        };
        let requests = self.pods.get(&pod).map_or(Resources::ZERO, |p| p.0);
        let Some(book) = self.nodes.get_mut(node.index()).and_then(Option::as_mut) else {
            return;
        };
        book.accrue(t);
        book.requested -= requests;
        book.pods = book.pods.saturating_sub(1);
        let marks = book.bill_marks();
        if let Some(open) = self.open.get_mut(&pod)
            && open.node == node
            && open.bill_at_leave.is_none()
        {
            open.bill_at_leave = Some(marks);
        }
    }

    /// Notes the first fault-tolerance outcome of an open placement.
    fn outcome(&mut self, pod: PodId, settled: Settled, t: Time) {
        if let Some(open) = self.open.get_mut(&pod)
            && open.outcome.is_none()
        {
            open.outcome = Some((settled, t));
        }
    }

    /// Closes the window of `pod`'s open placement at `until` (its deadline or the run's end).
    fn close(&mut self, pod: PodId, until: Time) {
        let Some(open) = self.open.remove(&pod) else {
            return;
        };
        let Some(book) = self.nodes.get_mut(open.node.index()).and_then(Option::as_mut) else {
            return;
        };
        book.accrue(until);
        let book = &*book;
        let window = until.since(open.bound_at).as_millis().min(self.horizon.as_millis());
        let (settled, at) = match open.outcome {
            Some(outcome) => outcome,
            None if window >= self.horizon.as_millis() => (Settled::HorizonPassed, open.bound_at + self.horizon),
            None => (Settled::RunEnded, until),
        };
        let observed = at.since(open.bound_at).as_millis().min(self.horizon.as_millis());
        let ft = if settled == Settled::Failed { 0.0 } else { 1.0 };

        let samples = book.samples - open.usage_at_bind.1;
        let util = if samples > 0 {
            ((book.usage_sum - open.usage_at_bind.0) / samples as f64).clamp(0.0, 1.0)
        } else {
            0.0
        };

        let (cpu_end, mem_end) = open.bill_at_leave.unwrap_or(book.bill_marks());
        let shared = 0.5
            * (open.requests.cpu_milli as f64 * (cpu_end - open.bill_at_bind.0)
                + open.requests.memory_bytes as f64 * (mem_end - open.bill_at_bind.1));
        let usd = shared.max(0.0) + open.reclaim_usd;
        let full = self.max_price * window as f64 / MS_PER_HOUR;
        let cost = if full > 0.0 { 1.0 - (usd / full).min(1.0) } else { 1.0 };

        self.completed.push(Realised {
            pod,
            workload: open.workload,
            node: open.node,
            bound_at: open.bound_at,
            metrics: [ft, util as f32, cost as f32],
            known: [!settled.censored(), samples > 0, full > 0.0],
            settled,
            observed: Span(observed),
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
    use schedlab_core::node::{NodeCondition, NodePool, NodeSpec, Provisioning};
    use schedlab_core::pod::{PodSlot, QosClass};
    use schedlab_core::record::DeleteCause;
    use std::collections::BTreeMap;

    const GI: u64 = 1 << 30;
    const MIN: u64 = 60_000;
    const H: u64 = 10 * MIN;

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
                    workload: WorkloadId(pod as u32 % 2),
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

    fn deleted(t: u64, pod: u64, node: u32) -> Record {
        ev(
            t,
            EventKind::PodDeleted {
                pod: PodId(pod),
                node: Some(NodeId(node)),
                cause: DeleteCause::Churn,
            },
        )
    }

    /// A sample of `node` at `t` with these requests, usage and pods.
    fn sample(t: u64, node: u32, requested: Resources, used: Resources, pods: u32) -> Record {
        Record::NodeSample(NodeSample {
            t: Time(t),
            node: NodeId(node),
            requested,
            used,
            pods,
            condition: NodeCondition::Ready,
        })
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

    fn close(a: f32, b: f64) -> bool {
        (f64::from(a) - b).abs() < 1e-5
    }

    #[test]
    fn a_failure_inside_the_horizon_zeroes_fault_tolerance() {
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, 4 * GI),
            bound(1000, 0, 0),
            exited(1000 + 4 * MIN, 0, 0, ExitReason::OOMKilled),
        ]);
        // the window stays open for utilisation and cost until the horizon
        assert!(t.take_completed().is_empty());
        t.observe(&Record::End { t: Time(1000 + H + 1) });
        let r = outcome(&mut t, 0).expect("closed at the horizon");
        assert_eq!((r.settled, r.metrics[0], r.known[0]), (Settled::Failed, 0.0, true));
        assert_eq!((r.bound_at, r.observed), (Time(1000), Span(4 * MIN)));
        assert_eq!(r.workload, WorkloadId(0));
        assert_eq!(t.open_count(), 0);
    }

    #[test]
    fn a_failure_after_the_horizon_does_not_count() {
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, 4 * GI),
            bound(1000, 0, 0),
            exited(1001 + H, 0, 0, ExitReason::Error),
        ]);
        let r = outcome(&mut t, 0).expect("closed when the horizon passed");
        assert_eq!(
            (r.settled, r.metrics[0], r.observed),
            (Settled::HorizonPassed, 1.0, Span(H))
        );
    }

    #[test]
    fn the_horizon_needs_a_later_record() {
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, GI),
            bound(0, 0, 0),
            exited(MIN, 0, 0, ExitReason::Completed),
        ]);
        // a record exactly at the deadline does not close yet: a failure
        // then would still count
        t.observe(&ev(H, EventKind::NodeRecovered { node: NodeId(0) }));
        assert!(t.take_completed().is_empty());
        t.observe(&Record::End { t: Time(H + 1) });
        assert_eq!(outcome(&mut t, 0).expect("closed").settled, Settled::HorizonPassed);
    }

    #[test]
    fn a_deleted_pod_is_censored_and_a_succeeded_one_is_not() {
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, GI),
            created(0, 1, 1000, GI),
            bound(0, 0, 0),
            bound(0, 1, 0),
            deleted(MIN, 0, 0),
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
            Record::End { t: Time(H + 1) },
        ]);
        let done = t.take_completed();
        let by = |p: u64| *done.iter().find(|r| r.pod == PodId(p)).expect("closed");
        let (del, ok) = (by(0), by(1));
        assert_eq!(
            (del.settled, del.known[0], del.observed),
            (Settled::Deleted, false, Span(MIN))
        );
        assert!(del.settled.censored());
        assert_eq!(
            (ok.settled, ok.known[0], ok.metrics[0]),
            (Settled::Succeeded, true, 1.0)
        );
        assert!(!ok.settled.censored());
        assert_eq!(t.node_load(NodeId(0)), Some((Resources::ZERO, 0)));
    }

    #[test]
    fn the_run_end_censors_what_is_still_running() {
        let mut t = tracker(&[node(0, 1.0), created(0, 0, 1000, GI), bound(5 * MIN, 0, 0)]);
        assert!(t.take_completed().is_empty());
        t.observe(&Record::End { t: Time(6 * MIN) });
        let r = outcome(&mut t, 0).expect("closed by the end");
        assert_eq!(
            (r.settled, r.known[0], r.observed),
            (Settled::RunEnded, false, Span(MIN))
        );
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
            Record::End { t: Time(H + 1) },
        ]);
        let done = t.take_completed();
        assert_eq!(done.len(), 2);
        assert!(done.iter().all(|r| r.settled == Settled::Failed && r.metrics[0] == 0.0));
        // the failed node's pod stays bound (and counted) until it is evicted
        assert_eq!(t.node_load(NodeId(1)), Some((Resources::new(1000, GI), 1)));
        assert_eq!(t.node_load(NodeId(0)), Some((Resources::ZERO, 0)));
    }

    #[test]
    fn utilisation_is_the_nodes_measured_usage_over_the_window() {
        let req = Resources::new(1000, 4 * GI);
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, 4 * GI),
            // before the bind: not counted
            sample(0, 0, Resources::ZERO, Resources::new(4000, 16 * GI), 0),
            bound(MIN, 0, 0),
            // usage past requests counts, capped at the allocatable
            sample(2 * MIN, 0, req, Resources::new(2000, 4 * GI), 1),
            sample(3 * MIN, 0, req, Resources::new(4000, 32 * GI), 1),
            // after the horizon: not counted
            sample(MIN + H + 1, 0, req, Resources::ZERO, 1),
        ]);
        let r = outcome(&mut t, 0).expect("closed");
        // samples: (0.5 + 0.25) / 2 and (1 + 1) / 2
        assert!(close(r.metrics[1], (0.375 + 1.0) / 2.0), "{:?}", r.metrics);
        assert!(r.known[1]);
        // a window without a sample leaves utilisation unknown
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, GI),
            bound(0, 0, 0),
            Record::End { t: Time(MIN) },
        ]);
        assert!(!outcome(&mut t, 0).expect("closed").known[1]);
    }

    #[test]
    fn cost_splits_the_nodes_bill_by_requests_while_the_pod_is_on_it() {
        // node 0 costs 1 $/h, node 1 costs 2 $/h (the max)
        let mut t = tracker(&[
            node(0, 1.0),
            node(1, 2.0),
            created(0, 0, 1000, 4 * GI),
            created(0, 1, 3000, 12 * GI),
            created(0, 2, 1000, 4 * GI),
            bound(0, 0, 0),
            // pod 2 alone on the priciest node for its whole horizon
            bound(0, 2, 1),
            // pod 0 alone for 2 minutes carries the whole bill, then a
            // quarter of it for 4 minutes (pod 1 three quarters), then all
            // of it again up to its horizon
            bound(2 * MIN, 1, 0),
            deleted(6 * MIN, 1, 0),
            Record::End { t: Time(20 * MIN) },
        ]);
        let done = t.take_completed();
        let by = |p: u64| *done.iter().find(|r| r.pod == PodId(p)).expect("closed");
        let full = 2.0 * 10.0 / 60.0;
        let usd0 = (2.0 + 1.0 + 4.0) / 60.0;
        assert!(close(by(0).metrics[2], 1.0 - usd0 / full), "{:?}", by(0));
        let usd1 = 3.0 / 60.0;
        assert!(close(by(1).metrics[2], 1.0 - usd1 / full), "{:?}", by(1));
        assert!(close(by(2).metrics[2], 0.0), "{:?}", by(2));
        assert!(done.iter().all(|r| r.known[2]));
        // a bill is due only while the pod is on the node
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, GI),
            bound(5 * MIN, 0, 0),
            ev(
                6 * MIN,
                EventKind::PodSucceeded {
                    pod: PodId(0),
                    node: NodeId(0),
                },
            ),
            Record::End { t: Time(20 * MIN) },
        ]);
        let r = outcome(&mut t, 0).expect("closed");
        assert!(close(r.metrics[2], 0.9), "{:?}", r.metrics);
    }

    #[test]
    fn a_lost_node_charges_the_rest_of_the_horizon_as_work_to_redo() {
        let evicted = |pod: u64| {
            ev(
                4 * MIN,
                EventKind::PodEvicted {
                    pod: PodId(pod),
                    node: NodeId(0),
                },
            )
        };
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 1000, 4 * GI),
            created(0, 1, 1000, 4 * GI),
            bound(0, 0, 0),
            bound(0, 1, 0),
            ev(4 * MIN, EventKind::NodeLost { node: NodeId(0) }),
            evicted(0),
            evicted(1),
            Record::End { t: Time(H + 1) },
        ]);
        let r = outcome(&mut t, 0).expect("closed");
        assert_eq!(r.settled, Settled::Failed);
        // half of 4 minutes' bill, then 6 minutes at the node's price
        let usd = (2.0 + 6.0) / 60.0;
        assert!(close(r.metrics[2], 1.0 - usd / (10.0 / 60.0)), "{:?}", r.metrics);
    }

    #[test]
    fn released_requests_make_room_and_a_rebind_opens_a_new_window() {
        let mut t = tracker(&[
            node(0, 1.0),
            created(0, 0, 2000, 8 * GI),
            bound(0, 0, 0),
            ev(
                MIN,
                EventKind::PodEvicted {
                    pod: PodId(0),
                    node: NodeId(0),
                },
            ),
            bound(2 * MIN, 0, 0),
        ]);
        assert_eq!(t.node_load(NodeId(0)), Some((Resources::new(2000, 8 * GI), 1)));
        // the first placement closed at the rebind
        let first = t.take_completed();
        assert_eq!(first.len(), 1);
        assert_eq!((first[0].bound_at, first[0].settled), (Time(0), Settled::Failed));
        // the first placement's deadline does not close the second early
        t.observe(&Record::End { t: Time(H + MIN) });
        let second = t.take_completed();
        assert_eq!(second.len(), 1);
        assert_eq!(
            (second[0].bound_at, second[0].settled),
            (Time(2 * MIN), Settled::RunEnded)
        );
    }
}
