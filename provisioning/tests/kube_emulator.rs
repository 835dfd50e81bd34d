//! The node emulator against a private local control plane: three emulated
//! node objects, pods bound through the Binding subresource (and one by the
//! real kube-scheduler), scenario time 60 times faster than the wall clock.
//! Checks what kubelet would show: pods go Running; a crash-prone pod's
//! restartCount grows with CrashLoopBackOff between; a pod over its memory
//! limit is OOMKilled; a deleted pod disappears; FailNode gives Ready=Unknown,
//! the unreachable taints, a Lease that stops being renewed and, after the
//! pod's toleration (scenario time), an eviction; RecoverNode undoes it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed API call fails the test

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::watcher;
use kube_backend::emulator::{Emulator, EmulatorCommand, EmulatorOptions};
use kube_backend::objects::{self, PodIdentity};
use kube_backend::{ApiClient, ClientOptions, ScenarioClock, labels};
use provisioning::local::{LocalOptions, ScopedCluster};
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::testing::{self, PodSpecChanges};
use schedlab_core::{
    Dist, NodeId, NodeSpec, PodId, PodSlot, Resources, TaintEffect, Toleration, TolerationOperator, Workload,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const MI: u64 = 1 << 20;
const GI: u64 = 1 << 30;
const WAIT: Duration = Duration::from_secs(20);
const SCALE: f64 = 60.0;
/// Pods the test binds itself name a scheduler nobody runs.
const NOBODY: &str = "nobody";

fn node_spec(i: u32) -> NodeSpec {
    NodeSpec::plain(format!("n{i}"), Resources::new(4000, 4 * GI), 0.1)
}

fn workload(id: u32, name: &str, memory_use: u64, crash_per_hour: f64) -> Workload {
    let spec = testing::pod(100, 128 * MI)
        .scheduler(NOBODY)
        .usage(
            Dist::Const { value: 50.0 },
            Dist::Const {
                value: memory_use as f64,
            },
        )
        .crash_rate(crash_per_hour);
    Workload {
        recreate: false,
        ..testing::workload(id, name, spec)
    }
}

/// Every version of every pod of the run the watch showed, in order.
type History = Arc<Mutex<Vec<core::Pod>>>;

fn versions(history: &History, name: &str) -> Vec<core::Pod> {
    history
        .lock()
        .unwrap()
        .iter()
        .filter(|p| p.metadata.name.as_deref() == Some(name))
        .cloned()
        .collect()
}

fn container(pod: &core::Pod) -> Option<&core::ContainerStatus> {
    pod.status.as_ref()?.container_statuses.as_ref()?.first()
}

fn phase(pod: &core::Pod) -> Option<&str> {
    pod.status.as_ref()?.phase.as_deref()
}

async fn wait_until<F: FnMut() -> bool>(what: &str, mut done: F) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < WAIT, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn bind(pods: &Api<core::Pod>, pod: &str, node: &str) {
    let binding = core::Binding {
        metadata: kube::api::ObjectMeta {
            name: Some(pod.to_string()),
            ..Default::default()
        },
        target: core::ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Node".into()),
            name: Some(node.to_string()),
            ..Default::default()
        },
    };
    pods.create_subresource::<_, serde_json::Value>("binding", pod, &PostParams::default(), &binding)
        .await
        .unwrap();
}

fn condition<'a>(node: &'a core::Node, type_: &str) -> Option<&'a core::NodeCondition> {
    node.status
        .as_ref()?
        .conditions
        .as_ref()?
        .iter()
        .find(|c| c.type_ == type_)
}

#[test]
fn the_emulator_plays_kubelet_for_node_objects() {
    let plane = ScopedCluster::up(&LocalOptions::private("kube-emulator").unwrap()).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(play(plane.admin_kubeconfig().to_path_buf()));
}

async fn play(kubeconfig: std::path::PathBuf) {
    let api = ApiClient::connect(&ClientOptions {
        kubeconfig: Some(kubeconfig),
        qps: 500.0,
        burst: 1000,
        ..Default::default()
    })
    .await
    .unwrap();
    let run = format!("emu-{:x}", std::process::id());
    let client = api.client();
    let namespaces: Api<core::Namespace> = Api::all(client.clone());
    let mut ns = core::Namespace::default();
    ns.metadata.name = Some(run.clone());
    ns.metadata.labels = Some(BTreeMap::from([(labels::RUN.to_string(), run.clone())]));
    namespaces.create(&PostParams::default(), &ns).await.unwrap();

    let nodes_api: Api<core::Node> = Api::all(client.clone());
    let mut names = Vec::new();
    for i in 0..3 {
        let node = objects::node_object(&run, NodeId(i), &node_spec(i), true);
        names.push(node.metadata.name.clone().unwrap());
        nodes_api.create(&PostParams::default(), &node).await.unwrap();
    }

    let history: History = Arc::new(Mutex::new(Vec::new()));
    let cancel = CancellationToken::new();
    let pods: Api<core::Pod> = Api::namespaced(client.clone(), &run);
    {
        let history = history.clone();
        let stream = watcher::watcher(pods.clone(), watcher::Config::default());
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            loop {
                let item = tokio::select! {
                    _ = cancel.cancelled() => return,
                    item = stream.next() => item,
                };
                match item {
                    Some(Ok(watcher::Event::Apply(p) | watcher::Event::InitApply(p))) => {
                        history.lock().unwrap().push(p)
                    }
                    Some(_) => {}
                    None => return,
                }
            }
        });
    }

    let clock = ScenarioClock::starting_now(SCALE).unwrap();
    let mut opts = EmulatorOptions::new(&run, ModelConfig::default(), clock);
    opts.lease_renew = Duration::from_millis(500);
    let emulator = Emulator::start(api.clone(), opts, cancel.clone()).await.unwrap();
    assert_eq!(emulator.nodes(), 3);
    let commands = emulator.commands();

    // what the pods are: ids, slots, behaviours
    let crashy = workload(0, "crashy", 200 * MI, 240.0);
    let mut hog = workload(1, "hog", 600 * MI, 0.0);
    hog.spec.limits = Some(Resources::new(0, 256 * MI));
    let mut steady = workload(2, "steady", 100 * MI, 0.0);
    steady.spec.scheduler_name = "default-scheduler".into();
    let mut patient = workload(3, "patient", 100 * MI, 0.0);
    patient.spec.tolerations = vec![Toleration {
        key: labels::UNREACHABLE_TAINT.into(),
        operator: TolerationOperator::Exists,
        value: None,
        effect: Some(TaintEffect::NoExecute),
        // a scenario minute: a wall second
        toleration_seconds: Some(60),
    }];
    let mut made = Vec::new();
    for (i, (w, node)) in [(&crashy, 0usize), (&hog, 1), (&steady, usize::MAX), (&patient, 2)]
        .into_iter()
        .enumerate()
    {
        let ident = PodIdentity {
            pod: PodId(i as u64),
            slot: PodSlot {
                workload: w.id,
                ordinal: 0,
            },
            incarnation: 0,
        };
        let pod = objects::pod_object(&run, &run, &ident, w, 11);
        let name = pod.metadata.name.clone().unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
        if node != usize::MAX {
            bind(&pods, &name, &names[node]).await;
        }
        made.push(name);
    }
    let (crashy_pod, hog_pod, steady_pod, patient_pod) = (&made[0], &made[1], &made[2], &made[3]);

    // every pod runs, the default scheduler's too
    for name in &made {
        wait_until(&format!("{name} running"), || {
            versions(&history, name).iter().any(|p| {
                phase(p) == Some("Running")
                    && container(p).is_some_and(|c| c.ready && c.state.as_ref().is_some_and(|s| s.running.is_some()))
            })
        })
        .await;
    }
    let steady_now = pods.get(steady_pod).await.unwrap();
    let usage = objects::pod_usage_of(&steady_now).expect("a running pod reports its usage");
    assert_eq!(usage.memory_bytes, 100 * MI);
    assert_eq!(
        steady_now.status.as_ref().unwrap().host_ip.as_deref(),
        Some("127.0.0.1")
    );

    // crashes: restartCount grows, with CrashLoopBackOff between restarts
    wait_until("the crash-prone pod restarting twice", || {
        versions(&history, crashy_pod)
            .iter()
            .any(|p| container(p).is_some_and(|c| c.restart_count >= 2))
    })
    .await;
    let seen = versions(&history, crashy_pod);
    let mut last_count = 0;
    let mut backoff_since_last = false;
    let mut ids = Vec::new();
    for p in &seen {
        let Some(c) = container(p) else { continue };
        assert!(c.restart_count >= last_count, "restartCount never goes down");
        if c.restart_count > last_count {
            assert!(
                backoff_since_last,
                "CrashLoopBackOff before restart {}",
                c.restart_count
            );
            backoff_since_last = false;
            last_count = c.restart_count;
        }
        let waiting = c.state.as_ref().and_then(|s| s.waiting.as_ref());
        if waiting.and_then(|w| w.reason.as_deref()) == Some("CrashLoopBackOff") {
            backoff_since_last = true;
            let last = c.last_state.as_ref().and_then(|s| s.terminated.as_ref()).unwrap();
            assert_eq!((last.reason.as_deref(), last.exit_code), (Some("Error"), 1));
        }
        if let Some(id) = &c.container_id
            && ids.last() != Some(id)
        {
            ids.push(id.clone());
        }
    }
    // a new container ID per start
    let unique: std::collections::BTreeSet<&String> = ids.iter().collect();
    assert!(unique.len() >= 3, "{ids:?}");

    // over its limit: OOMKilled
    wait_until("the hog OOM-killed", || {
        versions(&history, hog_pod).iter().any(|p| {
            container(p)
                .and_then(|c| c.last_state.as_ref()?.terminated.as_ref())
                .is_some_and(|t| t.reason.as_deref() == Some("OOMKilled"))
        })
    })
    .await;
    let oom = pods.get(hog_pod).await.unwrap();
    let t = container(&oom)
        .and_then(|c| c.last_state.as_ref()?.terminated.clone())
        .unwrap();
    assert_eq!(
        (t.exit_code, t.message.as_deref()),
        (137, Some(labels::OOM_LIMIT_MESSAGE))
    );

    // a deleted pod (default grace period) disappears: the emulator finalises it
    pods.delete(steady_pod, &DeleteParams::default()).await.unwrap();
    let mut gone = false;
    let started = Instant::now();
    while started.elapsed() < WAIT {
        if pods.get_opt(steady_pod).await.unwrap().is_none() {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(gone, "the deleted pod is still there");

    // the Leases exist and are renewed
    let leases: Api<Lease> = Api::namespaced(client.clone(), labels::NODE_LEASE_NAMESPACE);
    let renew_time = |l: &Lease| l.spec.as_ref().and_then(|s| s.renew_time.clone()).map(|t| t.0);
    let failed = &names[2];
    let before = renew_time(&leases.get(failed).await.unwrap()).unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let renewed = renew_time(&leases.get(failed).await.unwrap()).unwrap();
    assert!(renewed > before, "the Lease is renewed");

    // FailNode: Ready=Unknown, unreachable taints, the Lease goes stale, then eviction
    commands
        .send(EmulatorCommand::FailNode { name: failed.clone() })
        .unwrap();
    let mut node_failed = false;
    let started = Instant::now();
    while started.elapsed() < WAIT && !node_failed {
        let node = nodes_api.get(failed).await.unwrap();
        let unknown = condition(&node, "Ready").is_some_and(|c| c.status == "Unknown");
        let taints = node.spec.as_ref().and_then(|s| s.taints.clone()).unwrap_or_default();
        let unreachable: Vec<&str> = taints
            .iter()
            .filter(|t| t.key == labels::UNREACHABLE_TAINT)
            .map(|t| t.effect.as_str())
            .collect();
        node_failed = unknown && unreachable.contains(&"NoSchedule") && unreachable.contains(&"NoExecute");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        node_failed,
        "the failed node shows Ready=Unknown and both unreachable taints"
    );
    wait_until("the patient pod evicted", || {
        versions(&history, patient_pod).iter().any(|p| {
            phase(p) == Some("Failed")
                && p.status.as_ref().and_then(|s| s.reason.as_deref()) == Some(labels::EVICTED_REASON)
        })
    })
    .await;
    let mut evicted_gone = false;
    let started = Instant::now();
    while started.elapsed() < WAIT {
        if pods.get_opt(patient_pod).await.unwrap().is_none() {
            evicted_gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(evicted_gone, "the evicted pod is deleted");
    let stale = renew_time(&leases.get(failed).await.unwrap()).unwrap();
    tokio::time::sleep(Duration::from_millis(1200)).await;
    assert_eq!(
        renew_time(&leases.get(failed).await.unwrap()).unwrap(),
        stale,
        "a failed node's Lease is not renewed"
    );

    // RecoverNode: Ready again, untainted, renewing
    commands
        .send(EmulatorCommand::RecoverNode { name: failed.clone() })
        .unwrap();
    let mut recovered = false;
    let started = Instant::now();
    while started.elapsed() < WAIT && !recovered {
        let node = nodes_api.get(failed).await.unwrap();
        let ready = condition(&node, "Ready").is_some_and(|c| c.status == "True");
        let tainted = node
            .spec
            .as_ref()
            .and_then(|s| s.taints.as_ref())
            .is_some_and(|ts| ts.iter().any(|t| t.key == labels::UNREACHABLE_TAINT));
        let lease = renew_time(&leases.get(failed).await.unwrap()).unwrap();
        recovered = ready && !tainted && lease > stale;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(recovered, "the recovered node is Ready, untainted and renewing");

    let stats = emulator.stop().await.unwrap();
    assert!(stats.status_writes >= 10, "{stats:?}");
    assert!(stats.lease_renewals >= 6, "{stats:?}");
    cancel.cancel();
}
