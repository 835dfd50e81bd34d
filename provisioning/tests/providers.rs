//! Every provider's check and dry-run plan, without touching anything: the
//! plan names what `up` would do, and bad settings are the user's input.

use provisioning::gke::GkeOptions;
use provisioning::kind::KindOptions;
use provisioning::kubelets::scenario::RealNodesFlag;
use provisioning::provider::gke::GkeProvider;
use provisioning::provider::kind::KindProvider;
use provisioning::provider::kubeconfig::{KubeNodes, KubeconfigProvider};
use provisioning::provider::local::LocalProvider;
use provisioning::provider::real_nodes::RealNodesProvider;
use provisioning::provider::{ClusterProvider, Connect, Runs};
use schedlab_core::NodeSpec;
use schedlab_core::testing::{GI, node};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn nodes(count: usize) -> Vec<NodeSpec> {
    (0..count).map(|i| node(&format!("n{i}"), 4000, 8 * GI, 0.2)).collect()
}

fn runs<'a>(nodes: &'a [NodeSpec], arms: &'a [String], external: &'a BTreeSet<String>) -> Runs<'a> {
    Runs {
        nodes,
        arms,
        external,
        seeds: 2,
        scenario_seconds: 600.0,
    }
}

fn arms(names: &[&str]) -> Vec<String> {
    names.iter().map(|a| a.to_string()).collect()
}

fn is_input(err: &provisioning::Error) -> bool {
    err.is_input_error()
}

#[test]
fn kind_plans_its_cluster_and_refuses_a_bad_name() {
    let (nodes, arms, none) = (nodes(4), arms(&["default", "agmarl"]), BTreeSet::new());
    let runs = runs(&nodes, &arms, &none);
    let mut opts = KindOptions::new("lab", Path::new("/w"), Path::new("/repo"));
    opts.keep = true;
    opts.build_images = false;
    let kind = KindProvider {
        opts: opts.clone(),
        connect: Connect::default(),
    };
    kind.check(&runs).unwrap();
    assert!(kind.deploys_in_cluster_scheduler(&runs));
    let plan = kind.plan(&runs).unwrap();
    assert!(
        plan.contains("kind cluster lab: a control plane and 4 workers"),
        "{plan}"
    );
    assert!(plan.contains("kind create cluster --name lab"), "{plan}");
    assert!(plan.contains("keep kind cluster lab (--keep)"), "kept: {plan}");
    assert!(plan.contains("agmarl by the in-cluster agmarl-scheduler"), "{plan}");
    opts.name = "Bad_Name".into();
    let bad = KindProvider {
        opts,
        connect: Connect::default(),
    };
    let err = bad.check(&runs).unwrap_err();
    assert!(is_input(&err) && err.to_string().contains("kind cluster name"), "{err}");
}

fn gke(provision: bool) -> GkeProvider {
    GkeProvider {
        opts: GkeOptions {
            cluster_name: "schedlab".into(),
            zone: Some("us-central1-a".into()),
            provision,
            keep: false,
            kubeconfig: PathBuf::from("/w/kubeconfig"),
        },
        kubeconfig: None,
        context: None,
        image_registry: "r.example/x".into(),
        allow_vm_faults: false,
        repo: PathBuf::from("/repo"),
        connect: Connect::default(),
    }
}

#[test]
fn gke_checks_its_settings_and_plans_the_cost_only_when_it_provisions() {
    let (nodes, arms, none) = (nodes(3), arms(&["default"]), BTreeSet::new());
    let runs = runs(&nodes, &arms, &none);
    let plan = gke(true).plan(&runs).unwrap();
    assert!(
        plan.contains("clusters create") && plan.contains("Cost estimate"),
        "{plan}"
    );
    let plan = gke(false).plan(&runs).unwrap();
    assert!(
        !plan.contains("clusters create") && !plan.contains("Cost estimate"),
        "{plan}"
    );
    for (provider, says) in [
        (
            GkeProvider {
                image_registry: " ".into(),
                ..gke(false)
            },
            "--image-registry",
        ),
        (
            GkeProvider {
                opts: GkeOptions {
                    keep: true,
                    ..gke(false).opts
                },
                ..gke(false)
            },
            "--keep is for --provision",
        ),
        (
            GkeProvider {
                context: Some("c".into()),
                ..gke(true)
            },
            "drop --kubeconfig/--context",
        ),
        (
            GkeProvider {
                kubeconfig: Some(PathBuf::from("/no/such/kubeconfig")),
                ..gke(false)
            },
            "no kubeconfig (/no/such/kubeconfig)",
        ),
    ] {
        let err = provider.check(&runs).unwrap_err();
        assert!(is_input(&err) && err.to_string().contains(says), "{says}: {err}");
    }
}

#[test]
fn a_kubeconfig_cluster_plans_its_context_and_nodes() {
    let (nodes, arms, external) = (
        nodes(2),
        arms(&["default", "mine"]),
        BTreeSet::from(["mine".to_string()]),
    );
    let runs = runs(&nodes, &arms, &external);
    let provider = KubeconfigProvider {
        kubeconfig: Some(PathBuf::from("/k/config")),
        context: Some("lab".into()),
        nodes: KubeNodes::Existing {
            selector: "pool=a".into(),
        },
        connect: Connect::default(),
    };
    provider.check(&runs).unwrap();
    assert!(!provider.deploys_in_cluster_scheduler(&runs));
    let plan = provider.plan(&runs).unwrap();
    assert!(
        plan.contains("connect to context lab of kubeconfig /k/config"),
        "{plan}"
    );
    assert!(plan.contains("existing nodes matching \"pool=a\""), "{plan}");
    assert!(
        plan.contains("mine by the cluster's own scheduler of that name"),
        "{plan}"
    );
    assert!(plan.contains("play 4 runs (2 arms × 2 seeds)"), "{plan}");
}

#[test]
fn a_local_state_folder_without_a_control_plane_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (nodes, arms, none) = (nodes(2), arms(&["default"]), BTreeSet::new());
    let runs = runs(&nodes, &arms, &none);
    let provider = LocalProvider {
        state: Some(tmp.path().to_path_buf()),
        connect: Connect::default(),
    };
    let err = provider.check(&runs).unwrap_err();
    assert!(is_input(&err), "{err}");
    assert!(err.to_string().contains("no healthy control plane runs there"), "{err}");
    assert!(
        provider.plan(&runs).is_err(),
        "a plan cannot name a plane that is not there"
    );
}

#[test]
fn real_nodes_check_their_count_against_the_scenario() {
    let (nodes, arms, none) = (nodes(3), arms(&["default"]), BTreeSet::new());
    let runs = runs(&nodes, &arms, &none);
    let provider = |flag: &str| RealNodesProvider {
        flag: flag.parse::<RealNodesFlag>().unwrap(),
        programs_dir: PathBuf::from("/nowhere"),
        repo: PathBuf::from("/no/repo"),
        connect: Connect::default(),
    };
    let err = provider("real:2").check(&runs).unwrap_err();
    assert!(is_input(&err) && err.to_string().contains("real:2+emulated"), "{err}");
    let plan = provider("real:2+emulated").plan(&runs).unwrap();
    assert!(plan.contains("start 2 real kubelets"), "{plan}");
    assert!(plan.contains("the other 1 on the node emulator"), "{plan}");
    // the agmarl arm on real nodes is the in-cluster scheduler, from the repository's manifests
    let with_agmarl = arms_with_agmarl();
    let runs = Runs {
        arms: &with_agmarl,
        ..runs
    };
    assert!(provider("real:3").deploys_in_cluster_scheduler(&runs));
    let err = provider("real:3").check(&runs).unwrap_err();
    assert!(
        is_input(&err) && err.to_string().contains("/no/repo/deploy/kustomize/overlays/local"),
        "{err}"
    );
}

fn arms_with_agmarl() -> Vec<String> {
    arms(&["default", "agmarl"])
}
