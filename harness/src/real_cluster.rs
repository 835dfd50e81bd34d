//! `--cluster kind|gke` and `--cluster local --nodes real:N`: clusters with real kubelets. Checks the flags,
//! turns them into the cluster's plan (kind config, every external command,
//! the GKE cost estimate), prints the plan on `--dry-run`, else has
//! [`provisioning::real_cluster::up`] make the cluster ready and hands it to
//! the kube backend as a [`KubeTarget`].

use crate::cli::{ClusterKind, KindFault, NodesFrom, ScenarioArgs};
use crate::exit::InputError;
use crate::kube_connect::{ClusterFacts, KubeTarget};
use crate::out::outln;
use anyhow::{Context, Result, bail};
use kube_backend::backend::{ClientRate, Connection, KubeBackend};
use kube_backend::run::NodeSource;
use provisioning::external::CommandRunner;
use provisioning::gke::{self, GkeOptions, GkePlan};
use provisioning::kind::{KindFaultMode, KindOptions, KindPlan};
use provisioning::real_cluster::{IN_CLUSTER_ARM, gke_fault_line, kind_fault_line, up};
use provisioning::scheduler_deploy::{self, Images};
use schedlab_core::NodeSpec;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

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
fn runs_line(arms: &[String], external: &BTreeSet<String>, seeds: usize, images: &Images, faults: &str) -> String {
    let who: Vec<String> = arms
        .iter()
        .map(|arm| {
            let by = match arm.as_str() {
                a if external.contains(a) => "the cluster's own scheduler of that name",
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

/// Prints the plan of a `--dry-run` (nothing is executed or written).
pub fn print_dry_run(
    args: &ScenarioArgs,
    scenario: &workloads::Scenario,
    arms: &[String],
    external: &BTreeSet<String>,
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
            let runs = runs_line(
                arms,
                external,
                seeds.len(),
                &images,
                kind_fault_line(plan.opts.fault_mode),
            );
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
            let runs = runs_line(
                arms,
                external,
                seeds.len(),
                &images,
                gke_fault_line(args.allow_vm_faults),
            );
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
    check_in_cluster_arm(args, arms)
}

/// The in-cluster scheduler runs from its image as its manifests start it:
/// flags that would change schedlab's own agmarl arm change nothing there.
pub fn check_in_cluster_arm(args: &ScenarioArgs, arms: &[String]) -> Result<()> {
    if !arms.iter().any(|a| a == IN_CLUSTER_ARM) {
        return Ok(());
    }
    let flags = [
        (
            "--checkpoint",
            args.checkpoint.is_some(),
            "its image's bundled checkpoint",
        ),
        (
            "--agmarl-config",
            args.agmarl_config.is_some(),
            "the configuration its manifests give it",
        ),
    ];
    if let Some((flag, _, what)) = flags.iter().find(|(_, given, _)| *given) {
        bail!(InputError(format!(
            "{flag}: the {IN_CLUSTER_ARM} arm runs in the cluster with {what}; \
             drop {flag} or the {IN_CLUSTER_ARM} arm"
        )));
    }
    Ok(())
}

/// Polls the Ctrl-C flag and cancels the runs when it is raised.
fn forward_interrupt(runtime: &tokio::runtime::Runtime, flag: Arc<AtomicBool>, cancel: CancellationToken) {
    runtime.spawn(async move {
        loop {
            if flag.load(Ordering::SeqCst) {
                crate::out::noteln!("interrupted: tearing the run down and deleting what was created");
                cancel.cancel();
                break;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
}

/// Provisions (kind; GKE with --provision), deploys the scheduler and connects.
pub fn connect(
    args: &ScenarioArgs,
    scenario: &workloads::Scenario,
    seeds: &[u64],
    arms: &[String],
) -> Result<KubeTarget> {
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
    // on the local control plane every scheduler gets the default scheduler's client rate
    let (qps, burst) = match args.cluster {
        ClusterKind::Local => (
            provisioning::local::DEFAULT_CLIENT_QPS,
            provisioning::local::DEFAULT_CLIENT_BURST,
        ),
        _ => (
            kube_backend::client::CLIENT_GO_QPS,
            kube_backend::client::CLIENT_GO_BURST,
        ),
    };
    let rate = ClientRate {
        qps: args.qps.unwrap_or(qps),
        burst: args.burst.unwrap_or(burst),
    };
    let provisioned = match args.cluster {
        ClusterKind::Kind => {
            let plan = kind_plan(args, &timeline.nodes)?;
            crate::out::noteln!(
                "creating kind cluster {} ({} workers); building the images takes minutes the first time",
                plan.opts.name,
                plan.workers.len()
            );
            up::kind(plan, &timeline.nodes, &args.repo, runner, &interrupt, &runtime, rate)?
        }
        ClusterKind::Gke => {
            let target = up::GkeTarget {
                plan: gke_plan(args, &timeline.nodes)?,
                kubeconfig: args.kubeconfig.clone(),
                context: args.context.clone(),
                image_registry: args.image_registry.clone().unwrap_or_default(),
                allow_vm_faults: args.allow_vm_faults,
                zone: args.zone.clone(),
                runs: (args.arms.len() as u64) * seeds.len() as u64,
                scenario_seconds: timeline.end.as_secs_f64(),
                time_scale: args.time_scale,
            };
            up::gke(target, &timeline.nodes, &args.repo, runner, &runtime, rate)?
        }
        ClusterKind::Local => {
            let NodesFrom::Real(flag) = args.nodes else {
                bail!("--cluster local without real nodes connects through kube_connect::connect");
            };
            // the workload and scheduler images hold the programs built beside this one
            let exe = std::env::current_exe().context("finding the schedlab program")?;
            let dir = exe.parent().unwrap_or(Path::new("."));
            let target = up::LocalTarget {
                flag,
                programs: provisioning::kubelets::PodPrograms::beside(dir)?,
                cancel: interrupt.clone(),
                scheduler_repo: arms.iter().any(|a| a == IN_CLUSTER_ARM).then(|| args.repo.clone()),
            };
            crate::out::noteln!(
                "bringing a local control plane up with {} real nodes (a cold cache builds Kubernetes: several minutes)",
                flag.count
            );
            up::local(target, &timeline.nodes, &runtime, rate)?
        }
        other => bail!("{} is not a kind or GKE cluster", other.name()),
    };
    Ok(target(args, provisioned, rate, runtime, cancel))
}

/// The kube backend over the cluster made ready for the runs, and what the manifest says about it.
fn target(
    args: &ScenarioArgs,
    provisioned: up::Provisioned,
    rate: ClientRate,
    runtime: tokio::runtime::Runtime,
    cancel: CancellationToken,
) -> KubeTarget {
    let up::Provisioned {
        admin,
        client,
        facts,
        cluster,
    } = provisioned;
    let facts = ClusterFacts {
        server: admin.server().to_string(),
        time_scale: args.time_scale,
        nodes: if cluster.all_real() {
            "existing"
        } else {
            "existing+emulated"
        },
        default_scheduler_client: None,
        project_scheduler_client: rate,
        provisioned: Some(facts),
    };
    let backend = KubeBackend::new(
        Connection {
            name: args.cluster.name(),
            scheduler: admin.clone(),
            admin,
            admin_kubeconfig: client.kubeconfig,
            admin_context: client.context,
            time_scale: args.time_scale,
            project_rate: rate,
            nodes: NodeSource::Existing {
                selector: cluster.selector.clone(),
            },
            real: Some(Box::new(cluster)),
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
        let arms = ["default", "agmarl", "binpack", "my-scheduler"].map(String::from);
        let line = runs_line(
            &arms,
            &BTreeSet::from(["my-scheduler".into()]),
            2,
            &Images::dev(),
            "docker",
        );
        assert!(line.starts_with("play 8 runs (4 arms × 2 seeds)"), "{line}");
        assert!(
            line.contains("my-scheduler by the cluster's own scheduler of that name"),
            "{line}"
        );
        assert!(line.contains("default by the cluster's kube-scheduler"), "{line}");
        assert!(line.contains("agmarl by the in-cluster agmarl-scheduler"), "{line}");
        assert!(line.contains("binpack by schedlab's bind loop"), "{line}");
        assert!(line.contains("schedlab/workload:dev"), "{line}");
    }
}
