//! Making a kind or GKE cluster ready for a scenario's runs: create it
//! (kind; GKE with `provision`), connect, label its nodes with their pools
//! and prices, deploy the in-cluster scheduler and wait for it, and say
//! which scenario node each real node plays.

use super::{FaultPlan, Made, ProvisionFacts, RealCluster, gke_fault_line, kind_fault_line, pool_facts};
use crate::external::CommandRunner;
use crate::gke::{self, GkeCluster, GkePlan, nodes::NodeMark};
use crate::kind::{KindCluster, KindPlan, Placement};
use crate::scheduler_deploy::{self, Images};
use kube_backend::backend::ClientRate;
use kube_backend::{ApiClient, ClientOptions, KubeError};
use schedlab_core::NodeSpec;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// A cluster made ready for the runs.
#[derive(Debug)]
pub struct Provisioned {
    /// connected as the admin
    pub admin: ApiClient,
    /// how the admin connects (again)
    pub client: ClientOptions,
    /// what the manifest says was made or checked
    pub facts: ProvisionFacts,
    /// deletes what was made when dropped (unless kept)
    pub cluster: RealCluster,
}

/// Why a kind or GKE cluster could not be made ready. The chain keeps each
/// cause as its source, so the binary can tell the user's input from the
/// rest by the cause.
#[derive(Debug, thiserror::Error)]
pub enum UpError {
    #[error("kind cluster: {0}")]
    Kind(#[source] Box<crate::Error>),
    #[error("GKE cluster: {0}")]
    Gke(#[source] Box<crate::Error>),
    #[error("creating {}: {error}", path.display())]
    CreateDir { path: PathBuf, error: std::io::Error },
    #[error(transparent)]
    Connect(Box<KubeError>),
    #[error("marking the nodes with their pools and prices: {0}")]
    Mark(#[source] Box<KubeError>),
    #[error(transparent)]
    Deploy(Box<crate::Error>),
    #[error("{0}")]
    Input(String),
    #[error("the local control plane with real nodes: {0}")]
    Local(#[source] Box<crate::Error>),
    #[error("starting the async runtime: {0}")]
    Runtime(#[source] std::io::Error),
}

impl UpError {
    /// Whether the user's input is at fault (exit code 2).
    pub fn is_input_error(&self) -> bool {
        match self {
            UpError::Kind(e) => e.is_input_error(),
            UpError::Gke(e) => e.is_input_error(),
            UpError::Deploy(e) => e.is_input_error(),
            UpError::Connect(e) => e.is_input_error(),
            UpError::Local(e) => e.is_input_error(),
            UpError::Input(_) => true,
            UpError::CreateDir { .. } | UpError::Mark(_) | UpError::Runtime(_) => false,
        }
    }
}

/// Creates the kind cluster of `plan` for a scenario with `nodes`, deploys the scheduler from `repo`'s
/// kind overlay and connects at `rate`. `interrupt` (Ctrl-C) stops between commands; a failure deletes
/// what was made.
pub fn kind(
    plan: KindPlan,
    nodes: &[NodeSpec],
    repo: &Path,
    runner: Arc<CommandRunner>,
    interrupt: &AtomicBool,
    runtime: &tokio::runtime::Runtime,
    rate: ClientRate,
) -> crate::Result<Provisioned> {
    let cluster = KindCluster::up(plan, runner.clone(), Some(interrupt)).map_err(|e| UpError::Kind(Box::new(e)))?;
    let plan = cluster.plan().clone();
    let (client, admin) = connect_admin(runtime, Some(plan.kubeconfig_path()), Some(plan.context()), rate)?;
    let marks: Vec<NodeMark> = plan
        .worker_names()
        .into_iter()
        .zip(&plan.workers)
        .map(|(node, spec)| NodeMark {
            node,
            pool: spec.pool.name.clone(),
            hourly_price: spec.pool.hourly_price,
        })
        .collect();
    let images = plan.opts.images.clone();
    deploy_and_mark(
        runtime,
        &admin,
        &scheduler_deploy::overlay_dir(repo, "kind"),
        &images,
        &marks,
    )?;
    let placement: Vec<Option<String>> = plan
        .placement
        .iter()
        .map(|p| match p {
            Placement::Worker(name) => Some(name.clone()),
            Placement::Emulated => None,
        })
        .collect();
    let made = Made::Kind(cluster);
    let facts = ProvisionFacts {
        kind: "kind",
        cluster_name: Some(plan.opts.name.clone()),
        context: Some(plan.context()),
        created: true,
        kept: plan.opts.keep,
        node_pools: pool_facts(nodes, &placement, None),
        images: images.clone(),
        in_cluster_arm: made.in_cluster_arm(),
        node_faults: kind_fault_line(plan.opts.fault_mode).to_string(),
        commands: runner.commands().iter().map(|c| c.shell()).collect(),
    };
    let cluster = RealCluster {
        placement,
        nodes: nodes.to_vec(),
        selector: kube_backend::labels::POOL.to_string(),
        images,
        faults: FaultPlan::Kind(plan.opts.fault_mode),
        runner,
        made,
    };
    Ok(Provisioned {
        admin,
        client,
        facts,
        cluster,
    })
}

/// How to reach (or make) the GKE cluster of a scenario.
#[derive(Debug, Clone)]
pub struct GkeTarget {
    pub plan: GkePlan,
    /// without `provision`: the kubeconfig and context of the existing cluster
    pub kubeconfig: Option<PathBuf>,
    pub context: Option<String>,
    /// the registry holding the scheduler and workload images
    pub image_registry: String,
    /// play node failures by stopping VMs (else by cordoning)
    pub allow_vm_faults: bool,
    /// the zone of nodes without a zone label
    pub zone: Option<String>,
    /// for the cost estimate printed before a cluster is made: the runs, each this long at this time scale
    pub runs: u64,
    pub scenario_seconds: f64,
    pub time_scale: f64,
}

/// Checks (and with `plan.opts.provision` first creates) the GKE cluster for a scenario with `nodes`,
/// deploys the scheduler from `repo`'s GKE overlay and connects at `rate`.
pub fn gke(
    target: GkeTarget,
    nodes: &[NodeSpec],
    repo: &Path,
    runner: Arc<CommandRunner>,
    runtime: &tokio::runtime::Runtime,
    rate: ClientRate,
) -> crate::Result<Provisioned> {
    let GkeTarget { plan, .. } = &target;
    let provision = plan.opts.provision;
    let gke_cluster = if provision {
        let cost = gke::estimate(&plan.needs, target.runs, target.scenario_seconds, target.time_scale);
        schedlab_core::noteln!("{}", cost.render());
        if let Some(dir) = plan.opts.kubeconfig.parent() {
            std::fs::create_dir_all(dir).map_err(|error| UpError::CreateDir {
                path: dir.to_path_buf(),
                error,
            })?;
        }
        schedlab_core::noteln!("creating GKE cluster {} (several minutes)", plan.opts.cluster_name);
        Some(GkeCluster::create(plan.clone(), runner.clone()).map_err(|e| UpError::Gke(Box::new(e)))?)
    } else {
        None
    };
    let kubeconfig = if provision {
        Some(plan.opts.kubeconfig.clone())
    } else {
        target.kubeconfig.clone()
    };
    let (client, admin) = connect_admin(runtime, kubeconfig, target.context.clone(), rate)?;
    let found = runtime
        .block_on(gke::nodes::list_nodes(&admin))
        .map_err(|e| UpError::Connect(Box::new(e)))?;
    let matches = gke::check_pools(&plan.needs, &found).map_err(|e| UpError::Gke(Box::new(e)))?;
    let intended = gke::pools::intended_nodes(nodes, &matches);
    let marks: Vec<NodeMark> = matches
        .iter()
        .flat_map(|m| {
            m.nodes.iter().map(|node| NodeMark {
                node: node.clone(),
                pool: m.pool.clone(),
                hourly_price: m.hourly_price,
            })
        })
        .collect();
    let images = Images::in_registry(&target.image_registry);
    deploy_and_mark(
        runtime,
        &admin,
        &scheduler_deploy::overlay_dir(repo, "gke"),
        &images,
        &marks,
    )?;
    let faults = if target.allow_vm_faults {
        let zones = found
            .iter()
            .filter_map(|n| {
                n.zone
                    .clone()
                    .or_else(|| target.zone.clone())
                    .map(|z| (n.name.clone(), z))
            })
            .collect();
        FaultPlan::Vm { zones }
    } else {
        FaultPlan::Cordon
    };
    let placement: Vec<Option<String>> = intended.into_iter().map(Some).collect();
    let made = Made::Gke(gke_cluster);
    let facts = ProvisionFacts {
        kind: "gke",
        cluster_name: provision.then(|| plan.opts.cluster_name.clone()),
        context: target.context.clone(),
        created: provision,
        kept: provision && plan.opts.keep,
        node_pools: pool_facts(nodes, &placement, Some(&matches)),
        images: images.clone(),
        in_cluster_arm: made.in_cluster_arm(),
        node_faults: gke_fault_line(target.allow_vm_faults).to_string(),
        commands: runner.commands().iter().map(|c| c.shell()).collect(),
    };
    let cluster = RealCluster {
        placement,
        nodes: nodes.to_vec(),
        selector: gke::pools::selector(&matches),
        images,
        faults,
        runner,
        made,
    };
    Ok(Provisioned {
        admin,
        client,
        facts,
        cluster,
    })
}

/// How to play a scenario on real nodes of this machine.
#[derive(Debug, Clone)]
pub struct LocalTarget {
    pub flag: crate::kubelets::scenario::RealNodesFlag,
    /// the programs of the workload and scheduler images
    pub programs: crate::kubelets::PodPrograms,
    /// Ctrl-C while the nodes come up
    pub cancel: Arc<AtomicBool>,
    /// the runs have the in-cluster scheduler's arm: deploy it from this
    /// repository's local overlay (`deploy/kustomize/overlays/local`)
    pub scheduler_repo: Option<PathBuf>,
}

/// How the manifest names the way node faults are played on real nodes of this machine.
pub const LOCAL_FAULT_LINE: &str =
    "stop the node's kubelet; start it again to recover (DegradeNode and KillPod are not played)";

/// Checks real nodes for a scenario of `nodes` nodes before anything
/// starts: `flag`'s count against them, and with `scheduler_repo` (the
/// runs have the in-cluster scheduler's arm) its local overlay, which is
/// returned.
pub fn check_local(
    flag: crate::kubelets::scenario::RealNodesFlag,
    nodes: usize,
    scheduler_repo: Option<&Path>,
) -> crate::Result<Option<PathBuf>> {
    flag.check(nodes).map_err(UpError::Input)?;
    let overlay = scheduler_repo.map(|repo| scheduler_deploy::overlay_dir(repo, "local"));
    if let Some(overlay) = overlay.as_deref().filter(|o| !o.join("kustomization.yaml").is_file()) {
        return Err(UpError::Input(format!(
            "the in-cluster scheduler's manifests are not at {} (the agmarl arm on real nodes runs from them): \
             run from the schedlab repository or give --repo",
            overlay.display()
        ))
        .into());
    }
    Ok(overlay)
}

/// Brings a private local control plane up with real nodes for a scenario
/// with `nodes` (its first `target.flag.count`, made to look like them: see
/// [`crate::kubelets::scenario`]), labels and prices them as their pools,
/// and connects at `rate`. Everything is stopped when the returned
/// cluster is dropped, or on a failure.
pub fn local(
    target: LocalTarget,
    nodes: &[NodeSpec],
    runtime: &tokio::runtime::Runtime,
    rate: ClientRate,
) -> crate::Result<Provisioned> {
    let overlay = check_local(target.flag, nodes.len(), target.scheduler_repo.as_deref())?;
    let placement = target.flag.placement(nodes.len());
    let real_specs = &nodes[..target.flag.count];
    let mut opts = crate::local::LocalOptions::private("real-nodes")?;
    opts.real_nodes = target.flag.count;
    opts.real_node_tuning = crate::kubelets::scenario::tunings(real_specs)?;
    opts.pod_programs = Some(target.programs);
    opts.cancel = Some(target.cancel);
    let plane = crate::local::ScopedCluster::up(&opts).map_err(|e| UpError::Local(Box::new(e)))?;
    let (client, admin) = connect_admin(runtime, Some(plane.admin_kubeconfig().to_path_buf()), None, rate)?;
    runtime
        .block_on(crate::kubelets::scenario::label_like(&admin, real_specs))
        .map_err(|e| UpError::Mark(Box::new(e)))?;
    let images = Images::dev();
    if let Some(overlay) = &overlay {
        let env = scheduler_deploy::loopback_apiserver(plane.server()).map_err(|e| UpError::Deploy(Box::new(e)))?;
        runtime.block_on(deploy_scheduler(&admin, overlay, &images, &env))?;
    }
    let hierarchies = crate::kubelets::cgroups::hierarchies()?;
    let layouts = (0..target.flag.count)
        .map(|i| crate::kubelets::NodeLayout::new(&opts.state_dir, i))
        .collect();
    let made = Made::Local {
        plane,
        scheduler: overlay.is_some(),
    };
    let facts = ProvisionFacts {
        kind: "local",
        cluster_name: None,
        context: None,
        created: true,
        kept: false,
        node_pools: pool_facts(nodes, &placement, None),
        images: images.clone(),
        in_cluster_arm: made.in_cluster_arm(),
        node_faults: LOCAL_FAULT_LINE.to_string(),
        commands: Vec::new(),
    };
    let cluster = RealCluster {
        placement,
        nodes: nodes.to_vec(),
        selector: kube_backend::labels::POOL.to_string(),
        images,
        faults: FaultPlan::Kubelet {
            nodes: layouts,
            hierarchies,
        },
        runner: Arc::new(CommandRunner::execute()),
        made,
    };
    Ok(Provisioned {
        admin,
        client,
        facts,
        cluster,
    })
}

/// Connects as the admin of a cluster made ready for the runs, at the runs' client rate.
fn connect_admin(
    runtime: &tokio::runtime::Runtime,
    kubeconfig: Option<PathBuf>,
    context: Option<String>,
    rate: ClientRate,
) -> Result<(ClientOptions, ApiClient), UpError> {
    let client = ClientOptions {
        kubeconfig,
        context,
        qps: rate.qps,
        burst: rate.burst,
        ..ClientOptions::default()
    };
    let admin = runtime
        .block_on(ApiClient::connect(&client))
        .map_err(|e| UpError::Connect(Box::new(e)))?;
    Ok((client, admin))
}

fn deploy_and_mark(
    runtime: &tokio::runtime::Runtime,
    admin: &ApiClient,
    overlay: &Path,
    images: &Images,
    marks: &[NodeMark],
) -> Result<(), UpError> {
    runtime.block_on(async {
        gke::nodes::mark_nodes(admin, marks)
            .await
            .map_err(|e| UpError::Mark(Box::new(e)))?;
        deploy_scheduler(admin, overlay, images, &[]).await
    })
}

/// Deploys the in-cluster scheduler from `overlay` and waits until it is ready.
async fn deploy_scheduler(
    admin: &ApiClient,
    overlay: &Path,
    images: &Images,
    env: &[(&str, String)],
) -> Result<(), UpError> {
    let deploy_failed = |e| UpError::Deploy(Box::new(e));
    scheduler_deploy::deploy(admin, overlay, images, env)
        .await
        .map_err(deploy_failed)?;
    schedlab_core::noteln!("waiting for the in-cluster scheduler to be ready");
    scheduler_deploy::wait_ready(admin, scheduler_deploy::READY_TIMEOUT)
        .await
        .map_err(deploy_failed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gke::GkeError;

    #[test]
    fn the_users_input_is_told_from_the_rest_through_the_boxes() {
        let input = UpError::Gke(Box::new(GkeError::NoNodes.into()));
        let not_input = UpError::Gke(Box::new(
            GkeError::Command(crate::external::ExternalError::Failed {
                command: "gcloud container clusters create".into(),
                why: "creating the cluster".into(),
                code: Some(1),
                tail: String::new(),
            })
            .into(),
        ));
        assert!(input.is_input_error());
        assert!(!not_input.is_input_error());
        assert!(
            input.to_string().starts_with("GKE cluster: the scenario has no nodes"),
            "{input}"
        );
    }
}
