//! The in-process discrete-event backend: plays a [`Timeline`] against one
//! scheduler (a [`crate::policy::Scheduler`]) in virtual time, deterministically for a
//! seed, and writes [`Record`]s.
//!
//! One instant at a time: the timeline's actions due, then the queued timers
//! and retries due (in insertion order), then the active scheduling queue,
//! over and over until nothing is left at that instant; then the sample, if
//! one is due. Samples therefore show the state at the end of their instant.
//! Pods' fates come from [`crate::behaviour`]; the simulator only carries out
//! the lifecycles' effects on nodes, records and owners.

mod actions;
mod active;
mod backend;
mod decisions;
mod error;
mod events;
mod pods;
mod preempt;
mod sample;
mod schedule;
mod summary;
mod validate;

pub use backend::{SimBackend, SimBackendError};
pub use error::SimError;
pub use summary::SimSummary;

use crate::behaviour::{Effects, ModelConfig};
use crate::node::{NodeId, NodeState};
use crate::pod::{PodId, PodSlot};
use crate::policy::Scheduler;
use crate::record::{Record, RecordSink};
use crate::time::Time;
use crate::timeline::Timeline;
use crate::trouble::TroubleWindow;
use crate::view::{BoundPod, Nomination, WorkloadHistory};
use active::ActiveQueue;
use events::{EventQueue, Queued};
use pods::{PodEntry, SlotState};
use std::collections::BTreeMap;

/// A simulated cluster playing one timeline.
#[derive(Debug)]
pub struct Sim {
    timeline: Timeline,
    seed: u64,
    model: ModelConfig,
    now: Time,
    begun: bool,
    next_action: usize,
    next_sample: Option<Time>,
    queue: EventQueue,
    nodes: Vec<NodeState>,
    /// bound pods per node; each bound pod knows its position here
    node_pods: Vec<Vec<BoundPod>>,
    /// bound pods by priority, for the view's lowest bound priority
    bound_priorities: BTreeMap<i32, u32>,
    /// pending pods nominated to a node by a preemption
    nominated: Vec<Nomination>,
    node_pressure: Vec<bool>,
    /// nodes lost and not yet replaced
    lost: Vec<bool>,
    /// nodes whose memory use changed since they were last checked for OOM and pressure
    dirty: Vec<NodeId>,
    is_dirty: Vec<bool>,
    trouble: TroubleWindow,
    /// every pod of the run, indexed by its id
    pods: Vec<PodEntry>,
    slots: BTreeMap<PodSlot, SlotState>,
    histories: Vec<WorkloadHistory>,
    active: ActiveQueue,
    pending_count: u32,
    bound_count: u32,
    /// scratch space reused by every lifecycle step
    effects: Effects,
    scratch_pods: Vec<PodId>,
    decisions: decisions::Decisions,
    summary: SimSummary,
}

impl Sim {
    /// Checks `timeline` and `model` and builds the cluster at time zero.
    pub fn new(timeline: Timeline, seed: u64, model: ModelConfig) -> crate::Result<Sim> {
        Ok(Sim::checked(timeline, seed, model)?)
    }

    /// [`Sim::new`] with the simulator's own error, for the backend to wrap.
    pub(crate) fn checked(mut timeline: Timeline, seed: u64, model: ModelConfig) -> Result<Sim, SimError> {
        validate::validate(&mut timeline, &model)?;
        let nodes: Vec<NodeState> = timeline
            .nodes
            .iter()
            .enumerate()
            .map(|(i, spec)| NodeState::new(NodeId(i as u32), spec.clone(), Time::ZERO))
            .collect();
        let n = nodes.len();
        let histories = vec![WorkloadHistory::default(); timeline.workloads.len()];
        Ok(Sim {
            seed,
            model,
            now: Time::ZERO,
            begun: false,
            next_action: 0,
            next_sample: Some(Time::ZERO),
            queue: EventQueue::default(),
            nodes,
            node_pods: vec![Vec::new(); n],
            bound_priorities: BTreeMap::new(),
            nominated: Vec::new(),
            node_pressure: vec![false; n],
            lost: vec![false; n],
            dirty: Vec::new(),
            is_dirty: vec![false; n],
            trouble: TroubleWindow::default(),
            pods: Vec::new(),
            slots: BTreeMap::new(),
            histories,
            active: ActiveQueue::default(),
            pending_count: 0,
            bound_count: 0,
            effects: Effects::default(),
            scratch_pods: Vec::new(),
            decisions: decisions::Decisions::new(false)?,
            summary: SimSummary::default(),
            timeline,
        })
    }

    /// Plays every event up to and including `until` (at most the timeline's
    /// end), calling `policy` for pending pods and writing records to `sink`.
    pub fn run_until(&mut self, until: Time, policy: &mut dyn Scheduler, sink: &mut dyn RecordSink) {
        self.begin(sink);
        let until = until.min(self.end());
        while let Some(t) = self.next_instant() {
            if t > until {
                break;
            }
            self.now = self.now.max(t);
            self.play_instant(policy, sink);
        }
        self.now = self.now.max(until);
        self.summary.end = self.now;
        self.summary.peak_queue = self.queue.peak() as u64;
    }

    /// Plays to the timeline's end and writes the final [`Record::End`].
    pub fn finish(mut self, policy: &mut dyn Scheduler, sink: &mut dyn RecordSink) -> SimSummary {
        let end = self.end();
        self.run_until(end, policy, sink);
        self.write(sink, Record::End { t: end });
        tracing::debug!(summary = ?self.summary, "simulation finished");
        self.summary
    }

    /// Charges every decision's wall-clock time to virtual time (see
    /// `sim::decisions`): a slow policy then builds a queue, as it would in
    /// a cluster. Records then depend on the machine, not only on the seed.
    pub fn charge_decision_time(&mut self, charge: bool) {
        self.decisions.set_charge(charge);
    }

    /// The wall-clock time of every decision so far, in nanoseconds.
    pub fn decision_times(&self) -> &hdrhistogram::Histogram<u64> {
        self.decisions.histogram()
    }

    /// Whether decision time is charged to virtual time.
    pub fn decision_time_charged(&self) -> bool {
        self.decisions.charged()
    }

    pub fn now(&self) -> Time {
        self.now
    }

    pub fn end(&self) -> Time {
        self.timeline.end
    }

    /// What the run did so far.
    pub fn summary(&self) -> &SimSummary {
        &self.summary
    }

    /// The nodes as schedulers see them now.
    pub fn nodes(&self) -> &[NodeState] {
        &self.nodes
    }

    /// Pods created and not yet bound, and pods bound, now.
    pub fn pod_counts(&self) -> (u32, u32) {
        (self.pending_count, self.bound_count)
    }

    fn begin(&mut self, sink: &mut dyn RecordSink) {
        if self.begun {
            return;
        }
        self.begun = true;
        for i in 0..self.nodes.len() {
            let record = Record::Node {
                node: self.nodes[i].id,
                spec: self.nodes[i].spec.clone(),
            };
            self.write(sink, record);
        }
        let workloads: Vec<Record> = self.timeline.workload_records().collect();
        for record in workloads {
            self.write(sink, record);
        }
    }

    fn next_instant(&self) -> Option<Time> {
        let action = self.timeline.actions.get(self.next_action).map(|a| a.at);
        [action, self.queue.next_time(), self.next_sample]
            .into_iter()
            .flatten()
            .min()
    }

    fn play_instant(&mut self, policy: &mut dyn Scheduler, sink: &mut dyn RecordSink) {
        let now = self.now;
        self.trouble.expire(now, &mut self.nodes);
        loop {
            let mut progressed = false;
            while let Some(ta) = self.timeline.actions.get(self.next_action)
                && ta.at <= now
            {
                let action = ta.action.clone();
                self.next_action += 1;
                self.summary.actions += 1;
                self.apply_action(action, sink);
                self.settle(sink);
                progressed = true;
            }
            while let Some(item) = self.queue.pop_due(now) {
                self.summary.queue_events += 1;
                self.apply_queued(item, sink);
                self.settle(sink);
                progressed = true;
            }
            if !self.active.is_empty() && self.schedule(policy, sink) {
                progressed = true;
            }
            if !progressed {
                break;
            }
        }
        if self.next_sample == Some(now) {
            self.sample(sink);
            let next = now + self.timeline.sample_interval;
            self.next_sample = (next > now && next <= self.end()).then_some(next);
        }
    }

    fn apply_queued(&mut self, item: Queued, sink: &mut dyn RecordSink) {
        match item {
            Queued::Timer { pod, kind, generation } => {
                self.step_pod(pod, crate::behaviour::Input::Timer { kind, generation }, sink)
            }
            Queued::Retry { pod, generation } => self.retry(pod, generation),
            Queued::DecisionDone => {
                if let Some((pod, placement)) = self.decisions.take_in_flight() {
                    self.place(pod, placement, sink);
                }
            }
        }
    }

    fn write(&mut self, sink: &mut dyn RecordSink, record: Record) {
        self.summary.records += 1;
        sink.record(record);
    }
}
