//! `--cluster` and the provider flags: the one place the scenario command
//! names a cluster kind. Every flag a provider would ignore is refused
//! here, naming the clusters it is for; what is left is a
//! [`ClusterProvider`] (None for the simulator), which checks its own
//! settings against the runs.

use crate::cli::{ClusterKind, KindFault, NodesFrom, ScenarioArgs};
use crate::exit::InputError;
use anyhow::{Context, Result, bail};
use provisioning::kind::{KindFaultMode, KindOptions};
use provisioning::provider::gke::GkeProvider;
use provisioning::provider::kind::KindProvider;
use provisioning::provider::kubeconfig::{KubeNodes, KubeconfigProvider};
use provisioning::provider::local::LocalProvider;
use provisioning::provider::real_nodes::RealNodesProvider;
use provisioning::provider::{ClusterProvider, Connect, work_dir};
use std::path::Path;

/// The provider of `args.cluster`, its flags checked; None for the simulator.
pub fn provider(args: &ScenarioArgs) -> Result<Option<Box<dyn ClusterProvider>>> {
    check_flags(args)?;
    let real = &args.real;
    let connect = Connect {
        time_scale: real.time_scale,
        qps: real.qps,
        burst: real.burst,
    };
    let provider: Box<dyn ClusterProvider> = match args.cluster {
        ClusterKind::Sim => return Ok(None),
        ClusterKind::Local => match real.nodes {
            NodesFrom::Real(flag) => {
                // the workload and scheduler images hold the programs built beside this one
                let exe = std::env::current_exe().context("finding the schedlab program")?;
                Box::new(RealNodesProvider {
                    flag,
                    programs_dir: exe.parent().unwrap_or(Path::new(".")).to_path_buf(),
                    repo: real.repo.clone(),
                    connect,
                })
            }
            NodesFrom::Emulated | NodesFrom::Existing => Box::new(LocalProvider {
                state: real.local_state.clone(),
                connect,
            }),
        },
        ClusterKind::Kube => Box::new(KubeconfigProvider {
            kubeconfig: args.kube.kubeconfig.clone(),
            context: args.kube.context.clone(),
            nodes: match real.nodes {
                NodesFrom::Existing => KubeNodes::Existing {
                    selector: args.kube.node_selector.clone().unwrap_or_default(),
                },
                NodesFrom::Emulated | NodesFrom::Real(_) => KubeNodes::Emulated,
            },
            connect,
        }),
        ClusterKind::Kind => {
            let kind = &args.kind;
            let mut opts = KindOptions::new(&kind.kind_name, &work_dir("kind", &kind.kind_name), &real.repo);
            opts.max_workers = kind.kind_max_workers;
            opts.extra_emulated = kind.kind_extra_emulated;
            opts.keep = real.keep;
            opts.node_image = kind.kind_node_image.clone();
            opts.build_images = !kind.no_image_build;
            opts.fault_mode = match kind.kind_fault {
                KindFault::Stop => KindFaultMode::Stop,
                KindFault::Pause => KindFaultMode::Pause,
            };
            Box::new(KindProvider { opts, connect })
        }
        ClusterKind::Gke => {
            let gke = &args.gke;
            Box::new(GkeProvider {
                opts: provisioning::gke::GkeOptions {
                    cluster_name: gke.gke_cluster_name.clone(),
                    zone: gke.zone.clone(),
                    provision: gke.provision,
                    keep: real.keep,
                    kubeconfig: work_dir("gke", &gke.gke_cluster_name).join("kubeconfig"),
                },
                kubeconfig: args.kube.kubeconfig.clone(),
                context: args.kube.context.clone(),
                image_registry: gke.image_registry.clone().unwrap_or_default(),
                allow_vm_faults: gke.allow_vm_faults,
                repo: real.repo.clone(),
                connect,
            })
        }
    };
    Ok(Some(provider))
}

/// Refuses flags the chosen cluster would silently ignore (given with a
/// value other than their default), naming the flag and the clusters it is
/// for.
fn check_flags(args: &ScenarioArgs) -> Result<()> {
    let c = args.cluster;
    let (real, kube, kind, gke) = (&args.real, &args.kube, &args.kind, &args.gke);
    let is_real = c != ClusterKind::Sim;
    let kube_like = matches!(c, ClusterKind::Kube | ClusterKind::Gke);
    let is_kind = c == ClusterKind::Kind;
    let is_gke = c == ClusterKind::Gke;
    let real_nodes = matches!(real.nodes, NodesFrom::Real(_));
    let flags: [(&str, bool, bool, &str); 23] = [
        ("--charge-decision-time", args.charge_decision_time, !is_real, "sim"),
        ("--kubeconfig", kube.kubeconfig.is_some(), kube_like, "kube|gke"),
        ("--context", kube.context.is_some(), kube_like, "kube|gke"),
        ("--time-scale", real.time_scale != 1.0, is_real, "local|kube|kind|gke"),
        ("--qps", real.qps.is_some(), is_real, "local|kube|kind|gke"),
        ("--burst", real.burst.is_some(), is_real, "local|kube|kind|gke"),
        ("--dry-run", real.dry_run, is_real, "local|kube|kind|gke"),
        (
            "--nodes existing",
            real.nodes == NodesFrom::Existing,
            c == ClusterKind::Kube,
            "kube",
        ),
        ("--nodes real:N", real_nodes, c == ClusterKind::Local, "local"),
        (
            "--node-selector",
            kube.node_selector.is_some(),
            c == ClusterKind::Kube,
            "kube",
        ),
        (
            "--local-state",
            real.local_state.is_some(),
            c == ClusterKind::Local,
            "local",
        ),
        ("--keep", real.keep, is_kind || is_gke, "kind|gke"),
        ("--provision", gke.provision, is_gke, "gke"),
        ("--zone", gke.zone.is_some(), is_gke, "gke"),
        ("--gke-cluster-name", gke.gke_cluster_name != "schedlab", is_gke, "gke"),
        ("--image-registry", gke.image_registry.is_some(), is_gke, "gke"),
        ("--allow-vm-faults", gke.allow_vm_faults, is_gke, "gke"),
        ("--kind-name", kind.kind_name != "schedlab", is_kind, "kind"),
        (
            "--kind-max-workers",
            kind.kind_max_workers != provisioning::kind::DEFAULT_MAX_WORKERS,
            is_kind,
            "kind",
        ),
        ("--kind-extra-emulated", kind.kind_extra_emulated, is_kind, "kind"),
        ("--kind-fault", kind.kind_fault != KindFault::Stop, is_kind, "kind"),
        ("--kind-node-image", kind.kind_node_image.is_some(), is_kind, "kind"),
        ("--no-image-build", kind.no_image_build, is_kind, "kind"),
    ];
    if let Some((flag, _, _, for_)) = flags.iter().find(|(_, given, applies, _)| *given && !*applies) {
        if *flag == "--charge-decision-time" {
            bail!(InputError(format!(
                "--charge-decision-time is for --cluster sim: on {} a decision already takes the time it takes",
                c.name()
            )));
        }
        bail!(InputError(format!(
            "{flag} is for --cluster {for_}, not {}: it would change nothing here",
            c.name()
        )));
    }
    if kube.node_selector.is_some() && real.nodes != NodesFrom::Existing {
        bail!(InputError(
            "--node-selector is for --nodes existing: the emulated nodes are the scenario's own".into()
        ));
    }
    if real.local_state.is_some() && real_nodes {
        bail!(InputError(
            "--local-state uses a running control plane, and --nodes real:N brings a private one up with its \
             kubelets: drop one of them"
                .into()
        ));
    }
    if is_real {
        // the one check of the value, where the clock that uses it lives
        kube_backend::clock::check_scale(real.time_scale).map_err(|e| InputError(format!("--{e}")))?;
    }
    if real.repo != Path::new(".") && !(is_kind || is_gke || real_nodes) {
        bail!(InputError(format!(
            "--repo is for --cluster kind|gke and --nodes real:N, not {}: it would change nothing here",
            c.name()
        )));
    }
    Ok(())
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

    fn chosen(extra: &[&str]) -> Option<&'static str> {
        provider(&args(extra)).unwrap().map(|p| p.name())
    }

    #[test]
    fn each_cluster_kind_is_one_provider() {
        assert_eq!(chosen(&[]), None);
        assert_eq!(chosen(&["--cluster", "local"]), Some("local"));
        assert_eq!(chosen(&["--cluster", "local", "--nodes", "real:2"]), Some("local"));
        assert_eq!(chosen(&["--cluster", "kube"]), Some("kube"));
        assert_eq!(chosen(&["--cluster", "kind"]), Some("kind"));
        assert_eq!(chosen(&["--cluster", "gke"]), Some("gke"));
    }

    #[test]
    fn a_flag_for_another_cluster_is_refused_naming_the_clusters_it_is_for() {
        for (flags, says) in [
            (
                &["--cluster", "kind", "--zone", "z"][..],
                "--zone is for --cluster gke, not kind",
            ),
            (
                &["--cluster", "local", "--kubeconfig", "k"][..],
                "--kubeconfig is for --cluster kube|gke",
            ),
            (
                &["--dry-run"][..],
                "--dry-run is for --cluster local|kube|kind|gke, not sim",
            ),
            (
                &["--cluster", "kind", "--node-selector", "a=b"][..],
                "--node-selector is for --cluster kube",
            ),
            (
                &["--cluster", "kube", "--node-selector", "a=b"][..],
                "--node-selector is for --nodes existing",
            ),
            (
                &["--cluster", "local", "--nodes", "real:1", "--local-state", "s"][..],
                "--local-state uses a running control plane",
            ),
            (
                &["--cluster", "kube", "--charge-decision-time"][..],
                "--charge-decision-time is for --cluster sim",
            ),
        ] {
            let Err(err) = provider(&args(flags)) else {
                panic!("{flags:?} was taken");
            };
            assert!(err.is::<InputError>(), "{flags:?}: {err}");
            assert!(err.to_string().contains(says), "{flags:?}: {err}");
        }
    }

    #[test]
    fn provision_conflicts_with_a_kubeconfig_at_parse_time() {
        let argv = [
            "schedlab",
            "scenario",
            "churn",
            "--cluster",
            "gke",
            "--provision",
            "--context",
            "c",
        ];
        let err = crate::cli::Cli::try_parse_from(argv).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
    }
}
