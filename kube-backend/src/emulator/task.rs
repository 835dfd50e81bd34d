//! The emulator's one event loop: it owns the [`Driver`], feeds it the
//! watches, the commands and the scenario clock, keeps the heartbeats, and
//! turns the driver's outputs into writes in the [`Outbox`]. It never waits
//! on the API server itself: writers do.

use super::driver::{Driver, Output, PodKey, Skipped};
use super::heartbeat::Heartbeats;
use super::node_status::{NodeBook, node_status_patch, taints_patch};
use super::outbox::{Op, Outbox, Target};
use super::stats::Counters;
use super::status::{WallTime, evicted_patch, status_patch};
use super::watch::Msg;
use super::{EmulatorCommand, EmulatorOptions};
use crate::clock::ScenarioClock;
use k8s_openapi::api::core::v1 as core;
use kube::runtime::watcher::Event;
use schedlab_core::node::NodeCondition;
use schedlab_core::time::Time;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// Messages handled per wake-up before the loop looks at its timers again.
const BATCH: usize = 512;
/// How often the loop wakes without anything to do (heartbeats).
const TICK: Duration = Duration::from_millis(50);

/// Which watches have listed everything once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Synced {
    pub nodes: bool,
    pub pods: bool,
}

pub struct Loop {
    driver: Driver,
    books: HashMap<String, NodeBook>,
    outbox: Arc<Outbox>,
    clock: ScenarioClock,
    wall: WallTime,
    taint_unreachable: bool,
    leases: Heartbeats,
    reports: Heartbeats,
    counters: Arc<Counters>,
    /// names and keys listed since a watch (re)started its list
    node_list: Option<HashSet<String>>,
    pod_list: Option<HashSet<PodKey>>,
    synced: Synced,
    synced_tx: watch::Sender<Synced>,
    skipped: HashSet<PodKey>,
    out: Vec<Output>,
    due: Vec<String>,
}

impl Loop {
    pub fn new(
        opts: &EmulatorOptions,
        outbox: Arc<Outbox>,
        counters: Arc<Counters>,
        synced_tx: watch::Sender<Synced>,
    ) -> Loop {
        Loop {
            driver: Driver::new(opts.model.clone()),
            books: HashMap::new(),
            outbox,
            clock: opts.clock,
            wall: WallTime::new(opts.clock),
            taint_unreachable: opts.taint_unreachable,
            leases: Heartbeats::new(opts.lease_renew),
            reports: Heartbeats::new(opts.node_status_every),
            counters,
            node_list: None,
            pod_list: None,
            synced: Synced::default(),
            synced_tx,
            skipped: HashSet::new(),
            out: Vec::new(),
            due: Vec::new(),
        }
    }

    pub async fn run(
        mut self,
        mut msgs: mpsc::Receiver<Msg>,
        mut cmds: mpsc::UnboundedReceiver<EmulatorCommand>,
        cancel: CancellationToken,
    ) {
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        enum Wake {
            Msg(Msg),
            Cmd(EmulatorCommand),
            Time,
        }
        loop {
            let timer = self
                .driver
                .next_timer()
                .map(|t| self.clock.instant_of(t))
                .unwrap_or_else(|| Instant::now() + Duration::from_secs(3600));
            let wake = tokio::select! {
                biased;
                _ = cancel.cancelled() => return,
                Some(c) = cmds.recv() => Wake::Cmd(c),
                Some(m) = msgs.recv() => Wake::Msg(m),
                _ = tokio::time::sleep_until(timer.into()) => Wake::Time,
                _ = tick.tick() => Wake::Time,
            };
            let now = self.catch_up();
            match wake {
                Wake::Msg(m) => {
                    self.on_msg(m, now);
                    for _ in 0..BATCH {
                        match msgs.try_recv() {
                            Ok(m) => self.on_msg(m, now),
                            Err(_) => break,
                        }
                    }
                }
                Wake::Cmd(c) => self.on_command(c, now),
                Wake::Time => {}
            }
            self.heartbeats();
            self.flush();
        }
    }

    /// Fires the timers due by now; returns the scenario time now.
    fn catch_up(&mut self) -> Time {
        let wall = Instant::now();
        let mut now = self.clock.at(wall);
        if let Some(t) = self.driver.next_timer() {
            let due = self.clock.instant_of(t);
            if due <= wall {
                self.counters.lag(wall - due);
                // the clock's rounding must not leave a due timer waiting
                now = now.max(t);
            }
        }
        self.driver.advance(now);
        self.driver.now()
    }

    fn on_msg(&mut self, msg: Msg, now: Time) {
        match msg {
            Msg::Node(event) => self.on_node_event(*event, now),
            Msg::Pod(event) => self.on_pod_event(*event, now),
        }
        self.counters.set_sizes(self.driver.nodes(), self.driver.pods());
    }

    fn on_node_event(&mut self, event: Event<core::Node>, now: Time) {
        match event {
            Event::Init => self.node_list = Some(HashSet::new()),
            Event::InitApply(node) => {
                if let (Some(list), Some(name)) = (self.node_list.as_mut(), node.metadata.name.clone()) {
                    list.insert(name);
                }
                self.node_applied(&node, now);
            }
            Event::Apply(node) => self.node_applied(&node, now),
            Event::Delete(node) => {
                if let Some(name) = node.metadata.name.as_deref() {
                    self.node_deleted(name);
                }
            }
            Event::InitDone => {
                if let Some(listed) = self.node_list.take() {
                    for name in self.driver.node_names() {
                        if !listed.contains(&name) {
                            self.node_deleted(&name);
                        }
                    }
                }
                self.synced.nodes = true;
                self.counters.set_sizes(self.driver.nodes(), self.driver.pods());
                self.synced_tx.send_replace(self.synced);
            }
        }
    }

    fn node_applied(&mut self, node: &core::Node, now: Time) {
        let Some(name) = node.metadata.name.clone() else {
            return;
        };
        let stamp = jiff::Timestamp::now();
        match self.books.get_mut(&name) {
            Some(book) => book.update(node),
            None => {
                let book = NodeBook::of(node, stamp);
                // kubelet creates its Lease at once, then renews it on its period
                self.outbox.push(
                    Target::Lease(name.clone()),
                    Op::LeaseRenew {
                        node_uid: book.uid.clone(),
                    },
                );
                self.books.insert(name.clone(), book);
                let wall = Instant::now();
                self.leases.add(&name, wall);
                self.reports.add(&name, wall);
            }
        }
        self.driver.node_seen(node, now);
    }

    fn node_deleted(&mut self, name: &str) {
        self.driver.node_gone(name);
        self.books.remove(name);
        self.leases.remove(name);
        self.reports.remove(name);
    }

    fn on_pod_event(&mut self, event: Event<core::Pod>, now: Time) {
        match event {
            Event::Init => self.pod_list = Some(HashSet::new()),
            Event::InitApply(pod) => {
                if let Some(list) = self.pod_list.as_mut() {
                    list.insert(PodKey::of(&pod));
                }
                self.pod_applied(&pod, now);
            }
            Event::Apply(pod) => self.pod_applied(&pod, now),
            Event::Delete(pod) => {
                let key = PodKey::of(&pod);
                self.skipped.remove(&key);
                self.driver.pod_gone(&key, now);
            }
            Event::InitDone => {
                if let Some(listed) = self.pod_list.take() {
                    for key in self.driver.pod_keys() {
                        if !listed.contains(&key) {
                            self.driver.pod_gone(&key, now);
                        }
                    }
                }
                self.synced.pods = true;
                self.counters.set_sizes(self.driver.nodes(), self.driver.pods());
                self.synced_tx.send_replace(self.synced);
            }
        }
    }

    fn pod_applied(&mut self, pod: &core::Pod, now: Time) {
        if let Err(skipped) = self.driver.pod_seen(pod, now) {
            let key = match &skipped {
                Skipped::NotARunPod(k) | Skipped::BadSpec(k, _) => k.clone(),
            };
            if self.skipped.insert(key) {
                tracing::warn!(?skipped, "a pod of the run the emulator cannot play");
            }
        }
    }

    fn on_command(&mut self, cmd: EmulatorCommand, now: Time) {
        let (name, condition) = match cmd {
            EmulatorCommand::KillPod { namespace, name } => {
                let key = PodKey { namespace, name };
                if !self.driver.kill(&key, now) {
                    tracing::debug!(pod = %key, "kill: no container of that pod is played here");
                }
                return;
            }
            EmulatorCommand::FailNode { name } => (name, NodeCondition::NotReady),
            EmulatorCommand::LoseNode { name } => {
                self.on_command(EmulatorCommand::FailNode { name: name.clone() }, now);
                self.driver.evict_all(&name, now);
                return;
            }
            EmulatorCommand::RecoverNode { name } => (name, NodeCondition::Ready),
            EmulatorCommand::DegradeNode { name } => (name, NodeCondition::Degraded),
        };
        let before = self.driver.node_condition(&name);
        if !self.driver.set_condition(&name, condition, now) {
            tracing::warn!(
                node = name,
                ?condition,
                "a command for a node the emulator does not play"
            );
            return;
        }
        if let (Some(before), Some(book)) = (before, self.books.get_mut(&name)) {
            book.changed(
                before,
                self.driver.node_condition(&name).unwrap_or(before),
                jiff::Timestamp::now(),
            );
        }
    }

    /// Lease renewals and node status reports that are due.
    fn heartbeats(&mut self) {
        let wall = Instant::now();
        let mut due = std::mem::take(&mut self.due);
        self.leases.due(wall, &mut due);
        for name in due.drain(..) {
            if self.driver.node_condition(&name).is_some_and(NodeCondition::is_ready)
                && let Some(book) = self.books.get(&name)
            {
                self.outbox.push(
                    Target::Lease(name),
                    Op::LeaseRenew {
                        node_uid: book.uid.clone(),
                    },
                );
            }
        }
        self.reports.due(wall, &mut due);
        let stamp = jiff::Timestamp::now();
        for name in due.drain(..) {
            if let Some(condition) = self.driver.node_condition(&name).filter(|c| c.is_ready())
                && let Some(book) = self.books.get(&name)
            {
                self.outbox.push(
                    Target::Node(name),
                    Op::NodeStatus(node_status_patch(condition, book, stamp)),
                );
            }
        }
        self.due = due;
    }

    /// Turns the driver's outputs into writes.
    fn flush(&mut self) {
        self.driver.drain(&mut self.out);
        let stamp = jiff::Timestamp::now();
        for output in self.out.drain(..) {
            match output {
                Output::PodStatus(view) => {
                    let patch = status_patch(&view, &self.wall);
                    self.outbox.push(Target::Pod(view.key), Op::PodStatus(patch));
                }
                Output::Evict(view) => {
                    let patch = evicted_patch(&view, &self.wall);
                    let target = Target::Pod(view.key);
                    self.outbox.push(target.clone(), Op::PodStatus(patch));
                    self.outbox.push(target, Op::PodDelete { uid: view.uid });
                }
                Output::Delete { key, uid } => self.outbox.push(Target::Pod(key), Op::PodDelete { uid }),
                Output::NodeCondition { name, condition } => {
                    let Some(book) = self.books.get(&name) else {
                        continue;
                    };
                    let target = Target::Node(name.clone());
                    self.outbox.push(
                        target.clone(),
                        Op::NodeStatus(node_status_patch(condition, book, stamp)),
                    );
                    // a node-lifecycle controller taints on NotReady and untaints on Ready
                    if self.taint_unreachable && condition != NodeCondition::Degraded {
                        let failed = condition == NodeCondition::NotReady;
                        self.outbox
                            .push(target, Op::NodeSpec(taints_patch(book, failed, stamp)));
                    }
                    if condition.is_ready() {
                        // back: renew at once rather than at the next period
                        self.outbox.push(
                            Target::Lease(name),
                            Op::LeaseRenew {
                                node_uid: book.uid.clone(),
                            },
                        );
                    }
                }
            }
        }
        self.counters.set_sizes(self.driver.nodes(), self.driver.pods());
    }
}
