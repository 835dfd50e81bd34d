use super::*;
use kube_backend::labels;
use schedlab_core::node::{Provisioning, Taint, TaintEffect};
use schedlab_core::resources::Resources;
use schedlab_core::testing::NodeSpecChanges;

fn spec(name: &str, pool: &str, provisioning: Provisioning) -> NodeSpec {
    let mut taints = Vec::new();
    if provisioning == Provisioning::Spot {
        taints.push(Taint {
            key: "cloud.google.com/gke-spot".into(),
            value: Some("true".into()),
            effect: TaintEffect::NoSchedule,
        });
    }
    let mut spec = NodeSpec::plain(name, Resources::ZERO, 0.3885)
        .pool(pool, "n2-standard-8")
        .label("tier", pool)
        // the scenario's own, which a kubelet may not be given
        .label("kubernetes.io/hostname", name);
    spec.pool.provisioning = provisioning;
    spec.taints = taints;
    spec
}

/// churn's shape, small: two general nodes and a tainted spot node.
fn small() -> Vec<NodeSpec> {
    vec![
        spec("general-0", "general", Provisioning::OnDemand),
        spec("general-1", "general", Provisioning::OnDemand),
        spec("spot-0", "spot", Provisioning::Spot),
    ]
}

fn opts() -> KindOptions {
    KindOptions::new("schedlab", Path::new("/tmp/w"), Path::new("/repo"))
}

const SMALL_YAML: &str = r#"kind: Cluster
apiVersion: kind.x-k8s.io/v1alpha4
nodes:
- role: control-plane
- role: worker
  labels:
    node.kubernetes.io/instance-type: n2-standard-8
    schedlab.io/kind-worker: "true"
    schedlab.io/pool: general
    schedlab.io/provisioning: on-demand
    tier: general
- role: worker
  labels:
    node.kubernetes.io/instance-type: n2-standard-8
    schedlab.io/kind-worker: "true"
    schedlab.io/pool: general
    schedlab.io/provisioning: on-demand
    tier: general
- role: worker
  labels:
    node.kubernetes.io/instance-type: n2-standard-8
    schedlab.io/kind-worker: "true"
    schedlab.io/pool: spot
    schedlab.io/provisioning: spot
    tier: spot
  kubeadmConfigPatches:
  - |
    kind: JoinConfiguration
    nodeRegistration:
      taints:
      - key: cloud.google.com/gke-spot
        value: "true"
        effect: NoSchedule
"#;

#[test]
fn config_of_a_small_scenario_is_exactly_this() {
    let plan = KindPlan::new(&small(), opts()).unwrap();
    assert_eq!(plan.config_yaml, SMALL_YAML);
}

#[test]
fn config_has_a_worker_per_node_with_labels_and_taints() {
    let plan = KindPlan::new(&small(), opts()).unwrap();
    let nodes = &plan.config.nodes;
    assert_eq!(nodes.len(), 4);
    assert_eq!(nodes[0].role, "control-plane");
    assert!(nodes[1..].iter().all(|n| n.role == "worker"));
    for (node, spec) in nodes[1..].iter().zip(small()) {
        assert_eq!(node.labels[labels::POOL], spec.pool.name);
        assert_eq!(node.labels[labels::MACHINE_TYPE], "n2-standard-8");
        assert_eq!(node.labels["tier"], spec.pool.name);
        assert_eq!(node.labels[WORKER_LABEL], "true");
        assert!(!node.labels.contains_key("kubernetes.io/hostname"));
    }
    assert!(config::reserved_label("kubernetes.io/hostname"));
    assert!(config::reserved_label("node.kubernetes.io/instance-type"));
    assert!(config::reserved_label("x.k8s.io/y"));
    assert!(!config::reserved_label("schedlab.io/pool") && !config::reserved_label("tier"));
    assert_eq!(nodes[3].labels[labels::PROVISIONING], "spot");
    assert!(nodes[1].kubeadm_config_patches.is_empty());
    assert_eq!(nodes[3].kubeadm_config_patches.len(), 1);
    let patch = &nodes[3].kubeadm_config_patches[0];
    assert!(patch.contains("kind: JoinConfiguration"), "{patch}");
    assert!(patch.contains("key: cloud.google.com/gke-spot"), "{patch}");
    assert!(patch.contains("effect: NoSchedule"), "{patch}");
    assert_eq!(
        plan.worker_names(),
        vec!["schedlab-worker", "schedlab-worker2", "schedlab-worker3"]
    );
    assert_eq!(
        plan.placement,
        vec![
            Placement::Worker("schedlab-worker".into()),
            Placement::Worker("schedlab-worker2".into()),
            Placement::Worker("schedlab-worker3".into())
        ]
    );
}

#[test]
fn the_yaml_reads_back_as_the_config() {
    let plan = KindPlan::new(&small(), opts()).unwrap();
    let back: serde_json::Value = serde_saphyr::from_str(&plan.config_yaml).unwrap();
    assert_eq!(back, serde_json::to_value(&plan.config).unwrap());
    let patch: serde_json::Value = serde_saphyr::from_str(&plan.config.nodes[3].kubeadm_config_patches[0]).unwrap();
    assert_eq!(
        patch,
        serde_json::json!({"kind": "JoinConfiguration", "nodeRegistration": {"taints": [
            {"key": "cloud.google.com/gke-spot", "value": "true", "effect": "NoSchedule"}
        ]}})
    );
}

#[test]
fn too_many_nodes_is_an_input_error_unless_the_rest_is_emulated() {
    let nodes: Vec<NodeSpec> = (0..25)
        .map(|i| spec(&format!("n{i}"), "general", Provisioning::OnDemand))
        .collect();
    let err = KindPlan::new(&nodes, opts()).unwrap_err();
    assert!(
        matches!(err, crate::Error::Kind(KindError::TooManyNodes { nodes: 25, max: 20 })),
        "{err}"
    );
    assert!(err.is_input_error());
    assert!(err.to_string().contains("--kind-extra-emulated"), "{err}");

    let mut o = opts();
    o.extra_emulated = true;
    let plan = KindPlan::new(&nodes, o).unwrap();
    assert_eq!(plan.workers.len(), 20);
    assert_eq!(plan.emulated.len(), 5);
    assert_eq!(plan.config.nodes.len(), 21);
    assert_eq!(plan.placement[19], Placement::Worker("schedlab-worker20".into()));
    assert_eq!(plan.placement[20], Placement::Emulated);
}

#[test]
fn capped_workers_keep_every_pools_share() {
    // 30 general + 10 spot with 20 workers: 15 + 5
    let mut nodes: Vec<NodeSpec> = (0..30)
        .map(|i| spec(&format!("g{i}"), "general", Provisioning::OnDemand))
        .collect();
    nodes.extend((0..10).map(|i| spec(&format!("s{i}"), "spot", Provisioning::Spot)));
    let mut o = opts();
    o.extra_emulated = true;
    let plan = KindPlan::new(&nodes, o).unwrap();
    let spot_workers = plan.workers.iter().filter(|s| s.pool.name == "spot").count();
    assert_eq!((plan.workers.len() - spot_workers, spot_workers), (15, 5));
    assert_eq!(plan.emulated.len(), 20);
    // the first of each pool are the real ones
    assert_eq!(plan.placement[14], Placement::Worker("schedlab-worker15".into()));
    assert_eq!(plan.placement[15], Placement::Emulated);
    assert_eq!(plan.placement[30], Placement::Worker("schedlab-worker16".into()));
    assert_eq!(plan.placement[35], Placement::Emulated);
}

#[test]
fn bad_names_and_no_nodes_are_input_errors() {
    let mut o = opts();
    o.name = "Bad_Name".into();
    assert!(matches!(
        KindPlan::new(&small(), o),
        Err(crate::Error::Kind(KindError::BadName(_)))
    ));
    assert!(matches!(
        KindPlan::new(&[], opts()),
        Err(crate::Error::Kind(KindError::NoNodes))
    ));
    let mut o = opts();
    o.max_workers = 0;
    assert!(KindPlan::new(&small(), o).unwrap_err().is_input_error());
}

fn lines(plan: &CommandPlan) -> Vec<String> {
    plan.commands().iter().map(|c| c.shell()).collect()
}

#[test]
fn dry_run_plan_lists_every_command_in_order() {
    let plan = KindPlan::new(&small(), opts()).unwrap();
    let full = plan.plan(CommandPlan::default(), "play 2 runs");
    assert_eq!(
        lines(&full),
        vec![
            "(cd /repo && docker build -f deploy/Dockerfile --target agmarl-scheduler -t schedlab/agmarl-scheduler:dev .)",
            "(cd /repo && docker build -f deploy/Dockerfile --target workload -t schedlab/workload:dev .)",
            "kind create cluster --name schedlab --config /tmp/w/kind-config.yaml --kubeconfig /tmp/w/kubeconfig --wait 120s",
            "kind load docker-image schedlab/agmarl-scheduler:dev --name schedlab",
            "kind load docker-image schedlab/workload:dev --name schedlab",
            "kind delete cluster --name schedlab --kubeconfig /tmp/w/kubeconfig",
        ]
    );
    let text = full.render();
    assert!(text.contains("# (in-process) play 2 runs"), "{text}");
    assert!(text.contains("/tmp/w/kind-config.yaml"), "{text}");
}

#[test]
fn keep_leaves_out_the_delete_and_a_node_image_is_passed() {
    let mut o = opts();
    o.keep = true;
    o.build_images = false;
    o.node_image = Some("kindest/node:v1.31.0".into());
    let plan = KindPlan::new(&small(), o).unwrap();
    let full = plan.plan(CommandPlan::default(), "runs");
    let commands = lines(&full);
    assert!(commands.iter().all(|c| !c.contains("delete")), "{commands:?}");
    assert!(commands.iter().all(|c| !c.starts_with("(cd")), "no build: {commands:?}");
    assert_eq!(
        commands[0],
        "kind create cluster --name schedlab --config /tmp/w/kind-config.yaml --kubeconfig /tmp/w/kubeconfig --wait 120s --image kindest/node:v1.31.0"
    );
    assert!(full.render().contains("keep kind cluster schedlab"));
    assert!(plan.config_yaml.contains("image: kindest/node:v1.31.0"));
}

#[test]
fn the_guard_deletes_on_drop_and_up_runs_the_commands() {
    let dir = std::env::temp_dir().join(format!("schedlab-kind-guard-{}", std::process::id()));
    let mut o = KindOptions::new("guard", &dir, Path::new("/repo"));
    o.build_images = false;
    let plan = KindPlan::new(&small(), o).unwrap();
    let runner = Arc::new(CommandRunner::dry_run());
    let cluster = KindCluster::up(plan, runner.clone(), None).unwrap();
    assert!(!dir.exists(), "a dry run writes nothing");
    drop(cluster);
    let done: Vec<String> = runner.commands().iter().map(|c| c.shell()).collect();
    assert_eq!(done.len(), 4, "{done:?}");
    assert!(done[0].starts_with("kind create cluster --name guard"));
    assert!(done[3].starts_with("kind delete cluster --name guard"));
}

#[test]
fn an_interrupted_up_deletes_what_it_started() {
    let dir = std::env::temp_dir().join(format!("schedlab-kind-cancel-{}", std::process::id()));
    let mut o = KindOptions::new("cancel", &dir, Path::new("/repo"));
    o.build_images = false;
    let plan = KindPlan::new(&small(), o).unwrap();
    let runner = Arc::new(CommandRunner::dry_run());
    let cancel = AtomicBool::new(true);
    let err = KindCluster::up(plan, runner.clone(), Some(&cancel)).unwrap_err();
    assert!(matches!(err, crate::Error::Kind(KindError::Interrupted)));
    let done: Vec<String> = runner.commands().iter().map(|c| c.shell()).collect();
    assert_eq!(
        done,
        vec!["kind delete cluster --name cancel --kubeconfig ".to_string() + &dir.join("kubeconfig").to_string_lossy()]
    );
}
