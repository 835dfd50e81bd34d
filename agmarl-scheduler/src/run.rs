//! The wiring: connect, serve the probes and metrics, join the election,
//! bind while leading, and on a stop signal stop binding, drain, release the
//! Lease and return.

use crate::args::{Args, LeaseTimingError, lease_timing};
use crate::config::{self, ConfigError};
use crate::health::{Health, Role};
use crate::http::{self, Shared};
use crate::leader::{Election, LeaseSettings};
use crate::metrics::Metrics;
use crate::policy::{self, SharedPolicy};
use crate::watch::{self, Scope};
use kube_backend::bind::{self, BindOptions, BindStats};
use kube_backend::{ApiClient, ClientOptions, KubeError, ScenarioClock};
use schedlab_core::behaviour::ModelConfig;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Why the scheduler stopped other than by a stop signal, or could not start.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    LeaseTiming(#[from] LeaseTimingError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Checkpoint(#[from] scheduler::Error),
    #[error(transparent)]
    Drs(#[from] scheduler::drs::DrsError),
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
    #[error("in-cluster configuration: {0}")]
    InCluster(#[source] kube::config::InferConfigError),
    #[error(transparent)]
    Kube(#[from] KubeError),
    #[error("the bind loop stopped: {0}")]
    BindLoop(#[source] KubeError),
    #[error("the bind loop task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    #[error("the leader election stopped")]
    ElectionEnded,
}

impl RunError {
    /// A refusal of what the user handed the scheduler (its flags, its
    /// configuration or checkpoint files, a DRS network of another size),
    /// which exits 2 as schedlab's bad input does; the rest exit 1.
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            RunError::LeaseTiming(_) | RunError::Config(_) | RunError::Checkpoint(_) | RunError::Drs(_)
        )
    }
}

/// The options of [`ApiClient`] the flags ask for.
pub fn client_options(args: &Args) -> ClientOptions {
    ClientOptions {
        kubeconfig: args.kubeconfig.clone(),
        qps: args.qps,
        burst: args.burst,
        ..ClientOptions::default()
    }
}

/// `--kubeconfig` if given, else kube's inference (in-cluster service
/// account inside a pod, else KUBECONFIG / ~/.kube/config).
pub async fn connect(args: &Args) -> Result<ApiClient, RunError> {
    let opts = client_options(args);
    if opts.kubeconfig.is_some() {
        return Ok(ApiClient::connect(&opts).await?);
    }
    // kube reads KUBECONFIG's files or ~/.kube/config first, whole: the
    // same checks as --kubeconfig's
    kube_backend::client::check_implicit_kubeconfigs()?;
    let config = kube::Config::infer().await.map_err(RunError::InCluster)?;
    Ok(ApiClient::from_config(config, &opts).await?)
}

/// The nodes the scheduler places on (those `selector` picks): the size a
/// DRS network must have been trained for.
async fn count_nodes(api: &ApiClient, selector: Option<&str>) -> Result<usize, RunError> {
    use k8s_openapi::api::core::v1::Node;
    let mut params = kube::api::ListParams::default();
    if let Some(selector) = selector {
        params = params.labels(selector);
    }
    api.throttle().await;
    let nodes = kube::Api::<Node>::all(api.client())
        .list_metadata(&params)
        .await
        .map_err(KubeError::api("counting the nodes the DRS network decides for"))?;
    Ok(nodes.items.len())
}

/// One leadership term's bind loop.
struct Term {
    handle: JoinHandle<Result<BindStats, KubeError>>,
    stop: CancellationToken,
}

impl Term {
    fn start(ctx: &Ctx<'_>) -> Term {
        let stop = CancellationToken::new();
        let (api, opts, policy, metrics, clock) = (ctx.api, ctx.bind_opts, ctx.policy, ctx.metrics, ctx.clock);
        let handle = tokio::spawn(bind::run_counted(
            api.clone(),
            opts.clone(),
            clock,
            policy::placer(policy.clone(), metrics.clone()),
            stop.clone(),
            metrics.live_counts(),
        ));
        Term { handle, stop }
    }

    /// Stops binding and waits for the requests in flight (the loop drains
    /// them for at most a few seconds).
    async fn finish(self) -> Result<BindStats, RunError> {
        self.stop.cancel();
        self.handle.await?.map_err(RunError::BindLoop)
    }
}

/// What every term needs.
struct Ctx<'a> {
    api: &'a ApiClient,
    bind_opts: &'a BindOptions,
    policy: &'a SharedPolicy,
    metrics: &'a Arc<Metrics>,
    health: &'a Arc<Health>,
    /// real time: back-offs and retries in seconds, as kube-scheduler's
    clock: ScenarioClock,
}

/// Runs until `shutdown` fires (Ok) or something fails for good (Err).
/// Either way it stops binding and releases the Lease before returning.
pub async fn run(args: Args, shutdown: CancellationToken) -> Result<(), RunError> {
    let (duration_secs, grace_secs) = lease_timing(args.lease_duration)?;
    let clock = ScenarioClock::starting_now(1.0).map_err(|e| RunError::Kube(KubeError::Other(e.to_string())))?;
    let (policy, drs) = match args.drs_checkpoint.as_deref() {
        Some(path) => {
            let (policy, meta) = policy::load_drs(path, args.seed)?;
            (policy, Some((path, meta)))
        }
        None => {
            let agmarl = match args.agmarl_config.as_deref() {
                Some(path) => config::read(path)?,
                None => scheduler::agmarl::AgmarlConfig::default(),
            };
            (policy::load(args.checkpoint.as_deref(), agmarl, args.seed)?, None)
        }
    };
    let listener = http::bind(args.listen).await.map_err(|source| RunError::Listen {
        addr: args.listen,
        source,
    })?;
    let bound = listener.local_addr().unwrap_or(args.listen);
    let api = connect(&args).await?;
    if let Some((path, meta)) = &drs {
        let nodes = count_nodes(&api, args.node_selector.as_deref()).await?;
        meta.check_cluster(&path.display().to_string(), nodes)?;
    }
    let identity = args.identity();
    tracing::info!(%identity, server = %api.server(), listen = %bound, scheduler = %args.scheduler_name, "starting");

    let metrics = Arc::new(Metrics::new());
    policy.lock().unwrap_or_else(|p| p.into_inner()).export_state(&metrics);
    let health = Arc::new(Health::new(Instant::now()));
    let background = CancellationToken::new();
    let server = tokio::spawn(http::serve(
        listener,
        Shared {
            metrics: metrics.clone(),
            health: health.clone(),
        },
        background.clone(),
    ));
    let watcher = tokio::spawn(watch::run(
        api.client(),
        Scope {
            scheduler_name: args.scheduler_name.clone(),
            namespace: args.namespace.clone(),
            node_selector: args.node_selector.clone(),
        },
        health.clone(),
        metrics.clone(),
        background.clone(),
    ));
    let election = Election::start(
        api.client(),
        LeaseSettings {
            name: args.lease_name.clone(),
            namespace: args.lease_namespace.clone(),
            identity: identity.clone(),
            duration_secs,
            grace_secs,
        },
        health.clone(),
    );
    let bind_opts = BindOptions {
        scheduler_name: args.scheduler_name.clone(),
        namespace: args.namespace.clone(),
        node_selector: args.node_selector.clone(),
        model: ModelConfig::default(),
    };

    let ctx = Ctx {
        api: &api,
        bind_opts: &bind_opts,
        policy: &policy,
        metrics: &metrics,
        health: &health,
        clock,
    };
    let outcome = lead_while_elected(&ctx, &election, &shutdown).await;

    health.set_role(Role::ShuttingDown);
    metrics.set_leader(false);
    let stop_binding = outcome.1;
    let mut result = outcome.0;
    if let Some(term) = stop_binding {
        match term.finish().await {
            Ok(stats) => tracing::info!(binds = stats.binds, decisions = stats.decisions, "stopped binding"),
            Err(err) => {
                if result.is_ok() {
                    result = Err(err);
                }
            }
        }
    }
    // Only now, with no bind in flight, may another replica take over.
    election.resign().await;
    background.cancel();
    let _ = server.await;
    let _ = watcher.await;
    tracing::info!(%identity, "stopped");
    result
}

/// The control loop: starts a bind loop when this replica becomes leader,
/// stops it when leadership goes. Returns why it ended and the term still
/// running, if any, for the caller to stop.
async fn lead_while_elected(
    ctx: &Ctx<'_>,
    election: &Election,
    shutdown: &CancellationToken,
) -> (Result<(), RunError>, Option<Term>) {
    let (metrics, health) = (ctx.metrics, ctx.health);
    let mut role = election.watch();
    let mut term: Option<Term> = None;
    let mut beat = tokio::time::interval(Duration::from_secs(1));
    loop {
        health.control_beat(Instant::now());
        let leading = *role.borrow_and_update();
        match (leading, term.take()) {
            (true, None) => {
                tracing::info!("leading: binding starts");
                term = Some(Term::start(ctx));
                health.set_role(Role::Leader { binding: true });
                metrics.set_leader(true);
            }
            (false, Some(running)) => {
                tracing::info!("no longer leading: binding stops");
                metrics.set_leader(false);
                health.set_role(Role::Leader { binding: false });
                match running.finish().await {
                    Ok(stats) => tracing::info!(binds = stats.binds, conflicts = stats.conflicts, "term over"),
                    Err(err) => return (Err(err), None),
                }
                health.set_role(Role::Follower);
            }
            (_, kept) => term = kept,
        }
        let bind_loop_ended = async {
            match term.as_mut() {
                Some(t) => (&mut t.handle).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = shutdown.cancelled() => return (Ok(()), term),
            changed = role.changed() => if changed.is_err() {
                return (Err(RunError::ElectionEnded), term);
            },
            ended = bind_loop_ended => {
                // The loop only returns by itself on an error it cannot
                // handle (no permission, the watches ended).
                let result = match ended {
                    Ok(Ok(_)) => Err(RunError::BindLoop(KubeError::Other("the bind loop ended by itself".into()))),
                    Ok(Err(err)) => Err(RunError::BindLoop(err)),
                    Err(join) => Err(RunError::Task(join)),
                };
                return (result, None);
            }
            _ = beat.tick() => {}
        }
    }
}
