//! The node emulator: plays kubelet for nodes that are API objects only.
//!
//! It adopts every node of a run labelled [`labels::EMULATED`], keeps its
//! Lease and conditions, and plays the pods bound to it with the same
//! pod-behaviour model as the simulator ([`schedlab_core::behaviour`]), in scenario
//! time on a [`ScenarioClock`], writing what happens into pod status as
//! kubelet would. The run player sends it faults through
//! [`Emulator::commands`].
//!
//! - [`driver`]: the model of the nodes and their pods, without I/O.
//! - [`view`], [`status`]: what a pod shows and its `pods/status` patch.
//! - [`node_status`]: node conditions, unreachable taints, Leases.
//! - `outbox`, `writer`: coalesced writes and the tasks that send them.
//! - `heartbeat`: spreading per-node chores over their period.
//! - `watch`, `task`: the watches and the event loop.

pub mod driver;
mod heartbeat;
pub mod node_status;
mod outbox;
mod stats;
pub mod status;
mod task;
pub mod view;
mod watch;
mod writer;

pub use driver::{Driver, Output, PodKey};
pub use stats::EmulatorStats;

use super::client::ApiClient;
use super::clock::ScenarioClock;
use super::error::KubeError;
use super::labels;
use outbox::Outbox;
use schedlab_core::behaviour::ModelConfig;
use stats::Counters;
use std::sync::Arc;
use std::time::Duration;
use task::{Loop, Synced};
use tokio::sync::{mpsc, watch as signal};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A fault the run player asks the emulator to carry out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmulatorCommand {
    /// The running container of pod `namespace/name` exits with an error.
    KillPod { namespace: String, name: String },
    /// The node stops reporting: its Lease is no longer renewed, Ready turns
    /// Unknown and (without a node-lifecycle controller) it is tainted unreachable.
    FailNode { name: String },
    /// The node reports again: Ready, not Degraded, untainted.
    RecoverNode { name: String },
    /// The node stays Ready but its pods crash more often.
    DegradeNode { name: String },
    /// The node leaves: as FailNode, and its pods are evicted at once. The
    /// node object stays (NotReady), so the records show NodeFailed and
    /// PodEvicted where the simulator writes NodeLost and PodEvicted.
    LoseNode { name: String },
}

/// How the emulator plays its nodes.
#[derive(Debug, Clone)]
pub struct EmulatorOptions {
    /// the run whose nodes (labelled run and emulated) and pods it plays
    pub run: String,
    pub model: ModelConfig,
    /// scenario time on the wall clock: the same clock as the run player's
    pub clock: ScenarioClock,
    /// wall time between Lease renewals (kubelet: 10 s)
    pub lease_renew: Duration,
    /// wall time between node status reports while nothing changes
    pub node_status_every: Duration,
    /// put the unreachable taints on a failed node (true when no
    /// node-lifecycle controller runs to do it)
    pub taint_unreachable: bool,
}

impl EmulatorOptions {
    /// kubelet's periods: Lease every 10 s, status every minute, and the
    /// taints a node-lifecycle controller would add.
    pub fn new(run: &str, model: ModelConfig, clock: ScenarioClock) -> EmulatorOptions {
        EmulatorOptions {
            run: run.to_string(),
            model,
            clock,
            lease_renew: Duration::from_secs(10),
            node_status_every: Duration::from_secs(60),
            taint_unreachable: true,
        }
    }
}

/// How many requests the emulator keeps in flight at most.
const WRITERS: usize = 32;
/// Watch events waiting for the event loop, at most.
const QUEUE: usize = 4096;
/// How long `start` waits for the first complete lists.
const SYNC_TIMEOUT: Duration = Duration::from_secs(60);

/// A running node emulator.
pub struct Emulator {
    commands: mpsc::UnboundedSender<EmulatorCommand>,
    counters: Arc<Counters>,
    outbox: Arc<Outbox>,
    cancel: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl std::fmt::Debug for Emulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Emulator")
            .field("nodes", &self.nodes())
            .field("pods", &self.pods())
            .finish()
    }
}

impl Emulator {
    /// Adopts every node labelled run=`opts.run` and emulated=true (now and
    /// later), creates and renews their Leases, and plays kubelet for the
    /// pods of the run bound to them. Returns once both watches have listed
    /// everything once, so [`Emulator::nodes`] counts what exists now.
    pub async fn start(
        api: ApiClient,
        opts: EmulatorOptions,
        cancel: CancellationToken,
    ) -> Result<Emulator, KubeError> {
        opts.model
            .validate()
            .map_err(|e| KubeError::Other(format!("node emulator: {e}")))?;
        let cancel = cancel.child_token();
        let counters = Arc::new(Counters::default());
        let outbox = Arc::new(Outbox::new());
        let (msg_tx, msg_rx) = mpsc::channel(QUEUE);
        let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
        let (synced_tx, mut synced_rx) = signal::channel(Synced::default());
        let mut tasks = Vec::new();
        let event_loop = Loop::new(&opts, outbox.clone(), counters.clone(), synced_tx);
        tasks.push(tokio::spawn(event_loop.run(msg_rx, cmd_rx, cancel.clone())));
        let node_selector = format!("{}={},{}=true", labels::RUN, opts.run, labels::EMULATED);
        tasks.push(tokio::spawn(watch::forward(
            api.clone(),
            node_selector,
            watch::Msg::node,
            msg_tx.clone(),
            counters.clone(),
            cancel.clone(),
        )));
        tasks.push(tokio::spawn(watch::forward(
            api.clone(),
            labels::run_selector(&opts.run),
            watch::Msg::pod,
            msg_tx,
            counters.clone(),
            cancel.clone(),
        )));
        for _ in 0..WRITERS {
            let w = writer::Writer {
                api: api.clone(),
                run: opts.run.clone(),
                outbox: outbox.clone(),
                counters: counters.clone(),
                cancel: cancel.clone(),
            };
            tasks.push(tokio::spawn(w.run()));
        }
        let emulator = Emulator {
            commands: cmd_tx,
            counters,
            outbox,
            cancel: cancel.clone(),
            tasks,
        };
        let synced = tokio::select! {
            _ = cancel.cancelled() => Err(KubeError::Interrupted),
            r = tokio::time::timeout(SYNC_TIMEOUT, synced_rx.wait_for(|s| s.nodes && s.pods)) => match r {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(_)) => Err(KubeError::Other("node emulator: its event loop stopped".into())),
                Err(_) => Err(KubeError::Timeout { server: api.server().to_string(), after: SYNC_TIMEOUT }),
            },
        };
        match synced {
            Ok(()) => Ok(emulator),
            Err(err) => {
                let _ = emulator.stop().await;
                Err(err)
            }
        }
    }

    /// Where to send faults.
    pub fn commands(&self) -> mpsc::UnboundedSender<EmulatorCommand> {
        self.commands.clone()
    }

    /// Nodes adopted now.
    pub fn nodes(&self) -> usize {
        self.counters.nodes()
    }

    /// Pods played now (bound to an adopted node and not over).
    pub fn pods(&self) -> usize {
        self.counters.pods()
    }

    /// Objects with writes waiting to be sent (a backlog that keeps growing
    /// means the emulator cannot keep up at the client's rate limits).
    pub fn backlog(&self) -> usize {
        self.outbox.backlog()
    }

    /// What it did so far.
    pub fn stats(&self) -> EmulatorStats {
        self.counters.snapshot()
    }

    /// Stops its tasks; the objects stay for the run's teardown.
    pub async fn stop(self) -> Result<EmulatorStats, KubeError> {
        self.cancel.cancel();
        let mut failed = None;
        for task in self.tasks {
            if let Err(err) = task.await
                && err.is_panic()
            {
                failed = Some(err.to_string());
            }
        }
        match failed {
            Some(message) => Err(KubeError::Other(format!("node emulator task failed: {message}"))),
            None => Ok(self.counters.snapshot()),
        }
    }
}
