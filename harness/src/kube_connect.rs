//! Connecting the kube backend to a real API server: the `local` control
//! plane (brought up for the invocation, or the one `schedlab cluster up
//! --local` left running) or any kubeconfig. Playing the runs there is
//! [`kube_backend::backend`]'s.

use crate::cli::{ClusterKind, NodesFrom, ScenarioArgs};
use crate::exit::InputError;
use anyhow::{Context, Result, bail};
use kube_backend::backend::{ClientRate, Connection, KubeBackend};
use kube_backend::run::NodeSource;
use kube_backend::{ApiClient, ClientOptions};
use provisioning::local::{self, LocalOptions, ScopedCluster};
use serde::Serialize;
use std::path::{Path, PathBuf};

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
    pub provisioned: Option<provisioning::real_cluster::ProvisionFacts>,
}

/// A connected real cluster, for the whole invocation: the backend that plays the runs, what the
/// manifests say about it, and what must live as long as it.
pub struct KubeTarget {
    pub backend: KubeBackend,
    pub facts: ClusterFacts,
    /// a control plane brought up for this invocation, taken down when dropped (after the backend)
    pub(crate) _plane: Option<ScopedCluster>,
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
            let backend = KubeBackend::new(
                Connection {
                    name: args.cluster.name(),
                    admin,
                    scheduler,
                    admin_kubeconfig: Some(admin_config),
                    admin_context: None,
                    time_scale: args.time_scale,
                    project_rate,
                    nodes: NodeSource::Emulated,
                    real: None,
                    runtime,
                },
                tokio_util::sync::CancellationToken::new(),
            );
            Ok(KubeTarget {
                backend,
                facts,
                _plane: plane,
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
                    NodesFrom::Emulated | NodesFrom::Real(_) => "emulated",
                    NodesFrom::Existing => "existing",
                },
                default_scheduler_client: None,
                project_scheduler_client: project_rate,
                provisioned: None,
            };
            let backend = KubeBackend::new(
                Connection {
                    name: args.cluster.name(),
                    scheduler: admin.clone(),
                    admin,
                    admin_kubeconfig: args.kubeconfig.clone(),
                    admin_context: args.context.clone(),
                    time_scale: args.time_scale,
                    project_rate,
                    nodes: match args.nodes {
                        // refused for --cluster kube before connecting
                        NodesFrom::Emulated | NodesFrom::Real(_) => NodeSource::Emulated,
                        NodesFrom::Existing => NodeSource::Existing {
                            selector: args.node_selector.clone().unwrap_or_default(),
                        },
                    },
                    real: None,
                    runtime,
                },
                tokio_util::sync::CancellationToken::new(),
            );
            Ok(KubeTarget {
                backend,
                facts,
                _plane: None,
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
    crate::out::noteln!(
        "bringing a local control plane up for this run (a cold cache builds Kubernetes: several minutes)"
    );
    let mut opts = LocalOptions::private("scenario")?;
    opts.cancel = Some(local::cancel_on_interrupt()?);
    let plane = ScopedCluster::up(&opts).context("local control plane")?;
    let (qps, burst) = plane.client_rate();
    let admin = plane.admin_kubeconfig().to_path_buf();
    let sched = plane.agmarl_kubeconfig().to_path_buf();
    Ok((admin, sched, ClientRate { qps, burst }, Some(plane)))
}
