//! kind/GKE provisioning up to the boundary, against a private local control
//! plane whose nodes are API objects labelled as GKE labels them: the node
//! pool check, marking nodes with their scenario pool and price, the GKE
//! cordon-and-delete-pods fault (only the run's pods on that node), the
//! fault pump renaming nodes from the player's name order, and deploying
//! the in-cluster scheduler's kind overlay (it cannot become ready: no
//! kubelet runs its pods).

#![allow(clippy::unwrap_used)] // test helpers: a failed API call fails the test

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::api::{Api, ObjectMeta, PostParams};
use kube_backend::emulator::EmulatorCommand;
use kube_backend::{ApiClient, ClientOptions, labels};
use provisioning::faults::{self, Carried, NodeFaults, PumpOptions};
use provisioning::gke::nodes::{NodeMark, list_nodes, mark_nodes};
use provisioning::gke::{GkeFaultMode, GkeFaults, check_pools, pool_needs, pools};
use provisioning::local::{LocalOptions, ScopedCluster};
use provisioning::scheduler_deploy::{self, DeployError, Images};
use schedlab_core::testing::NodeSpecChanges;
use schedlab_core::{NodeSpec, Resources};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const RUN_NS: &str = "realnodes-run";
const OTHER_NS: &str = "realnodes-other";

fn gke_node(name: &str, pool: &str, machine: &str) -> core::Node {
    let node_labels = BTreeMap::from([
        (pools::GKE_NODEPOOL.to_string(), pool.to_string()),
        (labels::MACHINE_TYPE.to_string(), machine.to_string()),
        (pools::ZONE.to_string(), "europe-west4-a".to_string()),
        (pools::HOSTNAME.to_string(), name.to_string()),
    ]);
    let resources = BTreeMap::from([
        ("cpu".to_string(), Quantity("8".into())),
        ("memory".to_string(), Quantity("32Gi".into())),
        ("pods".to_string(), Quantity("110".into())),
    ]);
    core::Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(node_labels),
            ..Default::default()
        },
        status: Some(core::NodeStatus {
            capacity: Some(resources.clone()),
            allocatable: Some(resources),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn spec(name: &str, pool: &str, machine: &str, price: f64) -> NodeSpec {
    NodeSpec::plain(name, Resources::ZERO, price).pool(pool, machine)
}

/// A pod already bound to `node` (no scheduler involved).
fn bound_pod(name: &str, node: &str) -> core::Pod {
    core::Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(core::PodSpec {
            node_name: Some(node.into()),
            containers: vec![core::Container {
                name: "c".into(),
                image: Some("registry.k8s.io/pause:3.9".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Gone, or on its way out (no kubelet here confirms a graceful delete).
async fn deleting(pods: &Api<core::Pod>, name: &str) -> bool {
    match pods.get_opt(name).await.unwrap() {
        None => true,
        Some(p) => p.metadata.deletion_timestamp.is_some(),
    }
}

async fn unschedulable(nodes: &Api<core::Node>, name: &str) -> bool {
    let node = nodes.get(name).await.unwrap();
    node.spec.and_then(|s| s.unschedulable).unwrap_or(false)
}

async fn scenario(plane: &ScopedCluster) {
    let admin = ApiClient::connect(&ClientOptions {
        kubeconfig: Some(plane.admin_kubeconfig().to_path_buf()),
        qps: 500.0,
        burst: 1000,
        ..Default::default()
    })
    .await
    .unwrap();
    let client = admin.client();
    let nodes: Api<core::Node> = Api::all(client.clone());
    let pp = PostParams::default();
    for (name, pool, machine) in [
        ("gke-c-default-pool-b", "default-pool", "n2-standard-8"),
        ("gke-c-default-pool-a", "default-pool", "n2-standard-8"),
        ("gke-c-default-pool-c", "default-pool", "n2-standard-8"),
        ("gke-c-spot-a", "spot", "n2-standard-8"),
        ("gke-c-small-a", "small", "e2-medium"),
    ] {
        nodes.create(&pp, &gke_node(name, pool, machine)).await.unwrap();
    }

    // the pool check, from the API server's Node objects
    let scenario_nodes = vec![
        spec("g0", "general", "n2-standard-8", 0.3885),
        spec("g1", "general", "n2-standard-8", 0.3885),
        spec("s0", "spot", "n2-standard-8", 0.0944),
    ];
    let found = list_nodes(&admin).await.unwrap();
    assert_eq!(found.len(), 5);
    let matches = check_pools(&pool_needs(&scenario_nodes), &found).unwrap();
    assert_eq!(matches[0].node_pool, "default-pool");
    assert_eq!(matches[0].nodes, vec!["gke-c-default-pool-a", "gke-c-default-pool-b"]);
    assert_eq!(matches[1].node_pool, "spot");
    let mut too_big = scenario_nodes.clone();
    too_big.push(spec("h0", "highmem", "n2-highmem-16", 1.0));
    let missing = match check_pools(&pool_needs(&too_big), &found) {
        Err(provisioning::Error::PoolsMissing(e)) => e,
        other => panic!("expected missing pools, got {other:?}"),
    };
    assert_eq!(missing.missing.len(), 1, "{missing}");
    assert!(missing.missing[0].contains("n2-highmem-16"), "{missing}");
    assert!(missing.found.iter().any(|f| f == "small (1 × e2-medium)"), "{missing}");

    // marking: schedlab's pool label and the price annotation, nothing else changes
    let marks: Vec<NodeMark> = matches
        .iter()
        .flat_map(|m| {
            m.nodes.iter().map(|n| NodeMark {
                node: n.clone(),
                pool: m.pool.clone(),
                hourly_price: m.hourly_price,
            })
        })
        .collect();
    mark_nodes(&admin, &marks).await.unwrap();
    let marked = nodes.get("gke-c-default-pool-a").await.unwrap();
    let node_labels = marked.metadata.labels.clone().unwrap();
    assert_eq!(node_labels[labels::POOL], "general");
    assert_eq!(node_labels[pools::GKE_NODEPOOL], "default-pool");
    assert_eq!(marked.metadata.annotations.unwrap()[labels::HOURLY_PRICE], "0.3885");
    // and a run reads them back as the scenario's pool and price
    let read = kube_backend::objects::node_spec_of(&nodes.get("gke-c-spot-a").await.unwrap()).unwrap();
    assert_eq!((read.pool.name.as_str(), read.pool.hourly_price), ("spot", 0.0944));
    assert!(
        !nodes
            .get("gke-c-default-pool-c")
            .await
            .unwrap()
            .metadata
            .labels
            .unwrap()
            .contains_key(labels::POOL),
        "an unused node is not marked"
    );

    // the cordon fault: only the run's pods on the failed node go
    let namespaces: Api<core::Namespace> = Api::all(client.clone());
    for ns in [RUN_NS, OTHER_NS] {
        let object = core::Namespace {
            metadata: ObjectMeta {
                name: Some(ns.into()),
                ..Default::default()
            },
            ..Default::default()
        };
        namespaces.create(&pp, &object).await.unwrap();
    }
    let run_pods: Api<core::Pod> = Api::namespaced(client.clone(), RUN_NS);
    let other_pods: Api<core::Pod> = Api::namespaced(client.clone(), OTHER_NS);
    run_pods
        .create(&pp, &bound_pod("on-a-1", "gke-c-default-pool-a"))
        .await
        .unwrap();
    run_pods
        .create(&pp, &bound_pod("on-a-2", "gke-c-default-pool-a"))
        .await
        .unwrap();
    run_pods
        .create(&pp, &bound_pod("on-b", "gke-c-default-pool-b"))
        .await
        .unwrap();
    other_pods
        .create(&pp, &bound_pod("system-on-a", "gke-c-default-pool-a"))
        .await
        .unwrap();

    let used: Vec<String> = matches.iter().flat_map(|m| m.nodes.clone()).collect();
    let sink: Arc<dyn NodeFaults> = Arc::new(GkeFaults::new(
        GkeFaultMode::Cordon {
            api: admin.clone(),
            namespace: RUN_NS.into(),
        },
        used.clone(),
    ));
    let fail_a = EmulatorCommand::FailNode {
        name: "gke-c-default-pool-a".into(),
    };
    let done = sink.carry_out(&fail_a).await.unwrap();
    assert_eq!(
        done,
        Carried::Done(format!("cordon gke-c-default-pool-a; delete its 2 pods of {RUN_NS}"))
    );
    assert!(unschedulable(&nodes, "gke-c-default-pool-a").await);
    assert!(deleting(&run_pods, "on-a-1").await && deleting(&run_pods, "on-a-2").await);
    assert!(!deleting(&run_pods, "on-b").await, "a pod on another node stays");
    assert!(
        !deleting(&other_pods, "system-on-a").await,
        "another namespace's pod stays"
    );
    assert!(!unschedulable(&nodes, "gke-c-default-pool-b").await);
    // a node outside the run is never touched
    let outside = EmulatorCommand::FailNode {
        name: "gke-c-small-a".into(),
    };
    assert_eq!(sink.carry_out(&outside).await.unwrap(), Carried::Unsupported);
    assert!(!unschedulable(&nodes, "gke-c-small-a").await);
    let recover_a = EmulatorCommand::RecoverNode {
        name: "gke-c-default-pool-a".into(),
    };
    assert_eq!(
        sink.carry_out(&recover_a).await.unwrap(),
        Carried::Done("uncordon gke-c-default-pool-a".into())
    );
    assert!(!unschedulable(&nodes, "gke-c-default-pool-a").await);

    // through the pump, as a run sends them: the player names scenario node k
    // after the k-th name in name order; the pump turns that into the node meant
    let intended = pools::intended_nodes(&scenario_nodes, &matches);
    assert_eq!(
        intended,
        vec!["gke-c-default-pool-a", "gke-c-default-pool-b", "gke-c-spot-a"]
    );
    let mut played = intended.clone();
    played.sort();
    let (tx, handle) = faults::spawn_pump(
        sink,
        PumpOptions {
            rename: faults::rename_map(&intended),
            emulator: None,
        },
    );
    // scenario node 2 (the spot node) as the player names it
    tx.send(EmulatorCommand::FailNode {
        name: played[2].clone(),
    })
    .unwrap();
    tx.send(EmulatorCommand::DegradeNode {
        name: played[0].clone(),
    })
    .unwrap();
    drop(tx);
    let stats = handle.await.unwrap();
    assert_eq!((stats.carried, stats.unsupported, stats.failed), (1, 1, 0), "{stats:?}");
    assert!(unschedulable(&nodes, &intended[2]).await);

    // the scheduler's kind overlay applies; no kubelet runs its pods, so it never gets ready
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let overlay = scheduler_deploy::overlay_dir(&repo, "kind");
    let applied = scheduler_deploy::deploy(&admin, &overlay, &Images::dev(), &[])
        .await
        .unwrap();
    assert!(applied >= 5, "{applied} objects");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), scheduler_deploy::NAMESPACE);
    let deployment = deployments.get(scheduler_deploy::DEPLOYMENT).await.unwrap();
    let image = deployment.spec.unwrap().template.spec.unwrap().containers[0]
        .image
        .clone();
    assert_eq!(image.as_deref(), Some(scheduler_deploy::DEV_SCHEDULER_IMAGE));
    let err = scheduler_deploy::wait_ready(&admin, Duration::from_secs(3))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, provisioning::Error::Deploy(e) if matches!(**e, DeployError::NotReady { .. })),
        "{err}"
    );
}

#[test]
fn pool_check_marks_faults_and_deploy_against_a_real_api_server() {
    let plane = ScopedCluster::up(&LocalOptions::private("real-nodes").unwrap()).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(scenario(&plane));
}
