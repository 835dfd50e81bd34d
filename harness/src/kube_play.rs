//! Playing runs on a real API server: the `local` control plane (brought up
//! for the invocation, or the one `schedlab cluster up --local` left
//! running) or any kubeconfig. Per (arm, seed): set the run up, start the
//! node emulator and, for the project's policies, the watch-and-bind loop;
//! play the timeline in wall time; always tear the run down, also after an
//! error or Ctrl-C.

use crate::cli::{ClusterKind, NodesFrom, ScenarioArgs};
use crate::exit::InputError;
use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;
use kube_backend::bind::{self, BindOptions};
use kube_backend::emulator::{Emulator, EmulatorOptions};
use kube_backend::run::{self, NodeSource, RunOptions};
use kube_backend::{ApiClient, ClientOptions, ScenarioClock};
use provisioning::local::{self, LocalOptions, ScopedCluster};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The scheduler name of the `default` arm: the cluster's own kube-scheduler.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";

/// Pod creates later than this (scenario seconds) make a run's timings suspect.
const LAG_WARNING_SECONDS: f64 = 30.0;

/// kubelet's default client rate limits (`kubeAPIQPS`, `kubeAPIBurst`).
const KUBELET_QPS: f32 = 5.0;
const KUBELET_BURST: u32 = 10;

/// Client rate limits, as the manifest reports them.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ClientRate {
    pub qps: f32,
    pub burst: u32,
}

/// What the manifests say about the cluster a run played on.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterFacts {
    pub server: String,
    /// scenario seconds per wall second
    pub time_scale: f64,
    pub nodes: &'static str,
    /// the cluster's kube-scheduler (the `default` arm), when known
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_scheduler_client: Option<ClientRate>,
    /// schedlab's watch-and-bind loop (every other arm)
    pub project_scheduler_client: ClientRate,
    /// kind and GKE: the cluster made or checked for the scenario
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<crate::real_cluster::ProvisionFacts>,
}

/// A connected real cluster, for the whole invocation.
pub struct KubeTarget {
    /// creates runs, nodes and pods; plays the emulator
    pub admin: ApiClient,
    /// the project's scheduler identity (the bind loop)
    pub scheduler: ApiClient,
    /// how to connect as the admin again (the emulator gets a client of its own)
    pub(crate) admin_kubeconfig: Option<PathBuf>,
    pub(crate) admin_context: Option<String>,
    pub facts: ClusterFacts,
    pub(crate) nodes: NodesFrom,
    pub(crate) node_selector: Option<String>,
    /// a control plane brought up for this invocation, taken down when dropped
    pub(crate) _plane: Option<ScopedCluster>,
    /// kind or GKE: real kubelets, the in-cluster scheduler, faults on real
    /// nodes; a cluster made for this invocation is deleted when dropped
    pub(crate) real: Option<crate::real_cluster::RealCluster>,
    pub runtime: tokio::runtime::Runtime,
    pub cancel: CancellationToken,
}

impl std::fmt::Debug for KubeTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KubeTarget").field("facts", &self.facts).finish()
    }
}

/// Checks the real-cluster flags and connects (bringing `local` up when needed).
pub fn connect(args: &ScenarioArgs) -> Result<KubeTarget> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let cancel = CancellationToken::new();
    match args.cluster {
        ClusterKind::Sim => bail!("the simulator needs no API server"),
        ClusterKind::Kind | ClusterKind::Gke => bail!("kind and GKE clusters connect through real_cluster::connect"),
        ClusterKind::Local => {
            if args.kubeconfig.is_some() || args.context.is_some() {
                bail!(InputError(
                    "--kubeconfig and --context are for --cluster kube; --cluster local brings its own".into()
                ));
            }
            let (admin_config, scheduler_config, default_rate, plane) = local_plane(args.local_state.as_deref())?;
            let project_rate = project_rate(args, Some(default_rate));
            let admin_opts = ClientOptions {
                kubeconfig: Some(admin_config.clone()),
                qps: project_rate.qps,
                burst: project_rate.burst,
                ..ClientOptions::default()
            };
            let sched_opts = ClientOptions {
                kubeconfig: Some(scheduler_config),
                ..admin_opts.clone()
            };
            let (admin, scheduler) = runtime.block_on(async {
                Ok::<_, kube_backend::KubeError>((
                    ApiClient::connect(&admin_opts).await?,
                    ApiClient::connect(&sched_opts).await?,
                ))
            })?;
            let facts = ClusterFacts {
                server: admin.server().to_string(),
                time_scale: args.time_scale,
                nodes: "emulated",
                default_scheduler_client: Some(default_rate),
                project_scheduler_client: project_rate,
                provisioned: None,
            };
            Ok(KubeTarget {
                admin,
                scheduler,
                admin_kubeconfig: Some(admin_config),
                admin_context: None,
                facts,
                nodes: NodesFrom::Emulated,
                node_selector: None,
                _plane: plane,
                real: None,
                runtime,
                cancel,
            })
        }
        ClusterKind::Kube => {
            let project_rate = project_rate(args, None);
            let opts = ClientOptions {
                kubeconfig: args.kubeconfig.clone(),
                context: args.context.clone(),
                qps: project_rate.qps,
                burst: project_rate.burst,
                ..ClientOptions::default()
            };
            let admin = runtime.block_on(ApiClient::connect(&opts))?;
            let facts = ClusterFacts {
                server: admin.server().to_string(),
                time_scale: args.time_scale,
                nodes: match args.nodes {
                    NodesFrom::Emulated => "emulated",
                    NodesFrom::Existing => "existing",
                },
                default_scheduler_client: None,
                project_scheduler_client: project_rate,
                provisioned: None,
            };
            Ok(KubeTarget {
                scheduler: admin.clone(),
                admin,
                admin_kubeconfig: args.kubeconfig.clone(),
                admin_context: args.context.clone(),
                facts,
                nodes: args.nodes,
                node_selector: args.node_selector.clone(),
                _plane: None,
                real: None,
                runtime,
                cancel,
            })
        }
    }
}

fn project_rate(args: &ScenarioArgs, default_rate: Option<ClientRate>) -> ClientRate {
    let fallback = default_rate.unwrap_or(ClientRate {
        qps: kube_backend::client::CLIENT_GO_QPS,
        burst: kube_backend::client::CLIENT_GO_BURST,
    });
    ClientRate {
        qps: args.qps.unwrap_or(fallback.qps),
        burst: args.burst.unwrap_or(fallback.burst),
    }
}

/// The running `schedlab cluster up --local` control plane when there is a
/// healthy one, else a private one for this invocation.
fn local_plane(state: Option<&Path>) -> Result<(PathBuf, PathBuf, ClientRate, Option<ScopedCluster>)> {
    let shared = match state {
        Some(dir) => dir.to_path_buf(),
        None => local::default_state_dir()?,
    };
    let status = local::status(&shared);
    if state.is_some() && !status.as_ref().is_ok_and(|s| s.healthy() && s.record.is_some()) {
        bail!(InputError(format!(
            "--local-state {}: no healthy control plane runs there (start one with `schedlab cluster up --local --state {}`)",
            shared.display(),
            shared.display()
        )));
    }
    if let Ok(status) = status
        && status.healthy()
        && let Some(record) = status.record
    {
        tracing::info!(server = %record.server, "using the running local control plane");
        let rate = ClientRate {
            qps: record.scheduler_qps,
            burst: record.scheduler_burst,
        };
        return Ok((record.admin_kubeconfig, record.agmarl_kubeconfig, rate, None));
    }
    eprintln!("bringing a local control plane up for this run (a cold cache builds Kubernetes: several minutes)");
    let mut opts = LocalOptions::private("scenario")?;
    opts.cancel = Some(local::cancel_on_interrupt()?);
    let plane = ScopedCluster::up(&opts).context("local control plane")?;
    let (qps, burst) = plane.client_rate();
    let admin = plane.admin_kubeconfig().to_path_buf();
    let sched = plane.agmarl_kubeconfig().to_path_buf();
    Ok((admin, sched, ClientRate { qps, burst }, Some(plane)))
}

/// What one run on a real cluster did.
#[derive(Debug, Clone, Serialize)]
pub struct KubeRunFacts {
    pub run_id: String,
    pub scheduler_name: String,
    pub summary: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_loop: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulator: Option<serde_json::Value>,
    /// kind and GKE: the node faults played on real nodes
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_faults: Option<serde_json::Value>,
    pub teardown: serde_json::Value,
    /// decisions written to the run's decisions.jsonl (`--explain` and the
    /// bind loop only); the run manifest reports it with the file
    #[serde(skip)]
    pub decisions: Option<u64>,
}

/// Everything one run needs besides the target.
pub struct RunRequest<'a> {
    pub timeline: schedlab_core::Timeline,
    pub arm: &'a str,
    pub seed: u64,
    pub policy: Option<Box<dyn scheduler::Scheduler>>,
    pub records: &'a Path,
    /// `--explain`: where the bind loop writes its policy's decisions
    pub decisions: Option<&'a Path>,
    pub progress: &'a ProgressBar,
    pub progress_steps: u64,
}

impl KubeTarget {
    /// Plays one run and tears it down, whatever happened.
    pub fn play(&self, req: RunRequest<'_>) -> Result<KubeRunFacts> {
        self.runtime.block_on(self.play_async(req))
    }

    async fn play_async(&self, req: RunRequest<'_>) -> Result<KubeRunFacts> {
        let scheduler_name = match req.arm {
            "default" => DEFAULT_SCHEDULER_NAME.to_string(),
            arm => arm.to_string(),
        };
        let mut timeline = req.timeline;
        for w in &mut timeline.workloads {
            w.spec.scheduler_name = scheduler_name.clone();
        }
        let run_id = run::new_run_id(&format!("{}-s{}", req.arm, req.seed));
        let opts = RunOptions {
            run: run_id.clone(),
            seed: req.seed,
            scheduler_name: scheduler_name.clone(),
            clock_scale: self.facts.time_scale,
            nodes: match self.nodes {
                NodesFrom::Emulated => NodeSource::Emulated,
                NodesFrom::Existing => NodeSource::Existing {
                    selector: self.node_selector.clone().unwrap_or_default(),
                },
            },
            model: schedlab_core::behaviour::ModelConfig::default(),
            // real kubelets run the workload program; emulated nodes need none
            workload_image: self.real.as_ref().map(|r| r.images.workload.clone()),
        };
        let cancel = self.cancel.child_token();
        let played = self.play_run(
            &timeline,
            &opts,
            req.policy,
            req.records,
            req.decisions,
            req.progress,
            req.progress_steps,
            &cancel,
        );
        let outcome = played.await;
        cancel.cancel();
        let teardown = run::teardown(&self.admin, &run_id)
            .await
            .with_context(|| format!("tearing down run {run_id}: remove what is labelled schedlab.io/run={run_id}"))?;
        let Played {
            summary,
            bind_stats,
            emulator_stats,
            fault_stats,
            decisions,
        } = outcome?;
        Ok(KubeRunFacts {
            run_id,
            scheduler_name,
            summary: to_value(&summary),
            bind_loop: bind_stats,
            emulator: emulator_stats,
            node_faults: fault_stats,
            teardown: to_value(&teardown),
            decisions,
        })
    }

    /// The emulator's client: every real kubelet has a client of its own
    /// (QPS 5, burst 10 by default), so the emulated ones get that much each
    /// instead of sharing the player's budget.
    async fn kubelets(&self, nodes: usize) -> Result<ApiClient> {
        let nodes = nodes.max(1) as u32;
        let opts = ClientOptions {
            kubeconfig: self.admin_kubeconfig.clone(),
            context: self.admin_context.clone(),
            qps: (KUBELET_QPS * nodes as f32).max(self.facts.project_scheduler_client.qps),
            burst: (KUBELET_BURST * nodes).max(self.facts.project_scheduler_client.burst),
            ..ClientOptions::default()
        };
        Ok(ApiClient::connect(&opts).await?)
    }

    #[allow(clippy::too_many_arguments)]
    async fn play_run(
        &self,
        timeline: &schedlab_core::Timeline,
        opts: &RunOptions,
        policy: Option<Box<dyn scheduler::Scheduler>>,
        records: &Path,
        decisions: Option<&Path>,
        progress: &ProgressBar,
        steps: u64,
        cancel: &CancellationToken,
    ) -> Result<Played> {
        // kind beyond its worker cap: the rest of the nodes are objects of the run, emulated
        let extra = match &self.real {
            Some(real) => real.emulated(),
            None => Vec::new(),
        };
        if !extra.is_empty() {
            let retried = std::sync::atomic::AtomicU64::new(0);
            kube_backend::run::create_emulated_nodes(&self.admin, &opts.run, &extra, &retried).await?;
        }
        let prepared = run::setup(&self.admin, timeline, opts).await?;
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
                        taint_unreachable: self.real.is_none(),
                    },
                    cancel.child_token(),
                )
                .await?,
            )
        } else {
            None
        };
        // the bind loop's task owns the placer; the writer comes back through here when it has stopped
        let writer = match decisions {
            Some(path) if policy.is_some() => Some(Arc::new(Mutex::new(Some(
                results::decisions::DecisionsWriter::create(path)?,
            )))),
            _ => None,
        };
        let workloads: Vec<String> = timeline.workloads.iter().map(|w| w.name.clone()).collect();
        let binder = policy.map(|mut policy| {
            let bind_opts = match &opts.nodes {
                NodeSource::Emulated => BindOptions {
                    scheduler_name: opts.scheduler_name.clone(),
                    namespace: Some(opts.run.clone()),
                    node_selector: Some(kube_backend::labels::run_selector(&opts.run)),
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
            let placer: Box<bind::Placer> = match writer.clone() {
                Some(writer) => {
                    let mut explaining = scheduler::explain::Explaining::new(policy);
                    Box::new(move |pod, view| {
                        let placement = explaining.schedule(pod, view);
                        if let (Some(e), Ok(mut guard)) = (explaining.last(), writer.lock())
                            && let Some(w) = guard.as_mut()
                        {
                            w.record(&crate::explain::decision_record(pod, view, &placement, e, &workloads));
                        }
                        placement
                    })
                }
                None => Box::new(move |pod, view| policy.schedule(pod, view)),
            };
            let token = cancel.child_token();
            let handle = tokio::spawn(bind::run(
                self.scheduler.clone(),
                bind_opts,
                clock,
                placer,
                token.clone(),
            ));
            (handle, token)
        });
        let ticker = spawn_progress(clock, timeline.end, progress.clone(), steps, cancel.child_token());
        let mut sink = results::records::JsonlSink::create(records)?;
        // real nodes: faults go to docker, a cordon or a VM (emulated ones' to the emulator)
        let (faults, fault_pump) = match &self.real {
            Some(real) => {
                let pump = real.start_faults(&self.admin, &opts.run, emulator.as_ref().map(|e| e.commands()));
                (Some(pump.sender), Some(pump.handle))
            }
            None => (emulator.as_ref().map(|e| e.commands()), None),
        };
        let played = run::play(
            &self.admin,
            &prepared,
            timeline,
            opts,
            clock,
            faults,
            &mut sink,
            cancel.clone(),
        )
        .await;
        ticker.cancel();
        // play dropped its sender: the pump finishes what it has and stops
        let fault_stats = match fault_pump {
            Some(handle) => Some(to_value(&handle.await.context("the fault pump stopped abnormally")?)),
            None => None,
        };
        let bind_stats = match binder {
            Some((handle, token)) => {
                token.cancel();
                let stats = handle.await.context("the bind loop stopped abnormally")??;
                // the policy's decision times, as the simulator writes them beside the records
                if let Some(times) = &stats.decision_times {
                    let path = records.with_file_name(results::decision_time::DECISION_TIMES_FILE);
                    results::decision_time::DecisionTimes::from_histogram(times.clone(), false)
                        .write(&path)
                        .with_context(|| format!("writing {}", path.display()))?;
                }
                Some(to_value(&stats))
            }
            None => None,
        };
        let decisions = match writer.and_then(|w| w.lock().ok().and_then(|mut guard| guard.take())) {
            Some(w) => Some(w.finish()?),
            None => None,
        };
        let emulator_stats = match emulator {
            Some(e) => Some(to_value(&e.stop().await?)),
            None => None,
        };
        let summary = played?;
        sink.finish()?;
        if summary.create_lag_max_seconds > LAG_WARNING_SECONDS {
            tracing::warn!(
                run = %opts.run,
                lag_seconds = summary.create_lag_max_seconds,
                "the cluster fell behind the scenario (pod creates up to {:.0} scenario seconds late); \
                 a lower --time-scale gives more faithful timings",
                summary.create_lag_max_seconds
            );
        }
        Ok(Played {
            summary,
            bind_stats,
            emulator_stats,
            fault_stats,
            decisions,
        })
    }

    /// Whether the arm's pods are scheduled in the cluster itself (no bind loop here).
    pub fn in_cluster(&self, arm: &str) -> bool {
        arm == "default" || (self.real.is_some() && crate::real_cluster::RealCluster::in_cluster(arm))
    }
}

/// What one run's parts did.
struct Played {
    summary: run::RunSummary,
    bind_stats: Option<serde_json::Value>,
    emulator_stats: Option<serde_json::Value>,
    fault_stats: Option<serde_json::Value>,
    /// decisions written with `--explain`
    decisions: Option<u64>,
}

/// Creates the run's emulated nodes beside the cluster's own (kind beyond
/// its worker cap); teardown removes them with the run.
fn to_value<T: Serialize>(value: &T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

/// Moves the progress bar with scenario time until cancelled.
fn spawn_progress(
    clock: ScenarioClock,
    end: schedlab_core::Time,
    bar: ProgressBar,
    steps: u64,
    token: CancellationToken,
) -> CancellationToken {
    let stop = token.clone();
    tokio::spawn(async move {
        let mut reported = 0;
        let started = Instant::now();
        loop {
            let done = (clock.now().as_millis() * steps / end.as_millis().max(1)).min(steps);
            bar.inc(done - reported.min(done));
            reported = reported.max(done);
            bar.set_message(format!("wall {:.0}s", started.elapsed().as_secs_f64()));
            tokio::select! {
                _ = token.cancelled() => break,
                _ = tokio::time::sleep(Duration::from_millis(250)) => {}
            }
        }
        bar.inc(steps.saturating_sub(reported));
    });
    stop
}

/// Cancels every run on the first Ctrl-C; the run in progress is torn down.
pub fn cancel_on_ctrl_c(target: &KubeTarget) {
    let cancel = target.cancel.clone();
    target.runtime.spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("interrupted: tearing the run down (the run folder stays marked INCOMPLETE)");
            cancel.cancel();
        }
    });
}
