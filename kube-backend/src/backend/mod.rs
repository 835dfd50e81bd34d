//! The kube backend: runs played on any API server through
//! [`schedlab_core::backend::Backend`]. Per (arm, seed): set the run up,
//! start the node emulator where nodes are API objects only and, for arms
//! the cluster does not decide itself, the watch-and-bind loop with the
//! arm's policy; play the timeline in wall time; always tear the run down,
//! also after an error or Ctrl-C. Which cluster it is (a local control
//! plane, a kubeconfig's, kind, GKE) is provisioning's business: it hands
//! over a [`Connection`], and for clusters with real kubelets a
//! [`RealNodes`].

mod facts;
mod real_nodes;

pub use facts::{ClientRate, KubeRunFacts};
pub use real_nodes::{FaultPump, RealNodes};

use crate::bind::{self, BindOptions};
use crate::emulator::{Emulator, EmulatorOptions};
use crate::run::{self, NodeSource, RunOptions};
use crate::{ApiClient, ClientOptions, KubeError, ScenarioClock};
use schedlab_core::backend::{Backend, ClusterScheduler, PROGRESS_STEPS, Played, PolicyTimes, RunObserver, RunRequest};
use schedlab_core::record::RecordSink;
use schedlab_core::{Time, Timeline};
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The scheduler name of the cluster's own kube-scheduler, which decides the `default` arm.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// Pod creates later than this (scenario seconds) make a run's timings suspect.
const LAG_WARNING_SECONDS: f64 = 30.0;

/// kubelet's default client rate limits (`kubeAPIQPS`, `kubeAPIBurst`).
const KUBELET_QPS: f32 = 5.0;
const KUBELET_BURST: u32 = 10;

/// A connected cluster, as provisioning or a kubeconfig hands it over.
pub struct Connection {
    /// the backend's name in manifests (`local`, `kube`, `kind`, `gke`)
    pub name: &'static str,
    /// creates runs, nodes and pods; plays the emulator
    pub admin: ApiClient,
    /// the project's scheduler identity (the bind loop)
    pub scheduler: ApiClient,
    /// how to connect as the admin again (the emulator gets a client of its own)
    pub admin_kubeconfig: Option<PathBuf>,
    pub admin_context: Option<String>,
    /// scenario seconds per wall second
    pub time_scale: f64,
    /// the rate limits of the project's clients
    pub project_rate: ClientRate,
    /// whose nodes the runs use
    pub nodes: NodeSource,
    /// kind, GKE: real kubelets, the in-cluster scheduler, faults on real nodes
    pub real: Option<Box<dyn RealNodes>>,
    /// the runtime the clients were made on; the backend plays every run on it
    pub runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("name", &self.name)
            .field("server", &self.admin.server())
            .field("time_scale", &self.time_scale)
            .field("nodes", &self.nodes)
            .field("real", &self.real.is_some())
            .finish_non_exhaustive()
    }
}

/// The kube backend over one connected cluster, for a whole invocation.
pub struct KubeBackend {
    conn: Connection,
    cancel: CancellationToken,
    /// arms decided by a scheduler already in the cluster, under their own names
    external: BTreeSet<String>,
}

impl std::fmt::Debug for KubeBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeBackend")
            .field("name", &self.conn.name)
            .field("server", &self.conn.admin.server())
            .finish_non_exhaustive()
    }
}

impl KubeBackend {
    /// The backend over `conn`; cancelling `cancel` stops the run in progress (it is torn down) and every later one.
    pub fn new(conn: Connection, cancel: CancellationToken) -> KubeBackend {
        KubeBackend {
            conn,
            cancel,
            external: BTreeSet::new(),
        }
    }

    /// The arms (`--arms external:NAME`) that a scheduler already in the
    /// cluster decides: their pods carry `schedulerName: NAME`, and no bind
    /// loop runs for them.
    pub fn set_external_schedulers(&mut self, names: BTreeSet<String>) {
        self.external = names;
    }

    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    async fn play_async(
        &self,
        req: RunRequest<'_>,
        sink: &mut (dyn RecordSink + Send),
        observer: &dyn RunObserver,
    ) -> Result<Played<KubeRunFacts>, KubeError> {
        let scheduler_name = match req.arm {
            "default" => DEFAULT_SCHEDULER_NAME.to_string(),
            arm => arm.to_string(),
        };
        let mut timeline = req.timeline;
        for w in &mut timeline.workloads {
            for spec in std::iter::once(&mut w.spec).chain(&mut w.slot_specs) {
                spec.scheduler_name = scheduler_name.clone();
            }
        }
        let run_id = run::new_run_id(&format!("{}-s{}", req.arm, req.seed));
        let opts = RunOptions {
            run: run_id.clone(),
            seed: req.seed,
            scheduler_name: scheduler_name.clone(),
            clock_scale: self.conn.time_scale,
            nodes: self.conn.nodes.clone(),
            model: schedlab_core::behaviour::ModelConfig::default(),
            // real kubelets run the workload program; emulated nodes need none
            workload_image: self.conn.real.as_ref().map(|r| r.workload_image()),
        };
        let cancel = self.cancel.child_token();
        let outcome = self
            .play_run(&timeline, &opts, req.policy, sink, observer, &cancel)
            .await;
        cancel.cancel();
        let teardown = run::teardown(&self.conn.admin, &run_id)
            .await
            .map_err(|error| KubeError::Teardown {
                run: run_id.clone(),
                error: Box::new(error),
            })?;
        let parts = outcome?;
        Ok(Played {
            scenario_seconds: timeline.end.as_secs_f64(),
            policy_times: parts.policy_times,
            facts: Some(KubeRunFacts {
                run_id,
                scheduler_name,
                summary: to_value(&parts.summary),
                bind_loop: parts.bind_stats,
                emulator: parts.emulator_stats,
                node_faults: parts.fault_stats,
                teardown: to_value(&teardown),
            }),
        })
    }

    /// The emulator's client: every real kubelet has a client of its own
    /// (QPS 5, burst 10 by default), so the emulated ones get that much each
    /// instead of sharing the player's budget.
    async fn kubelets(&self, nodes: usize) -> Result<ApiClient, KubeError> {
        let nodes = nodes.max(1) as u32;
        let opts = ClientOptions {
            kubeconfig: self.conn.admin_kubeconfig.clone(),
            context: self.conn.admin_context.clone(),
            qps: (KUBELET_QPS * nodes as f32).max(self.conn.project_rate.qps),
            burst: (KUBELET_BURST * nodes).max(self.conn.project_rate.burst),
            ..ClientOptions::default()
        };
        ApiClient::connect(&opts).await
    }

    async fn play_run(
        &self,
        timeline: &Timeline,
        opts: &RunOptions,
        policy: Option<Box<dyn schedlab_core::Scheduler>>,
        sink: &mut (dyn RecordSink + Send),
        observer: &dyn RunObserver,
        cancel: &CancellationToken,
    ) -> Result<RunParts, KubeError> {
        let admin = &self.conn.admin;
        // kind beyond its worker cap: the rest of the nodes are objects of the run, emulated
        let extra = match &self.conn.real {
            Some(real) => real.emulated(),
            None => Vec::new(),
        };
        if !extra.is_empty() {
            let retried = std::sync::atomic::AtomicU64::new(0);
            run::create_emulated_nodes(admin, &opts.run, &extra, &retried).await?;
        }
        let prepared = run::setup(admin, timeline, opts).await?;
        let clock = ScenarioClock::starting_now(opts.clock_scale)?;
        let emulated_nodes = match opts.nodes {
            NodeSource::Emulated => prepared.node_names().len(),
            NodeSource::Existing { .. } => extra.len(),
        };
        let emulator = if emulated_nodes > 0 {
            Some(
                Emulator::start(
                    self.kubelets(emulated_nodes).await?,
                    EmulatorOptions {
                        run: opts.run.clone(),
                        model: opts.model.clone(),
                        clock,
                        lease_renew: Duration::from_secs(10),
                        node_status_every: Duration::from_secs(60),
                        // a real cluster's node-lifecycle controller taints unreachable nodes itself
                        taint_unreachable: self.conn.real.is_none(),
                    },
                    cancel.child_token(),
                )
                .await?,
            )
        } else {
            None
        };
        let binder = policy.map(|placer| {
            let bind_opts = match &opts.nodes {
                NodeSource::Emulated => BindOptions {
                    scheduler_name: opts.scheduler_name.clone(),
                    namespace: Some(opts.run.clone()),
                    node_selector: Some(crate::labels::run_selector(&opts.run)),
                    model: opts.model.clone(),
                },
                // the cluster's own nodes: every pod on them counts, whatever its namespace
                NodeSource::Existing { selector } => BindOptions {
                    scheduler_name: opts.scheduler_name.clone(),
                    namespace: None,
                    node_selector: (!selector.is_empty()).then(|| selector.clone()),
                    model: opts.model.clone(),
                },
            };
            let token = cancel.child_token();
            // the decisions its policy explains go to the player, which writes them to the sink
            let (to, from) = tokio::sync::mpsc::unbounded_channel();
            let out = bind::DecisionOut {
                workloads: timeline.workloads.iter().map(|w| w.name.clone()).collect(),
                to,
            };
            let handle = tokio::spawn(bind::run_recorded(
                self.conn.scheduler.clone(),
                bind_opts,
                clock,
                placer,
                token.clone(),
                out,
            ));
            (handle, token, from)
        });
        let (binder, decisions) = match binder {
            Some((handle, token, from)) => (Some((handle, token)), Some(from)),
            None => (None, None),
        };
        // real nodes: faults go to docker, a cordon or a VM (emulated ones' to the emulator)
        let (faults, fault_pump) = match &self.conn.real {
            Some(real) => {
                let pump = real.start_faults(admin, &opts.run, emulator.as_ref().map(|e| e.commands()));
                (Some(pump.sender), Some(pump.stats))
            }
            None => (emulator.as_ref().map(|e| e.commands()), None),
        };
        let ticker_stop = cancel.child_token();
        let play = async {
            let played = run::play_recording(
                admin,
                &prepared,
                timeline,
                opts,
                clock,
                faults,
                sink,
                decisions,
                cancel.clone(),
            )
            .await;
            ticker_stop.cancel();
            played
        };
        let (played, ()) = tokio::join!(
            play,
            report_progress(clock, timeline.end, observer, ticker_stop.clone())
        );
        // play dropped its sender: the pump finishes what it has and stops
        let fault_stats =
            match fault_pump {
                Some(handle) => Some(handle.await.map_err(|e| task_failed("the fault pump", &e))?.map_err(
                    |message| KubeError::Task {
                        what: "the fault pump",
                        message,
                    },
                )?),
                None => None,
            };
        let (bind_stats, policy_times) = match binder {
            Some((handle, token)) => {
                token.cancel();
                let stats = handle.await.map_err(|e| task_failed("the bind loop", &e))??;
                // the policy's decision times, as the simulator gives them
                let times = stats
                    .decision_times
                    .clone()
                    .map(|nanos| PolicyTimes { nanos, charged: false });
                (Some(to_value(&stats)), times)
            }
            None => (None, None),
        };
        let emulator_stats = match emulator {
            Some(e) => Some(to_value(&e.stop().await?)),
            None => None,
        };
        let summary = played?;
        observer.progressed(PROGRESS_STEPS);
        if summary.create_lag_max_seconds > LAG_WARNING_SECONDS {
            tracing::warn!(
                run = %opts.run,
                lag_seconds = summary.create_lag_max_seconds,
                "the cluster fell behind the scenario (pod creates up to {:.0} scenario seconds late); \
                 a lower --time-scale gives more faithful timings",
                summary.create_lag_max_seconds
            );
        }
        Ok(RunParts {
            summary,
            bind_stats,
            emulator_stats,
            fault_stats,
            policy_times,
        })
    }
}

impl Backend for KubeBackend {
    type Error = KubeError;
    type RunFacts = KubeRunFacts;

    fn name(&self) -> &'static str {
        self.conn.name
    }

    fn max_parallel_runs(&self) -> Option<usize> {
        // runs on one cluster would see each other's pods and nodes
        Some(1)
    }

    fn decided_by_cluster(&self, arm: &str) -> Option<ClusterScheduler> {
        if self.external.contains(arm) {
            return Some(ClusterScheduler {
                kind: "external scheduler",
                scheduler_name: arm.to_string(),
            });
        }
        if arm == "default" {
            return Some(ClusterScheduler {
                kind: "kube-scheduler",
                scheduler_name: DEFAULT_SCHEDULER_NAME.to_string(),
            });
        }
        let real = self.conn.real.as_ref()?;
        real.in_cluster(arm).then(|| ClusterScheduler {
            kind: "in-cluster scheduler",
            scheduler_name: arm.to_string(),
        })
    }

    fn play(
        &self,
        run: RunRequest<'_>,
        sink: &mut (dyn RecordSink + Send),
        observer: &dyn RunObserver,
    ) -> Result<Played<KubeRunFacts>, KubeError> {
        self.conn.runtime.block_on(self.play_async(run, sink, observer))
    }
}

/// What one run's parts did.
struct RunParts {
    summary: run::RunSummary,
    bind_stats: Option<serde_json::Value>,
    emulator_stats: Option<serde_json::Value>,
    fault_stats: Option<serde_json::Value>,
    policy_times: Option<PolicyTimes>,
}

fn task_failed(what: &'static str, error: &tokio::task::JoinError) -> KubeError {
    KubeError::Task {
        what,
        message: error.to_string(),
    }
}

fn to_value<T: Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// Tells `observer` how far scenario time has come, every quarter second, until `stop`.
async fn report_progress(clock: ScenarioClock, end: Time, observer: &dyn RunObserver, stop: CancellationToken) {
    let mut reported = 0;
    loop {
        let done = (clock.now().as_millis() * PROGRESS_STEPS / end.as_millis().max(1)).min(PROGRESS_STEPS);
        if done > reported {
            reported = done;
            observer.progressed(done);
        }
        tokio::select! {
            _ = stop.cancelled() => break,
            _ = tokio::time::sleep(Duration::from_millis(250)) => {}
        }
    }
}
