//! The watch-and-bind loop against a private local control plane: nodes are
//! API objects (Ready from their status, no emulator), pods name the
//! "binpack" scheduler, and a most-requested placer written here packs them.
//! Checks packing, PodScheduled=False for declined and unschedulable pods and
//! their binding once allowed or once room appears, and that a pod bound by
//! somebody else (409) or deleted (404) under the loop's feet does not stop it.

#![allow(clippy::unwrap_used)] // test helpers: a failed API call fails the test

use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, DeleteParams, PostParams};
use kube_backend::bind::{self, BindOptions, BindStats};
use kube_backend::objects::{self, PodIdentity};
use kube_backend::{ApiClient, ClientOptions, ScenarioClock, labels};
use provisioning::local::{LocalOptions, ScopedCluster};
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::testing::{self, PodSpecChanges};
use schedlab_core::{ClusterView, NodeId, NodeSpec, PendingPod, Placement, PodId, PodSlot, Resources, Workload};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const RUN: &str = "bindtest";
const NS: &str = "bindtest";
const SCHEDULER: &str = "binpack";
const MI: u64 = 1 << 20;
const GI: u64 = 1 << 30;
const WAIT: Duration = Duration::from_secs(20);

/// Pods the placer treats specially.
const CONTESTED: PodId = PodId(100);
const GHOST: PodId = PodId(101);
const SHY: PodId = PodId(102);
const BIG: PodId = PodId(103);
const AFTER: PodId = PodId(104);

fn node_spec(i: u32) -> NodeSpec {
    NodeSpec::plain(format!("n{i}"), Resources::new(4000, 8 * GI), 0.1)
}

fn workload(id: u32, name: &str, cpu_milli: u64) -> Workload {
    Workload {
        recreate: false,
        ..testing::workload(id, name, testing::pod(cpu_milli, 256 * MI).scheduler(SCHEDULER))
    }
}

fn fits(pod: &PendingPod<'_>, n: &schedlab_core::NodeState) -> bool {
    n.condition.is_ready()
        && !n.unschedulable
        && n.pod_count < n.spec.max_pods
        && (n.requested + pod.spec.requests).fits_in(&n.spec.allocatable)
}

/// Most requested CPU share after placing the pod; lowest id on ties.
fn most_requested(pod: &PendingPod<'_>, view: &ClusterView<'_>) -> Placement {
    let share = |n: &schedlab_core::NodeState| {
        (n.requested.cpu_milli + pod.spec.requests.cpu_milli) as f64 / n.spec.allocatable.cpu_milli.max(1) as f64
    };
    let best =
        view.nodes
            .iter()
            .filter(|n| fits(pod, n))
            .fold(None::<&schedlab_core::NodeState>, |best, n| match best {
                Some(b) if share(b) >= share(n) => Some(b),
                _ => Some(n),
            });
    match best {
        Some(n) => Placement::Bind(n.id),
        None => Placement::Unschedulable {
            reason: format!(
                "0/{} nodes have room for {}m CPU",
                view.nodes.len(),
                pod.spec.requests.cpu_milli
            )
            .into(),
        },
    }
}

async fn wait_for<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

struct Lab {
    admin: ApiClient,
    pods: Api<core::Pod>,
    node_names: Vec<String>,
}

impl Lab {
    async fn create(&self, id: PodId, w: &Workload) -> String {
        let ident = PodIdentity {
            pod: id,
            slot: PodSlot {
                workload: w.id,
                ordinal: id.0 as u32,
            },
            incarnation: 0,
        };
        let pod = objects::pod_object(RUN, NS, &ident, w, 7);
        let name = pod.metadata.name.clone().unwrap();
        self.admin.throttle().await;
        self.pods.create(&PostParams::default(), &pod).await.unwrap();
        name
    }

    async fn node_of(&self, name: &str) -> Option<String> {
        let pod = self.pods.get_opt(name).await.unwrap()?;
        objects::pod_node_name(&pod).map(str::to_string)
    }

    async fn bound(&self, name: &str) -> String {
        wait_for(&format!("{name} to be bound"), || async {
            self.node_of(name).await.is_some()
        })
        .await;
        self.node_of(name).await.unwrap()
    }

    async fn condition(&self, name: &str) -> Option<core::PodCondition> {
        let pod = self.pods.get_opt(name).await.unwrap()?;
        pod.status?.conditions?.into_iter().find(|c| c.type_ == "PodScheduled")
    }

    async fn delete_now(&self, name: &str) {
        self.pods
            .delete(name, &DeleteParams::default().grace_period(0))
            .await
            .unwrap();
        wait_for(&format!("{name} to be gone"), || async {
            self.pods.get_opt(name).await.unwrap().is_none()
        })
        .await;
    }

    fn node(&self, i: usize) -> &str {
        &self.node_names[i]
    }
}

/// What the placer does besides placing: it binds CONTESTED to node 2 and
/// deletes GHOST itself (as another actor would) before answering, so the
/// loop's own bind meets a 409 and a 404; it declines SHY until allowed.
fn placer(admin: ApiClient, node2: String, let_shy_in: Arc<AtomicBool>) -> Box<dyn schedlab_core::Scheduler> {
    let handle = tokio::runtime::Handle::current();
    Box::new(move |pod: &PendingPod<'_>, view: &ClusterView<'_>| {
        let interfere = |pod_id: PodId| pod.id == pod_id && pod.attempts == 0;
        if interfere(CONTESTED) || interfere(GHOST) {
            let admin = admin.clone();
            let node2 = node2.clone();
            let contested = pod.id == CONTESTED;
            tokio::task::block_in_place(|| {
                handle.block_on(async move {
                    let pods: Api<core::Pod> = Api::namespaced(admin.client(), NS);
                    let name = if contested { "contested-100-0" } else { "ghost-101-0" };
                    if contested {
                        let binding = serde_json::json!({
                            "apiVersion": "v1", "kind": "Binding",
                            "metadata": {"name": name, "namespace": NS},
                            "target": {"apiVersion": "v1", "kind": "Node", "name": node2},
                        });
                        pods.create_subresource::<_, serde_json::Value>(
                            "binding",
                            name,
                            &PostParams::default(),
                            &binding,
                        )
                        .await
                        .unwrap();
                    } else {
                        pods.delete(name, &DeleteParams::default().grace_period(0))
                            .await
                            .unwrap();
                    }
                })
            });
        }
        if pod.id == SHY && !let_shy_in.load(Ordering::SeqCst) {
            return Placement::Decline {
                reason: "not yet".into(),
            };
        }
        most_requested(pod, view)
    })
}

async fn scenario(plane: &ScopedCluster) -> BindStats {
    let admin = ApiClient::connect(&ClientOptions {
        kubeconfig: Some(plane.admin_kubeconfig().to_path_buf()),
        qps: 500.0,
        burst: 1000,
        ..Default::default()
    })
    .await
    .unwrap();
    // The loop runs as the scheduler identity, so its permissions are tested too.
    let agmarl = ApiClient::connect(&ClientOptions {
        kubeconfig: Some(plane.agmarl_kubeconfig().to_path_buf()),
        qps: 500.0,
        burst: 1000,
        ..Default::default()
    })
    .await
    .unwrap();

    let namespaces: Api<core::Namespace> = Api::all(admin.client());
    let ns = objects::run_namespace(NS, RUN);
    namespaces.create(&PostParams::default(), &ns).await.unwrap();
    let nodes: Api<core::Node> = Api::all(admin.client());
    let mut node_names = Vec::new();
    for i in 0..3 {
        let node = objects::node_object(RUN, NodeId(i), &node_spec(i), false);
        node_names.push(node.metadata.name.clone().unwrap());
        nodes.create(&PostParams::default(), &node).await.unwrap();
    }
    let lab = Lab {
        pods: Api::namespaced(admin.client(), NS),
        admin: admin.clone(),
        node_names,
    };

    let let_shy_in = Arc::new(AtomicBool::new(false));
    let cancel = CancellationToken::new();
    let opts = BindOptions {
        scheduler_name: SCHEDULER.into(),
        namespace: Some(NS.into()),
        node_selector: Some(labels::run_selector(RUN)),
        model: ModelConfig::default(),
    };
    // 10x: back-offs of 1..10 scenario seconds take 0.1..1 s
    let clock = ScenarioClock::starting_now(10.0).unwrap();
    let loop_task = tokio::spawn(bind::run(
        agmarl,
        opts,
        clock,
        placer(admin.clone(), lab.node(2).to_string(), let_shy_in.clone()),
        cancel.clone(),
    ));

    // Packing: six 1-CPU pods fill node 0 and half of node 1.
    let fill = workload(0, "fill", 1000);
    let mut fills = Vec::new();
    for i in 0..6 {
        fills.push(lab.create(PodId(i), &fill).await);
    }
    let mut per_node = BTreeMap::<String, u32>::new();
    for name in &fills {
        *per_node.entry(lab.bound(name).await).or_default() += 1;
    }
    assert_eq!(
        per_node,
        BTreeMap::from([(lab.node(0).to_string(), 4), (lab.node(1).to_string(), 2)]),
        "most-requested packing"
    );

    // 409: bound to node 2 by somebody else while the loop binds it to node 1.
    let contested = lab.create(CONTESTED, &workload(1, "contested", 500)).await;
    assert_eq!(lab.bound(&contested).await, lab.node(2));

    // 404: deleted while the loop binds it.
    let ghost = lab.create(GHOST, &workload(2, "ghost", 500)).await;
    wait_for("the ghost to vanish", || async {
        lab.pods.get_opt(&ghost).await.unwrap().is_none()
    })
    .await;

    // Declined until allowed: the condition says so, then the pod binds.
    let shy = lab.create(SHY, &workload(3, "shy", 500)).await;
    wait_for("PodScheduled=False Declined", || async {
        lab.condition(&shy).await.is_some_and(|c| {
            c.status == "False"
                && c.reason.as_deref() == Some(labels::DECLINED_REASON)
                && c.message.as_deref() == Some("not yet")
        })
    })
    .await;
    assert!(lab.node_of(&shy).await.is_none(), "a declined pod stays pending");
    let_shy_in.store(true, Ordering::SeqCst);
    assert_eq!(
        lab.bound(&shy).await,
        lab.node(1),
        "node 1 is the most requested that fits"
    );

    // Unschedulable while node 2 holds the contested pod, bound once it leaves.
    let big = lab.create(BIG, &workload(4, "big", 4000)).await;
    wait_for("PodScheduled=False Unschedulable", || async {
        lab.condition(&big).await.is_some_and(|c| {
            c.status == "False"
                && c.reason.as_deref() == Some(labels::UNSCHEDULABLE_REASON)
                && c.message.as_deref() == Some("0/3 nodes have room for 4000m CPU")
        })
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(lab.node_of(&big).await.is_none(), "no room yet");
    lab.delete_now(&contested).await;
    assert_eq!(lab.bound(&big).await, lab.node(2), "bound once room appeared");
    let big_condition = lab.condition(&big).await.unwrap();
    assert_eq!(
        big_condition.status, "True",
        "the API server marks a bound pod scheduled"
    );

    // The loop is still at work after all that.
    let after = lab.create(AFTER, &workload(5, "after", 500)).await;
    assert_eq!(lab.bound(&after).await, lab.node(1));

    cancel.cancel();
    loop_task.await.unwrap().unwrap()
}

#[test]
fn binds_packs_retries_and_survives_conflicts() {
    let plane = ScopedCluster::up(&LocalOptions::private("kube-bind").unwrap()).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let stats = rt.block_on(scenario(&plane));
    eprintln!("{stats:#?}");
    assert_eq!(stats.binds, 9, "six fills, shy, big, after");
    assert_eq!(stats.conflicts, 1, "the contested pod");
    assert_eq!(stats.gone, 1, "the ghost");
    assert!(stats.declined >= 1 && stats.unschedulable >= 1, "{stats:?}");
    assert_eq!(stats.rejected, 0);
    assert!(
        stats.status_writes >= 2,
        "one Declined and one Unschedulable condition at least"
    );
    assert_eq!(stats.pending, 0);
    assert_eq!(stats.decision_latency.count, stats.decisions);
    assert_eq!(stats.bind_latency.count, stats.binds + stats.conflicts + stats.gone);
}
