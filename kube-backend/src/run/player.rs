//! The player: carries out the timeline's actions at their scenario times,
//! turns what the watches show into records, and plays the pods' owners.
//!
//! One task, one loop: cancel, then the timeline's due actions and samples,
//! then finished requests, then watch events. Records are stamped with the
//! clock when the create returns or the watch delivers, never earlier than
//! the record before and never after the end.

use super::options::{RunOptions, RunSummary};
use super::pods::{PodState, Pods};
use super::requests::{self, Done, Request};
use super::watch::{Change, Relist, WatchStream};
use crate::cache::ClusterCache;
use crate::emulator::EmulatorCommand;
use crate::{ApiClient, KubeError, ScenarioClock, objects};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use k8s_openapi::api::core::v1 as core;
use kube::ResourceExt;
use kube::api::Api;
use schedlab_core::behaviour::PodEnd;
use schedlab_core::decision::DecisionRecord;
use schedlab_core::node::NodeId;
use schedlab_core::pod::{PodId, PodSlot};
use schedlab_core::record::{DeleteCause, Event, EventKind, Record, RecordSink};
use schedlab_core::time::Time;
use schedlab_core::timeline::{Action, Timeline};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio_util::sync::CancellationToken;

type WatchItem<K> = Option<Result<kube::runtime::watcher::Event<K>, kube::runtime::watcher::Error>>;

/// What woke the loop (objects boxed: a Pod is large).
enum Step {
    Cancelled,
    Due,
    Done(Done),
    Pod(Box<WatchItem<core::Pod>>),
    Node(Box<WatchItem<core::Node>>),
}

pub(crate) struct Player<'a> {
    pub(crate) api: ApiClient,
    pub(crate) pods_api: Api<core::Pod>,
    pub(crate) timeline: &'a Timeline,
    pub(crate) opts: &'a RunOptions,
    pub(crate) clock: ScenarioClock,
    pub(crate) sink: &'a mut (dyn RecordSink + Send),
    pub(crate) cache: ClusterCache,
    /// node names by NodeId, for the emulator's commands
    pub(crate) node_names: Vec<String>,
    pub(crate) affinity: Option<core::Affinity>,
    pub(crate) faults: Option<UnboundedSender<EmulatorCommand>>,
    pub(crate) retried: Arc<AtomicU64>,
    pub(crate) summary: RunSummary,
    pub(crate) pods: Pods,
    pub(crate) queue: VecDeque<Request>,
    pub(crate) next_action: usize,
    pub(crate) next_sample: Option<Time>,
    pub(crate) last_t: Time,
    /// the time of the last samples written
    pub(crate) last_sample: Option<Time>,
    pub(crate) warned_unsupported: bool,
    pub(crate) events: Vec<EventKind>,
    /// the decision records the run's bind loop sends (`--explain`)
    pub(crate) decisions: Option<UnboundedReceiver<DecisionRecord>>,
}

impl std::fmt::Debug for Player<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Player")
            .field("run", &self.opts.run)
            .field("next_action", &self.next_action)
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

impl Player<'_> {
    /// Plays until the timeline's end (Ok) or `cancel` (Interrupted).
    pub(crate) async fn play(
        mut self,
        mut pod_watch: WatchStream<core::Pod>,
        mut node_watch: WatchStream<core::Node>,
        cancel: CancellationToken,
    ) -> Result<RunSummary, KubeError> {
        let mut in_flight: FuturesUnordered<BoxFuture<'static, Done>> = FuturesUnordered::new();
        let (mut pod_relist, mut node_relist) = (Relist::default(), Relist::default());
        let mut pod_changes = Vec::new();
        let mut node_changes = Vec::new();
        loop {
            self.write_decisions();
            while in_flight.len() < requests::IN_FLIGHT
                && let Some(request) = self.queue.pop_front()
            {
                in_flight.push(requests::send(
                    self.api.clone(),
                    self.pods_api.clone(),
                    self.retried.clone(),
                    request,
                ));
            }
            let deadline = self.next_deadline();
            let step = tokio::select! {
                biased;
                _ = cancel.cancelled() => Step::Cancelled,
                _ = tokio::time::sleep_until(deadline.into()) => Step::Due,
                Some(done) = in_flight.next(), if !in_flight.is_empty() => Step::Done(done),
                event = pod_watch.next() => Step::Pod(Box::new(event)),
                event = node_watch.next() => Step::Node(Box::new(event)),
            };
            match step {
                Step::Cancelled => return Err(KubeError::Interrupted),
                Step::Due => {
                    if self.play_due() {
                        break;
                    }
                }
                Step::Done(done) => self.on_done(done)?,
                Step::Pod(event) => {
                    match *event {
                        Some(Ok(event)) => pod_relist.changes(event, &mut pod_changes),
                        Some(Err(err)) => {
                            tracing::warn!(error = %crate::redact::shown(&err), "pod watch broke; it resumes by itself")
                        }
                        None => return Err(KubeError::Other("the pod watch ended".into())),
                    }
                    for change in pod_changes.drain(..) {
                        self.on_pod(change);
                    }
                }
                Step::Node(event) => {
                    match *event {
                        Some(Ok(event)) => node_relist.changes(event, &mut node_changes),
                        Some(Err(err)) => {
                            tracing::warn!(error = %crate::redact::shown(&err), "node watch broke; it resumes by itself")
                        }
                        None => return Err(KubeError::Other("the node watch ended".into())),
                    }
                    for change in node_changes.drain(..) {
                        self.on_node(change);
                    }
                }
            }
        }
        self.write_decisions();
        self.summary.api_errors_retried = self.retried.load(Ordering::Relaxed);
        Ok(self.summary)
    }

    /// Writes the decision records the bind loop sent since the last call.
    fn write_decisions(&mut self) {
        if let Some(decisions) = self.decisions.as_mut() {
            while let Ok(decision) = decisions.try_recv() {
                self.sink.decision(decision);
            }
        }
    }

    fn end(&self) -> Time {
        self.timeline.end
    }

    /// The next due action, sample or end.
    fn next_deadline(&self) -> Instant {
        let action = self
            .timeline
            .actions
            .get(self.next_action)
            .map(|a| a.at)
            .filter(|at| *at <= self.end());
        let next = [action, self.next_sample, Some(self.end())]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(self.end());
        self.clock.instant_of(next)
    }

    /// The actions due, then the sample if due, then the end: true when
    /// the run has ended.
    fn play_due(&mut self) -> bool {
        let now = Instant::now();
        // in time order (an action before a sample of the same time), should
        // the loop have fallen behind
        loop {
            let action = self
                .timeline
                .actions
                .get(self.next_action)
                .filter(|ta| ta.at <= self.end() && self.clock.instant_of(ta.at) <= now);
            let sample = self.next_sample.filter(|t| self.clock.instant_of(*t) <= now);
            match (action, sample) {
                (Some(ta), sample) if sample.is_none_or(|t| ta.at <= t) => {
                    self.next_action += 1;
                    self.apply_action(&ta.action);
                }
                (_, Some(t)) => {
                    self.sample(t);
                    let next = t + self.timeline.sample_interval;
                    self.next_sample = (next > t && next <= self.end()).then_some(next);
                }
                _ => break,
            }
        }
        if self.clock.instant_of(self.end()) <= now {
            let t = self.end().max(self.last_t);
            self.write(Record::End { t });
            return true;
        }
        false
    }

    fn apply_action(&mut self, action: &Action) {
        match *action {
            Action::CreatePod { slot } => self.create_pod(slot),
            Action::DeletePod { slot, recreate } => {
                let cause = if recreate {
                    DeleteCause::Churn
                } else {
                    DeleteCause::Scenario
                };
                match self.pods.current(slot) {
                    Some(pod) => self.delete_pod(pod, cause),
                    None => tracing::debug!(?slot, "delete: the slot has no pod"),
                }
            }
            Action::KillPod { slot } => match self.pods.current(slot).and_then(|p| self.pods.get(p)) {
                Some(entry) => {
                    let command = EmulatorCommand::KillPod {
                        namespace: self.opts.run.clone(),
                        name: entry.name.clone(),
                    };
                    self.fault(Some(command));
                }
                None => tracing::debug!(?slot, "kill: the slot has no pod"),
            },
            Action::FailNode { node } => {
                let command = self.node_name(node).map(|name| EmulatorCommand::FailNode { name });
                self.fault(command)
            }
            Action::RecoverNode { node } => {
                let command = self.node_name(node).map(|name| EmulatorCommand::RecoverNode { name });
                self.fault(command)
            }
            Action::DegradeNode { node } => {
                let command = self.node_name(node).map(|name| EmulatorCommand::DegradeNode { name });
                self.fault(command)
            }
            Action::LoseNode { node } => {
                let command = self.node_name(node).map(|name| EmulatorCommand::LoseNode { name });
                self.fault(command)
            }
            // the node object stayed, NotReady: the replacement is its recovery
            Action::ReplaceNode { node } => {
                let command = self.node_name(node).map(|name| EmulatorCommand::RecoverNode { name });
                self.fault(command)
            }
        }
    }

    fn node_name(&self, node: NodeId) -> Option<String> {
        self.node_names.get(node.index()).cloned()
    }

    /// Hands a fault to the emulator; None: nobody can carry it out.
    fn fault(&mut self, command: Option<EmulatorCommand>) {
        let sent = match (&self.faults, command) {
            (Some(faults), Some(command)) => faults.send(command).is_ok(),
            _ => false,
        };
        if sent {
            self.summary.faults_sent += 1;
        } else {
            self.summary.faults_unsupported += 1;
            if !self.warned_unsupported {
                self.warned_unsupported = true;
                tracing::warn!(
                    run = %self.opts.run,
                    "a fault action cannot be carried out here (no node emulator, or no such node); such faults are counted, not played"
                );
            }
        }
    }

    /// The slot's next pod: its create goes out in turn.
    fn create_pod(&mut self, slot: PodSlot) {
        let Some(workload) = self.timeline.workload(slot.workload) else {
            tracing::warn!(?slot, "create: no such workload");
            return;
        };
        let Some(ident) = self.pods.create(slot, |ident| objects::pod_name(workload, ident)) else {
            return;
        };
        let run = self.opts.run.as_str();
        let mut object = objects::pod_object(run, run, &ident, workload, self.opts.seed);
        if let Some(spec) = object.spec.as_mut() {
            spec.scheduler_name = Some(self.opts.scheduler_name.clone());
            spec.affinity = self.affinity.clone();
        }
        if let Some(image) = &self.opts.workload_image {
            objects::use_workload_image(&mut object, image, self.opts.clock_scale, &self.opts.model);
        }
        self.queue.push_back(Request::Create {
            pod: ident.pod,
            object: Box::new(object),
            asked: self.clock.now(),
        });
    }

    fn delete_pod(&mut self, pod: PodId, cause: DeleteCause) {
        let Some(entry) = self.pods.get_mut(pod) else {
            return;
        };
        match entry.state {
            PodState::Creating { delete: None } => entry.state = PodState::Creating { delete: Some(cause) },
            PodState::Live => {
                entry.state = PodState::Deleting(cause);
                let name = entry.name.clone();
                self.queue.push_back(Request::Delete { pod, name, cause });
            }
            PodState::Creating { delete: Some(_), .. } | PodState::Ended | PodState::Deleting(_) | PodState::Gone => {}
        }
    }

    fn on_done(&mut self, done: Done) -> Result<(), KubeError> {
        match done {
            Done::Created { pod, asked, result } => {
                let name = self.pods.get(pod).map(|e| e.name.clone()).unwrap_or_default();
                result.map_err(KubeError::api(format!("creating pod {name}")))?;
                self.summary.pods_created += 1;
                let lag = self.clock.now().since(asked).as_secs_f64();
                self.summary.create_lag_max_seconds = self.summary.create_lag_max_seconds.max(lag);
                // else the watch showed it first and PodCreated is recorded
                if let Some(PodState::Creating { delete }) = self.pods.get(pod).map(|e| e.state) {
                    self.record_created(pod);
                    self.created(pod, delete);
                }
            }
            Done::Deleted { pod, cause, result } => {
                let name = self.pods.get(pod).map(|e| e.name.clone()).unwrap_or_default();
                result.map_err(KubeError::api(format!("deleting pod {name}")))?;
                self.summary.deletes += 1;
                let now = self.clock.now();
                let node = self.cache.delete_pod(&self.opts.run, &name, now).and_then(|d| d.node);
                self.event(EventKind::PodDeleted { pod, node, cause });
                if let Some(entry) = self.pods.get_mut(pod) {
                    entry.state = PodState::Gone;
                }
                self.pod_ended(pod, PodEnd::Deleted(cause));
            }
        }
        Ok(())
    }

    /// The pod exists (PodCreated is recorded): Live, or on its way out if
    /// the scenario deleted it meanwhile.
    fn created(&mut self, pod: PodId, delete: Option<DeleteCause>) {
        let Some(entry) = self.pods.get_mut(pod) else {
            return;
        };
        match delete {
            None => entry.state = PodState::Live,
            Some(cause) => {
                entry.state = PodState::Deleting(cause);
                let name = entry.name.clone();
                self.queue.push_back(Request::Delete { pod, name, cause });
            }
        }
    }

    fn record_created(&mut self, pod: PodId) {
        let Some(entry) = self.pods.get(pod) else {
            return;
        };
        let slot = entry.ident.slot;
        let Some(workload) = self.timeline.workload(slot.workload) else {
            return;
        };
        self.event(EventKind::pod_created(pod, slot, workload.spec_of(slot.ordinal)));
    }

    fn on_pod(&mut self, change: Change<core::Pod>) {
        let (name, object, gone) = match change {
            Change::Applied(p) => (p.name_any(), Some(p), false),
            Change::Deleted(p) => (p.name_any(), Some(p), true),
            Change::Vanished(name) => (name, None, true),
        };
        let Some(pod) = self.pods.by_name(&name) else {
            tracing::debug!(pod = %name, "a pod this run did not create; ignored");
            return;
        };
        let Some(state) = self.pods.get(pod).map(|e| e.state) else {
            return;
        };
        match state {
            PodState::Deleting(_) | PodState::Gone => return,
            PodState::Creating { delete } => {
                // shown before its create call returned
                self.record_created(pod);
                self.created(pod, delete);
                if delete.is_some() {
                    // the scenario already deleted it; the watch no longer counts
                    return;
                }
            }
            PodState::Live | PodState::Ended => {}
        }
        let now = self.clock.now();
        if let Some(object) = &object {
            let mut events = std::mem::take(&mut self.events);
            events.clear();
            self.cache.apply_pod(object, now, &mut events);
            for event in events.drain(..) {
                let end = match event {
                    EventKind::PodSucceeded { .. } => Some(PodEnd::Succeeded),
                    EventKind::PodFailed { .. } => Some(PodEnd::Failed),
                    EventKind::PodEvicted { .. } => Some(PodEnd::Evicted),
                    _ => None,
                };
                self.event(event);
                if let Some(end) = end {
                    self.ended(pod, end);
                }
            }
            self.events = events;
        }
        if gone {
            let deleted = self.cache.delete_pod(&self.opts.run, &name, now);
            if self.pods.get(pod).map(|e| e.state) == Some(PodState::Live) {
                // Somebody else deleted it (a node's eviction, a user):
                // the owner sees it lost, as after an eviction.
                let (event, end) = match deleted.and_then(|d| d.node) {
                    Some(node) => (EventKind::PodEvicted { pod, node }, PodEnd::Evicted),
                    None => (
                        EventKind::PodDeleted {
                            pod,
                            node: None,
                            cause: DeleteCause::Scenario,
                        },
                        PodEnd::Deleted(DeleteCause::Scenario),
                    ),
                };
                let workload = self.pods.get(pod).map(|e| e.ident.slot.workload);
                self.cache.note(now, &event, workload);
                self.event(event);
                self.ended(pod, end);
            }
            if let Some(entry) = self.pods.get_mut(pod) {
                entry.state = PodState::Gone;
            }
        }
    }

    /// A Live pod ended by itself or by its node.
    fn ended(&mut self, pod: PodId, end: PodEnd) {
        match self.pods.get_mut(pod) {
            Some(entry) if entry.state == PodState::Live => entry.state = PodState::Ended,
            _ => return,
        }
        self.pod_ended(pod, end);
    }

    /// The slot lost the pod; its owner may replace it.
    fn pod_ended(&mut self, pod: PodId, end: PodEnd) {
        let recreate = self
            .pods
            .get(pod)
            .and_then(|e| self.timeline.workload(e.ident.slot.workload))
            .is_some_and(|w| w.recreate);
        if let Some(slot) = self.pods.ended(pod, end, recreate) {
            self.create_pod(slot);
        }
    }

    fn on_node(&mut self, change: Change<core::Node>) {
        let now = self.clock.now();
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        match change {
            Change::Applied(node) => {
                if let Err(err) = self.cache.apply_node(&node, now, &mut events) {
                    tracing::warn!(node = %node.name_any(), error = %crate::redact::shown(&err), "a node the run cannot read; ignored");
                }
            }
            Change::Deleted(node) => self.cache.delete_node(&node.name_any(), now, &mut events),
            Change::Vanished(name) => self.cache.delete_node(&name, now, &mut events),
        }
        for event in events.drain(..) {
            self.event(event);
        }
        self.events = events;
    }

    fn sample(&mut self, due: Time) {
        let Some(t) = sample_time(due, self.last_t, self.last_sample) else {
            return;
        };
        let now = self.clock.now();
        self.cache.expire(now);
        self.last_t = t;
        self.last_sample = Some(t);
        let mut written = 0u64;
        let sink = &mut *self.sink;
        schedlab_core::sample::write_samples(
            t,
            self.cache.nodes(),
            self.cache.pending(),
            self.cache.bound(),
            &mut |record| {
                written += 1;
                sink.record(record);
            },
        );
        self.summary.records += written;
    }

    fn event(&mut self, kind: EventKind) {
        // what arrives after the end's instant, before the end is written,
        // happened by the end
        let t = self.clock.now().min(self.end()).max(self.last_t);
        self.last_t = t;
        self.write(Record::Event(Event { t, kind }));
    }

    pub(crate) fn write(&mut self, record: Record) {
        self.summary.records += 1;
        self.sink.record(record);
    }
}

/// When the samples due at `due` are written: not before the last event
/// (records go forward in time), and not at all when that instant already
/// has its samples. A loop that fell behind (real nodes at a high time
/// scale) finds several samples overdue at once, after events stamped with
/// the present: they collapse into one, since a node has one sample per
/// instant.
fn sample_time(due: Time, last_event: Time, last_sample: Option<Time>) -> Option<Time> {
    let t = due.max(last_event);
    match last_sample {
        Some(last) if t <= last => None,
        _ => Some(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Time {
        Time(ms)
    }

    #[test]
    fn samples_on_time_are_written_at_their_time() {
        assert_eq!(sample_time(at(10_000), at(9_500), Some(at(5_000))), Some(at(10_000)));
        assert_eq!(sample_time(at(0), at(0), None), Some(at(0)));
    }

    #[test]
    fn overdue_samples_collapse_into_one_after_the_last_event() {
        // two samples overdue (at 10 s and 15 s) after an event stamped 16 s
        let first = sample_time(at(10_000), at(16_000), Some(at(5_000)));
        assert_eq!(first, Some(at(16_000)));
        assert_eq!(sample_time(at(15_000), at(16_000), first), None);
        // the next one on time goes on as before
        assert_eq!(sample_time(at(20_000), at(16_000), first), Some(at(20_000)));
    }
}
