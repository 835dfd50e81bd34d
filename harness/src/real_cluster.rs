//! `--cluster kind|gke`: clusters with real kubelets. Checks the flags,
//! plans the cluster (kind config, every external command, the GKE cost
//! estimate), prints the plan on `--dry-run`, else provisions, deploys the
//! in-cluster agmarl scheduler and connects, returning a [`KubeTarget`]
//! whose runs use the cluster's own nodes, the workload image and node
//! faults played on real nodes (docker, cordon, VMs).

use crate::cli::{ClusterKind, KindFault, NodesFrom, ScenarioArgs};
use crate::exit::InputError;
use crate::kube_play::{ClusterFacts, KubeTarget};
use crate::out::outln;
use anyhow::{Context, Result, bail};
use kube_backend::backend::{ClientRate, Connection, FaultPump, KubeBackend, RealNodes};
use kube_backend::emulator::EmulatorCommand;
use kube_backend::run::NodeSource;
use kube_backend::{ApiClient, ClientOptions, objects};
use provisioning::external::CommandRunner;
use provisioning::faults::{self, NodeFaults, PumpOptions};
use provisioning::gke::{self, GkeCluster, GkeFaultMode, GkeFaults, GkeOptions, GkePlan, nodes::NodeMark};
use provisioning::kind::{KindCluster, KindFaultMode, KindFaults, KindOptions, KindPlan, Placement};
use provisioning::scheduler_deploy::{self, Images};
use schedlab_core::NodeSpec;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// The arm the in-cluster scheduler serves: its pods get this scheduler
/// name and the harness runs no bind loop for it.
pub const IN_CLUSTER_ARM: &str = "agmarl";

/// One scenario pool on the cluster, for the manifest.
#[derive(Debug, Clone, Serialize)]
pub struct PoolFact {
    pub pool: String,
    pub machine_type: String,
    pub hourly_price: f64,
    /// scenario nodes of the pool played by real kubelets
    pub real_nodes: Vec<String>,
    /// the GKE node pool that plays it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_pool: Option<String>,
    /// scenario nodes of the pool played by the node emulator (kind beyond its worker cap)
    pub emulated_nodes: usize,
}

/// What the invocation manifest says about a kind or GKE cluster.
#[derive(Debug, Clone, Serialize)]
pub struct ProvisionFacts {
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// whether schedlab created the cluster (and deletes it unless kept)
    pub created: bool,
    pub kept: bool,
    pub node_pools: Vec<PoolFact>,
    pub images: Images,
    /// the arm the in-cluster scheduler serves
    pub in_cluster_arm: &'static str,
    pub node_faults: String,
    /// every external command run to provision (shell-quoted)
    pub commands: Vec<String>,
}

/// How a run's node faults are played.
#[derive(Debug, Clone)]
enum FaultPlan {
    Kind(KindFaultMode),
    Cordon,
    Vm { zones: HashMap<String, String> },
}

/// Everything a run on kind or GKE needs beyond a plain kubeconfig cluster.
pub struct RealCluster {
    /// per scenario node: the real node's name, or None for an emulated one
    placement: Vec<Option<String>>,
    /// the scenario's nodes (to check each run's timeline against)
    nodes: Vec<NodeSpec>,
    pub selector: String,
    pub images: Images,
    faults: FaultPlan,
    runner: Arc<CommandRunner>,
    /// deleted when dropped (after the runs)
    _kind: Option<KindCluster>,
    _gke: Option<GkeCluster>,
}

impl std::fmt::Debug for RealCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealCluster")
            .field("selector", &self.selector)
            .field("images", &self.images)
            .finish_non_exhaustive()
    }
}

impl RealNodes for RealCluster {
    /// Whether the in-cluster scheduler serves `arm`.
    fn in_cluster(&self, arm: &str) -> bool {
        arm == IN_CLUSTER_ARM
    }

    fn workload_image(&self) -> String {
        self.images.workload.clone()
    }

    /// The timeline's nodes that the node emulator plays (kind beyond its cap), with their NodeIds.
    fn emulated(&self) -> Vec<(schedlab_core::NodeId, NodeSpec)> {
        // a scenario's nodes do not depend on the seed (workloads builds them
        // from the model alone), so the cluster made for the first seed
        // serves them all
        self.placement
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_none())
            .map(|(i, _)| (schedlab_core::NodeId(i as u32), self.nodes[i].clone()))
            .collect()
    }

    /// Starts the run's fault pump: real nodes' faults go to docker, a
    /// cordon or a VM; emulated nodes' to `emulator`.
    fn start_faults(
        &self,
        admin: &ApiClient,
        run: &str,
        emulator: Option<UnboundedSender<EmulatorCommand>>,
    ) -> FaultPump {
        let real: Vec<String> = self.placement.iter().flatten().cloned().collect();
        let sink: Arc<dyn NodeFaults> = match &self.faults {
            FaultPlan::Kind(mode) => Arc::new(KindFaults::new(self.runner.clone(), *mode, real.clone())),
            FaultPlan::Cordon => Arc::new(GkeFaults::new(
                GkeFaultMode::Cordon {
                    api: admin.clone(),
                    namespace: run.to_string(),
                },
                real.clone(),
            )),
            FaultPlan::Vm { zones } => Arc::new(GkeFaults::new(
                GkeFaultMode::Vm {
                    runner: self.runner.clone(),
                    zones: zones.clone(),
                },
                real.clone(),
            )),
        };
        // every node as the run names it: emulated ones are objects of the run
        let intended: Vec<String> = self
            .placement
            .iter()
            .zip(&self.nodes)
            .map(|(p, spec)| p.clone().unwrap_or_else(|| objects::node_name(run, spec)))
            .collect();
        let emulated: HashSet<String> = self
            .placement
            .iter()
            .zip(&intended)
            .filter(|(p, _)| p.is_none())
            .map(|(_, name)| name.clone())
            .collect();
        let opts = PumpOptions {
            rename: faults::rename_map(&intended),
            emulator: emulator.map(|e| (e, emulated)),
        };
        let (sender, handle) = faults::spawn_pump(sink, opts);
        let stats = tokio::spawn(async move {
            let stats = handle.await.map_err(|e| e.to_string())?;
            Ok(serde_json::to_value(&stats).unwrap_or(serde_json::Value::Null))
        });
        FaultPump { sender, stats }
    }
}

/// The kubeconfig kubectl would use: the first of KUBECONFIG's files, else ~/.kube/config.
fn default_kubeconfig() -> Option<PathBuf> {
    if let Some(list) = std::env::var_os("KUBECONFIG")
        && !list.is_empty()
    {
        return std::env::split_paths(&list).find(|p| p.exists());
    }
    let home = std::env::var_os("HOME")?;
    Some(PathBuf::from(home).join(".kube").join("config"))
}

/// What the runs will do, for the plan.
fn runs_line(arms: &[String], seeds: usize, images: &Images, faults: &str) -> String {
    let who: Vec<String> = arms
        .iter()
        .map(|arm| {
            let by = match arm.as_str() {
                "default" => "the cluster's kube-scheduler",
                a if a == IN_CLUSTER_ARM => "the in-cluster agmarl-scheduler",
                _ => "schedlab's bind loop",
            };
            format!("{arm} by {by}")
        })
        .collect();
    format!(
        "play {} runs ({} arms × {seeds} seeds): {}; pods run {}; node faults: {faults}",
        arms.len() * seeds,
        arms.len(),
        who.join(", "),
        images.workload
    )
}

fn check_common(args: &ScenarioArgs) -> Result<()> {
    if args.nodes != NodesFrom::Emulated || args.node_selector.is_some() {
        bail!(InputError(
            "--nodes and --node-selector are for --cluster kube; kind and gke use the nodes made or checked for the scenario"
                .into()
        ));
    }
    if args.local_state.is_some() {
        bail!(InputError("--local-state is for --cluster local".into()));
    }
    Ok(())
}

fn check_kind_flags(args: &ScenarioArgs) -> Result<()> {
    if args.provision || args.zone.is_some() || args.allow_vm_faults || args.image_registry.is_some() {
        bail!(InputError(
            "--provision, --zone, --allow-vm-faults and --image-registry are for --cluster gke".into()
        ));
    }
    if args.kubeconfig.is_some() || args.context.is_some() {
        bail!(InputError(
            "--kubeconfig and --context are for --cluster kube|gke; --cluster kind makes its own".into()
        ));
    }
    Ok(())
}

fn check_gke_flags(args: &ScenarioArgs) -> Result<()> {
    if args.kind_extra_emulated || args.kind_node_image.is_some() || args.no_image_build {
        bail!(InputError(
            "--kind-extra-emulated, --kind-node-image and --no-image-build are for --cluster kind".into()
        ));
    }
    if args.keep && !args.provision {
        bail!(InputError(
            "--keep is for --provision: without it schedlab never creates or deletes a GKE cluster".into()
        ));
    }
    if args.image_registry.as_deref().is_none_or(|r| r.trim().is_empty()) {
        bail!(InputError(
            "--cluster gke needs --image-registry: the registry holding agmarl-scheduler:dev and workload:dev".into()
        ));
    }
    if args.provision && (args.kubeconfig.is_some() || args.context.is_some()) {
        bail!(InputError(
            "--provision connects to the cluster it creates; drop --kubeconfig/--context".into()
        ));
    }
    Ok(())
}

/// A folder of its own for the kind config and kubeconfig (kept with --keep).
fn work_dir(kind: &str, name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("schedlab-{kind}-{name}-{}", std::process::id()))
}

fn kind_plan(args: &ScenarioArgs, nodes: &[NodeSpec]) -> Result<KindPlan> {
    let mut opts = KindOptions::new(&args.kind_name, &work_dir("kind", &args.kind_name), &args.repo);
    opts.max_workers = args.kind_max_workers;
    opts.extra_emulated = args.kind_extra_emulated;
    opts.keep = args.keep;
    opts.node_image = args.kind_node_image.clone();
    opts.build_images = !args.no_image_build;
    opts.fault_mode = match args.kind_fault {
        KindFault::Stop => KindFaultMode::Stop,
        KindFault::Pause => KindFaultMode::Pause,
    };
    Ok(KindPlan::new(nodes, opts)?)
}

fn gke_plan(args: &ScenarioArgs, nodes: &[NodeSpec]) -> Result<GkePlan> {
    let opts = GkeOptions {
        cluster_name: args.gke_cluster_name.clone(),
        zone: args.zone.clone(),
        provision: args.provision,
        keep: args.keep,
        kubeconfig: work_dir("gke", &args.gke_cluster_name).join("kubeconfig"),
    };
    if args.allow_vm_faults && !args.provision && args.zone.is_none() {
        tracing::debug!("VM faults will use each node's zone label");
    }
    Ok(GkePlan::new(gke::pool_needs(nodes), opts)?)
}

fn kind_fault_line(mode: KindFaultMode) -> &'static str {
    match mode {
        KindFaultMode::Stop => "docker stop/start <worker> (DegradeNode and KillPod are not played)",
        KindFaultMode::Pause => "docker pause/unpause <worker> (DegradeNode and KillPod are not played)",
    }
}

fn gke_fault_line(vm: bool) -> &'static str {
    if vm {
        "gcloud compute instances stop/start <node> --zone <its zone> --quiet (DegradeNode and KillPod are not played)"
    } else {
        "cordon the node and delete the run's pods on it; uncordon to recover (DegradeNode and KillPod are not played)"
    }
}

/// Prints the plan of a `--dry-run` (nothing is executed or written).
pub fn print_dry_run(
    args: &ScenarioArgs,
    scenario: &workloads::Scenario,
    arms: &[String],
    seeds: &[u64],
) -> Result<()> {
    check_common(args)?;
    let timeline = scenario.expand(seeds.first().copied().unwrap_or(1));
    outln!(
        "Dry run of `schedlab scenario {} --cluster {}`: nothing is executed, nothing is written.",
        scenario.name(),
        args.cluster.name()
    )?;
    match args.cluster {
        ClusterKind::Kind => {
            check_kind_flags(args)?;
            let plan = kind_plan(args, &timeline.nodes)?;
            let images = plan.opts.images.clone();
            outln!(
                "\nkind cluster {}: a control plane and {} workers{}",
                plan.opts.name,
                plan.workers.len(),
                if plan.emulated.is_empty() {
                    String::new()
                } else {
                    format!(", {} nodes emulated by the node emulator", plan.emulated.len())
                }
            )?;
            outln!(
                "\nkind config ({}):\n{}",
                plan.config_path().display(),
                plan.config_yaml
            )?;
            let deploy = scheduler_deploy::plan(&scheduler_deploy::overlay_dir(&args.repo, "kind"), &images);
            let runs = runs_line(arms, seeds.len(), &images, kind_fault_line(plan.opts.fault_mode));
            outln!("Plan:\n{}", plan.plan(deploy, &runs).render())?;
        }
        ClusterKind::Gke => {
            check_gke_flags(args)?;
            let plan = gke_plan(args, &timeline.nodes)?;
            let images = Images::in_registry(args.image_registry.as_deref().unwrap_or_default());
            if args.provision {
                let cost = gke::estimate(
                    &plan.needs,
                    (arms.len() * seeds.len()) as u64,
                    timeline.end.as_secs_f64(),
                    args.time_scale,
                );
                outln!("\n{}", cost.render())?;
            }
            let context = if args.provision {
                format!("the new cluster (credentials in {})", plan.opts.kubeconfig.display())
            } else {
                let config = args.kubeconfig.clone().or_else(default_kubeconfig);
                format!(
                    "context {} of kubeconfig {}",
                    args.context.as_deref().unwrap_or("(current)"),
                    config.map_or_else(|| "(none found)".to_string(), |p| p.display().to_string())
                )
            };
            let deploy = scheduler_deploy::plan(&scheduler_deploy::overlay_dir(&args.repo, "gke"), &images);
            let runs = runs_line(arms, seeds.len(), &images, gke_fault_line(args.allow_vm_faults));
            outln!("Plan:\n{}", plan.plan(&context, deploy, &runs).render())?;
        }
        other => bail!(InputError(format!(
            "--dry-run is for --cluster kind|gke, not {}",
            other.name()
        ))),
    }
    Ok(())
}

/// Checks the flags before anything is written (the scenario's nodes against kind's limits, ...).
pub fn check(args: &ScenarioArgs, scenario: &workloads::Scenario, seeds: &[u64], arms: &[String]) -> Result<()> {
    check_common(args)?;
    let timeline = scenario.expand(seeds.first().copied().unwrap_or(1));
    match args.cluster {
        ClusterKind::Kind => {
            check_kind_flags(args)?;
            kind_plan(args, &timeline.nodes)?;
        }
        ClusterKind::Gke => {
            check_gke_flags(args)?;
            gke_plan(args, &timeline.nodes)?;
            if !args.provision {
                let config = args.kubeconfig.clone().or_else(default_kubeconfig);
                if !config.as_deref().is_some_and(Path::exists) {
                    bail!(InputError(format!(
                        "--cluster gke: no kubeconfig ({}); give --kubeconfig, set KUBECONFIG, or use --provision",
                        config.map_or_else(|| "none found".to_string(), |p| p.display().to_string())
                    )));
                }
            }
        }
        _ => {}
    }
    if args.checkpoint.is_some() && arms.iter().any(|a| a == IN_CLUSTER_ARM) {
        bail!(InputError(format!(
            "--checkpoint: the {IN_CLUSTER_ARM} arm runs in the cluster with its image's bundled checkpoint; \
             drop --checkpoint or the {IN_CLUSTER_ARM} arm"
        )));
    }
    Ok(())
}

fn deploy_and_mark(
    runtime: &tokio::runtime::Runtime,
    admin: &ApiClient,
    overlay: &Path,
    images: &Images,
    marks: &[NodeMark],
) -> Result<()> {
    runtime.block_on(async {
        gke::nodes::mark_nodes(admin, marks)
            .await
            .context("marking the nodes with their pools and prices")?;
        scheduler_deploy::deploy(admin, overlay, images).await?;
        eprintln!("waiting for the in-cluster scheduler to be ready");
        scheduler_deploy::wait_ready(admin, scheduler_deploy::READY_TIMEOUT).await?;
        Ok(())
    })
}

fn connect_admin(runtime: &tokio::runtime::Runtime, opts: &ClientOptions) -> Result<ApiClient> {
    Ok(runtime.block_on(ApiClient::connect(opts))?)
}

/// Polls the Ctrl-C flag and cancels the runs when it is raised.
fn forward_interrupt(runtime: &tokio::runtime::Runtime, flag: Arc<AtomicBool>, cancel: CancellationToken) {
    runtime.spawn(async move {
        loop {
            if flag.load(Ordering::SeqCst) {
                eprintln!("interrupted: tearing the run down and deleting what was created");
                cancel.cancel();
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
}

/// Provisions (kind; GKE with --provision), deploys the scheduler and connects.
pub fn connect(args: &ScenarioArgs, scenario: &workloads::Scenario, seeds: &[u64]) -> Result<KubeTarget> {
    let timeline = scenario.expand(seeds.first().copied().unwrap_or(1));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let cancel = CancellationToken::new();
    // Ctrl-C during provisioning must not kill schedlab before its guards delete the cluster.
    let interrupt = provisioning::local::cancel_on_interrupt()?;
    forward_interrupt(&runtime, interrupt.clone(), cancel.clone());
    let runner = Arc::new(CommandRunner::execute());
    let rate = ClientRate {
        qps: args.qps.unwrap_or(kube_backend::client::CLIENT_GO_QPS),
        burst: args.burst.unwrap_or(kube_backend::client::CLIENT_GO_BURST),
    };
    match args.cluster {
        ClusterKind::Kind => {
            let plan = kind_plan(args, &timeline.nodes)?;
            eprintln!(
                "creating kind cluster {} ({} workers); building the images takes minutes the first time",
                plan.opts.name,
                plan.workers.len()
            );
            let cluster = KindCluster::up(plan, runner.clone(), Some(&interrupt)).context("kind cluster")?;
            let plan = cluster.plan().clone();
            let opts = ClientOptions {
                kubeconfig: Some(plan.kubeconfig_path()),
                context: Some(plan.context()),
                qps: rate.qps,
                burst: rate.burst,
                ..ClientOptions::default()
            };
            let admin = connect_admin(&runtime, &opts)?;
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
                &runtime,
                &admin,
                &scheduler_deploy::overlay_dir(&args.repo, "kind"),
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
            let facts = ProvisionFacts {
                kind: "kind",
                cluster_name: Some(plan.opts.name.clone()),
                context: Some(plan.context()),
                created: true,
                kept: plan.opts.keep,
                node_pools: pool_facts(&timeline.nodes, &placement, None),
                images: images.clone(),
                in_cluster_arm: IN_CLUSTER_ARM,
                node_faults: kind_fault_line(plan.opts.fault_mode).to_string(),
                commands: runner.commands().iter().map(|c| c.shell()).collect(),
            };
            let real = RealCluster {
                placement,
                nodes: timeline.nodes.clone(),
                selector: kube_backend::labels::POOL.to_string(),
                images,
                faults: FaultPlan::Kind(plan.opts.fault_mode),
                runner,
                _kind: Some(cluster),
                _gke: None,
            };
            Ok(target(args, admin, opts, facts, real, rate, runtime, cancel))
        }
        ClusterKind::Gke => {
            let plan = gke_plan(args, &timeline.nodes)?;
            let gke_cluster = if args.provision {
                let cost = gke::estimate(
                    &plan.needs,
                    (args.arms.len() as u64) * seeds.len() as u64,
                    timeline.end.as_secs_f64(),
                    args.time_scale,
                );
                eprintln!("{}", cost.render());
                if let Some(dir) = plan.opts.kubeconfig.parent() {
                    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
                }
                eprintln!("creating GKE cluster {} (several minutes)", plan.opts.cluster_name);
                Some(GkeCluster::create(plan.clone(), runner.clone()).context("GKE cluster")?)
            } else {
                None
            };
            let opts = ClientOptions {
                kubeconfig: if args.provision {
                    Some(plan.opts.kubeconfig.clone())
                } else {
                    args.kubeconfig.clone()
                },
                context: args.context.clone(),
                qps: rate.qps,
                burst: rate.burst,
                ..ClientOptions::default()
            };
            let admin = connect_admin(&runtime, &opts)?;
            let found = runtime.block_on(gke::nodes::list_nodes(&admin))?;
            let matches = gke::check_pools(&plan.needs, &found)?;
            let intended = gke::pools::intended_nodes(&timeline.nodes, &matches);
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
            let images = Images::in_registry(args.image_registry.as_deref().unwrap_or_default());
            deploy_and_mark(
                &runtime,
                &admin,
                &scheduler_deploy::overlay_dir(&args.repo, "gke"),
                &images,
                &marks,
            )?;
            let faults = if args.allow_vm_faults {
                let zones = found
                    .iter()
                    .filter_map(|n| {
                        n.zone
                            .clone()
                            .or_else(|| args.zone.clone())
                            .map(|z| (n.name.clone(), z))
                    })
                    .collect();
                FaultPlan::Vm { zones }
            } else {
                FaultPlan::Cordon
            };
            let placement: Vec<Option<String>> = intended.into_iter().map(Some).collect();
            let facts = ProvisionFacts {
                kind: "gke",
                cluster_name: args.provision.then(|| plan.opts.cluster_name.clone()),
                context: args.context.clone(),
                created: args.provision,
                kept: args.provision && args.keep,
                node_pools: pool_facts(&timeline.nodes, &placement, Some(&matches)),
                images: images.clone(),
                in_cluster_arm: IN_CLUSTER_ARM,
                node_faults: gke_fault_line(args.allow_vm_faults).to_string(),
                commands: runner.commands().iter().map(|c| c.shell()).collect(),
            };
            let real = RealCluster {
                placement,
                nodes: timeline.nodes.clone(),
                selector: gke::pools::selector(&matches),
                images,
                faults,
                runner,
                _kind: None,
                _gke: gke_cluster,
            };
            Ok(target(args, admin, opts, facts, real, rate, runtime, cancel))
        }
        other => bail!("{} is not a kind or GKE cluster", other.name()),
    }
}

fn pool_facts(nodes: &[NodeSpec], placement: &[Option<String>], matches: Option<&[gke::PoolMatch]>) -> Vec<PoolFact> {
    let mut out: Vec<PoolFact> = Vec::new();
    for (spec, place) in nodes.iter().zip(placement) {
        let i = match out.iter().position(|p| p.pool == spec.pool.name) {
            Some(i) => i,
            None => {
                out.push(PoolFact {
                    pool: spec.pool.name.clone(),
                    machine_type: spec.pool.machine_type.clone(),
                    hourly_price: spec.pool.hourly_price,
                    real_nodes: Vec::new(),
                    node_pool: matches
                        .and_then(|ms| ms.iter().find(|m| m.pool == spec.pool.name))
                        .map(|m| m.node_pool.clone()),
                    emulated_nodes: 0,
                });
                out.len() - 1
            }
        };
        match place {
            Some(name) => out[i].real_nodes.push(name.clone()),
            None => out[i].emulated_nodes += 1,
        }
    }
    out
}

#[allow(clippy::too_many_arguments)]
fn target(
    args: &ScenarioArgs,
    admin: ApiClient,
    opts: ClientOptions,
    provisioned: ProvisionFacts,
    real: RealCluster,
    rate: ClientRate,
    runtime: tokio::runtime::Runtime,
    cancel: CancellationToken,
) -> KubeTarget {
    let facts = ClusterFacts {
        server: admin.server().to_string(),
        time_scale: args.time_scale,
        nodes: if real.placement.iter().all(Option::is_some) {
            "existing"
        } else {
            "existing+emulated"
        },
        default_scheduler_client: None,
        project_scheduler_client: rate,
        provisioned: Some(provisioned),
    };
    let backend = KubeBackend::new(
        Connection {
            name: args.cluster.name(),
            scheduler: admin.clone(),
            admin,
            admin_kubeconfig: opts.kubeconfig,
            admin_context: opts.context,
            time_scale: args.time_scale,
            project_rate: rate,
            nodes: NodeSource::Existing {
                selector: real.selector.clone(),
            },
            real: Some(Box::new(real)),
            runtime,
        },
        cancel,
    );
    KubeTarget {
        backend,
        facts,
        _plane: None,
    }
}

/// The same dry-run plan text the CLI prints, for tests of this module.
#[cfg(test)]
fn plan_for(args: &ScenarioArgs, nodes: &[NodeSpec]) -> Result<provisioning::external::CommandPlan> {
    let plan = kind_plan(args, nodes)?;
    Ok(plan.plan(Default::default(), "runs"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(extra: &[&str]) -> ScenarioArgs {
        let mut argv = vec!["schedlab", "scenario", "churn"];
        argv.extend_from_slice(extra);
        match crate::cli::Cli::parse_from(argv).command {
            crate::cli::Command::Scenario(a) => *a,
            _ => unreachable!("a scenario command"),
        }
    }

    #[test]
    fn kind_flags_reach_the_plan() {
        let scenario = workloads::load("churn", &["nodes=4".to_string()]).unwrap();
        let nodes = scenario.expand(1).nodes;
        let a = args(&["--cluster", "kind", "--kind-name", "lab", "--keep", "--no-image-build"]);
        let plan = plan_for(&a, &nodes).unwrap();
        let commands: Vec<String> = plan.commands().iter().map(|c| c.shell()).collect();
        assert_eq!(commands.len(), 3, "{commands:?}");
        assert!(
            commands[0].starts_with("kind create cluster --name lab"),
            "{commands:?}"
        );
        assert!(commands.iter().all(|c| !c.contains("delete")));
    }

    #[test]
    fn kind_rejects_gke_flags_and_gke_needs_a_registry() {
        let err = check_kind_flags(&args(&["--cluster", "kind", "--zone", "us-central1-a"])).unwrap_err();
        assert!(err.is::<InputError>());
        let err = check_gke_flags(&args(&["--cluster", "gke"])).unwrap_err();
        assert!(err.to_string().contains("--image-registry"), "{err}");
        let err = check_gke_flags(&args(&["--cluster", "gke", "--image-registry", "r", "--keep"])).unwrap_err();
        assert!(err.to_string().contains("--keep is for --provision"), "{err}");
    }

    #[test]
    fn runs_line_says_who_schedules_each_arm() {
        let arms = ["default", "agmarl", "binpack"].map(String::from);
        let line = runs_line(&arms, 2, &Images::dev(), "docker");
        assert!(line.starts_with("play 6 runs (3 arms × 2 seeds)"), "{line}");
        assert!(line.contains("default by the cluster's kube-scheduler"), "{line}");
        assert!(line.contains("agmarl by the in-cluster agmarl-scheduler"), "{line}");
        assert!(line.contains("binpack by schedlab's bind loop"), "{line}");
        assert!(line.contains("schedlab/workload:dev"), "{line}");
    }

    #[test]
    fn pool_facts_count_real_and_emulated_nodes() {
        let scenario = workloads::load("churn", &["nodes=4".to_string()]).unwrap();
        let nodes = scenario.expand(1).nodes;
        let placement: Vec<Option<String>> = (0..nodes.len()).map(|i| (i < 2).then(|| format!("w{i}"))).collect();
        let facts = pool_facts(&nodes, &placement, None);
        let real: usize = facts.iter().map(|f| f.real_nodes.len()).sum();
        let emulated: usize = facts.iter().map(|f| f.emulated_nodes).sum();
        assert_eq!((real, emulated), (2, nodes.len() - 2));
        assert_eq!(facts[0].pool, nodes[0].pool.name);
    }
}
