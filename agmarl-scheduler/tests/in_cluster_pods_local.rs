//! The in-cluster scheduler as real pods: the Deployment of the local
//! overlay (`deploy/kustomize/overlays/local`) on two real nodes of this
//! machine, from the image the nodes hold, with its service account, RBAC
//! and Lease. The failover and API-server-restart checks of
//! `failover_local.rs` and `apiserver_restart_local.rs` once more, against
//! the pods: only the Lease holder binds; a deleted leader pod releases the
//! Lease and the other replica takes over at once; a SIGKILLed leader's
//! container is restarted by its kubelet and a replica leads again within
//! the lease; an API server outage longer than the lease restarts no
//! container (liveness holds) and the pods created after it are bound; every
//! pod is bound exactly once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube_backend::objects;
use provisioning::kubelets::PodPrograms;
use provisioning::kubelets::config::PAUSE_IMAGE;
use provisioning::local::{LocalOptions, ScopedCluster};
use provisioning::scheduler_deploy::{self, Images};
use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};
use support::*;

const RUN: &str = "in-cluster";
/// The overlay's lease duration.
const LEASE: Duration = Duration::from_secs(15);
/// Pods created while a replica leads are bound within this.
const BIND_WITHIN: Duration = Duration::from_secs(20);
/// A deleted leader releases the Lease as it shuts down: the other replica
/// leads well before the Lease would have run out.
const HANDOVER_WITHIN: Duration = Duration::from_secs(8);
/// Longer than the lease, so the Lease expires while nobody can renew it.
const DOWN_FOR: Duration = Duration::from_secs(20);
/// From the API server's return to new pods bound: the bound of
/// `apiserver_restart_local.rs` (1 + 1 + 0.5 s of election retries and
/// pauses, a lease, 6.4 s of watch back-off) with this lease, rounded up.
const RECOVER_WITHIN: Duration = Duration::from_secs(30);

/// One scheduler pod: its name (the Lease identity) and /metrics address.
#[derive(Debug, Clone)]
struct PodReplica {
    name: String,
    addr: SocketAddr,
    restarts: i32,
}

impl PodReplica {
    fn metric(&self, series: &str) -> Option<f64> {
        let (_, body) = http_get(self.addr, "/metrics")?;
        sample(&body, series)
    }

    /// Waits until `series` reads `value` (a counter is raised a moment after the bind it counts).
    async fn wait_metric(&self, series: &str, value: f64, within: Duration) {
        let started = Instant::now();
        while self.metric(series) != Some(value) {
            assert!(
                started.elapsed() < within,
                "{} {series} is {:?}, not {value}",
                self.name,
                self.metric(series)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// The scheduler's running pods with an address.
async fn replicas(admin: &kube_backend::ApiClient) -> Vec<PodReplica> {
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), SYSTEM_NS);
    let list = pods
        .list(&ListParams::default().labels("app.kubernetes.io/name=agmarl-scheduler"))
        .await
        .unwrap();
    list.items
        .iter()
        .filter(|p| p.metadata.deletion_timestamp.is_none())
        .filter_map(|p| {
            let status = p.status.as_ref()?;
            let ip = status.pod_ip.as_deref()?;
            let restarts = status.container_statuses.as_ref()?.first()?.restart_count;
            Some(PodReplica {
                name: p.metadata.name.clone()?,
                addr: format!("{ip}:9090").parse().ok()?,
                restarts,
            })
        })
        .collect()
}

/// Waits until the Deployment has `count` ready replicas; returns them.
/// `state_dir`: the real nodes' state folder, where their pod logs are.
async fn wait_ready_replicas(
    admin: &kube_backend::ApiClient,
    state_dir: &Path,
    count: i32,
    within: Duration,
) -> Vec<PodReplica> {
    let deployments: Api<Deployment> = Api::namespaced(admin.client(), SYSTEM_NS);
    let started = Instant::now();
    loop {
        let d = deployments.get(scheduler_deploy::DEPLOYMENT).await.unwrap();
        let status = d.status.unwrap_or_default();
        if status.ready_replicas.unwrap_or(0) >= count {
            let found = replicas(admin).await;
            if found.len() >= count as usize {
                eprintln!("{count} scheduler replicas ready after {:?}", started.elapsed());
                return found;
            }
        }
        if started.elapsed() >= within {
            panic!(
                "{count} ready scheduler replicas not there after {within:?}: {status:?}\n{}",
                scheduler_pods_story(admin, state_dir).await
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// What a failed wait needs to be read: every scheduler pod's phase and
/// container states, and the tail of every scheduler container log the
/// nodes wrote (the API server cannot fetch them: it holds no kubelet
/// client certificate).
async fn scheduler_pods_story(admin: &kube_backend::ApiClient, state_dir: &Path) -> String {
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), SYSTEM_NS);
    let Ok(list) = pods
        .list(&ListParams::default().labels("app.kubernetes.io/name=agmarl-scheduler"))
        .await
    else {
        return "(the scheduler pods could not be listed)".into();
    };
    let mut story = String::new();
    for p in &list.items {
        let name = p.metadata.name.clone().unwrap_or_default();
        let status = p.status.as_ref();
        story.push_str(&format!(
            "pod {name} on {:?}: phase {:?}, containers {:?}\n",
            p.spec.as_ref().and_then(|s| s.node_name.clone()),
            status.and_then(|s| s.phase.clone()),
            status.and_then(|s| s.container_statuses.clone()),
        ));
    }
    let mut logs = Vec::new();
    find_files(state_dir, &mut logs);
    for log in logs.iter().filter(|p| {
        let text = p.to_string_lossy();
        text.contains("pod-logs") && text.contains("agmarl-scheduler") && text.ends_with(".log")
    }) {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        story.push_str(&format!("--- {}\n", log.display()));
        for line in &lines[lines.len().saturating_sub(20)..] {
            story.push_str(line);
            story.push('\n');
        }
    }
    story
}

/// Every file under `dir`, depth first (what cannot be read is skipped).
fn find_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let Ok(kind) = entry.file_type() else { continue };
        if kind.is_dir() {
            find_files(&entry.path(), out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}

/// Pods `ids` for the in-cluster scheduler, running the pause image the nodes hold.
async fn create_pause_pods(admin: &kube_backend::ApiClient, ids: std::ops::Range<u64>) -> Vec<String> {
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), RUN);
    let mut names = Vec::new();
    for id in ids {
        let mut pod = pod(RUN, id);
        for c in &mut pod.spec.as_mut().unwrap().containers {
            c.image = Some(PAUSE_IMAGE.to_string());
            c.image_pull_policy = Some("Never".into());
            c.command = None;
            c.args = None;
        }
        names.push(pod.metadata.name.clone().unwrap());
        pods.create(&PostParams::default(), &pod).await.unwrap();
    }
    names
}

/// The pid of the scheduler process of pod `name` (its `--identity`).
fn scheduler_pid(name: &str) -> i32 {
    let out = std::process::Command::new("pgrep")
        .args(["-f", &format!("identity={name}( |$)")])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let pids: Vec<i32> = text.lines().filter_map(|l| l.trim().parse().ok()).collect();
    assert_eq!(pids.len(), 1, "the process of {name}: {text:?}");
    pids[0]
}

async fn leader_among(admin: &kube_backend::ApiClient, within: Duration) -> (PodReplica, Vec<PodReplica>) {
    let started = Instant::now();
    loop {
        let all = replicas(admin).await;
        if let Some(holder) = lease_holder(admin).await
            && let Some(leader) = all.iter().find(|r| r.name == holder).cloned()
            && leader.metric("agmarl_leader") == Some(1.0)
        {
            let others = all.into_iter().filter(|r| r.name != holder).collect();
            return (leader, others);
        }
        assert!(
            started.elapsed() < within,
            "no scheduler pod leads after {within:?} (Lease holder {:?}, pods {all:?})",
            lease_holder(admin).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn plane_with_real_nodes() -> (ScopedCluster, LocalOptions) {
    let mut opts = LocalOptions::private("agmarl-pods").unwrap();
    opts.real_nodes = 2;
    let exe = Path::new(env!("CARGO_BIN_EXE_agmarl-scheduler"));
    let programs = PodPrograms::beside(exe.parent().unwrap())
        .expect("the workload program beside agmarl-scheduler: `cargo build -p workload-runner` first");
    opts.pod_programs = Some(programs);
    (ScopedCluster::up(&opts).unwrap(), opts)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheduler_deployment_fails_over_and_outlives_an_apiserver_restart() {
    let (plane, opts) = plane_with_real_nodes();
    let admin = admin(&plane).await;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let env = scheduler_deploy::loopback_apiserver(plane.server()).unwrap();
    let overlay = scheduler_deploy::overlay_dir(&repo, "local");
    scheduler_deploy::deploy(&admin, &overlay, &Images::dev(), &env)
        .await
        .unwrap();
    let namespaces: Api<core::Namespace> = Api::all(admin.client());
    namespaces
        .create(&PostParams::default(), &objects::run_namespace(RUN, RUN))
        .await
        .unwrap();
    let (seen, watch_task) = watch_bindings(&admin, RUN);

    // --- Two replicas, one per real node (each on its node's address); only the leader binds.
    let state_dir = opts.state_dir.clone();
    let started = wait_ready_replicas(&admin, &state_dir, 2, Duration::from_secs(120)).await;
    assert_ne!(started[0].addr, started[1].addr, "{started:?}");
    let (leader, others) = leader_among(&admin, Duration::from_secs(30)).await;
    assert_eq!(others.len(), 1, "{others:?}");
    assert_eq!(others[0].metric("agmarl_leader"), Some(0.0));
    let first = create_pause_pods(&admin, 0..4).await;
    wait_bound(&admin, RUN, &first, BIND_WITHIN).await;
    leader
        .wait_metric("agmarl_binds_total", 4.0, Duration::from_secs(5))
        .await;
    assert_eq!(others[0].metric("agmarl_binds_total"), Some(0.0));

    // --- Deleting the leader's pod: it releases the Lease on SIGTERM and the other replica leads at once.
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), SYSTEM_NS);
    let deleted = Instant::now();
    pods.delete(&leader.name, &DeleteParams::default()).await.unwrap();
    let (second_leader, _) = leader_among(&admin, HANDOVER_WITHIN).await;
    assert_eq!(second_leader.name, others[0].name);
    eprintln!("a deleted leader pod handed over in {:?}", deleted.elapsed());
    let second = create_pause_pods(&admin, 10..14).await;
    wait_bound(&admin, RUN, &second, BIND_WITHIN).await;

    // --- SIGKILL the leader's process: its kubelet restarts the container, and a replica leads within the lease.
    wait_ready_replicas(&admin, &state_dir, 2, Duration::from_secs(90)).await;
    let killed = Instant::now();
    let pid = scheduler_pid(&second_leader.name);
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL).unwrap();
    let third = create_pause_pods(&admin, 20..24).await;
    wait_bound(&admin, RUN, &third, LEASE + BIND_WITHIN).await;
    eprintln!("pods bound {:?} after the leader was SIGKILLed", killed.elapsed());
    let t = Instant::now();
    loop {
        let restarted = replicas(&admin)
            .await
            .into_iter()
            .find(|r| r.name == second_leader.name)
            .is_some_and(|r| r.restarts > second_leader.restarts);
        if restarted {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "the kubelet did not restart the killed scheduler container of {}",
            second_leader.name
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }

    // --- An API server outage longer than the lease: no container restarts, new pods are bound after it.
    let before = wait_ready_replicas(&admin, &state_dir, 2, Duration::from_secs(90)).await;
    kill_apiserver(&plane);
    let cache_dir = opts.cache_dir.clone();
    let (plane, restarted) = tokio::task::spawn_blocking(move || {
        let mut plane = plane;
        let restarted = plane.restart_apiserver(&cache_dir, DOWN_FOR);
        (plane, restarted)
    })
    .await
    .unwrap();
    restarted.expect("kube-apiserver restarts");
    let up = Instant::now();
    let fourth = create_pause_pods(&admin, 30..34).await;
    wait_bound(&admin, RUN, &fourth, RECOVER_WITHIN).await;
    eprintln!("pods bound {:?} after the API server came back", up.elapsed());
    let after = replicas(&admin).await;
    for r in &before {
        let now = after
            .iter()
            .find(|a| a.name == r.name)
            .expect("the replica is still there");
        assert_eq!(now.restarts, r.restarts, "{} restarted across the outage", r.name);
    }
    leader_among(&admin, Duration::from_secs(10)).await;

    // Every pod bound once, never moved: what the watch saw through the
    // failovers (it may still be backing off after the outage) is where
    // every pod is now.
    watch_task.abort();
    let seen = seen.lock().unwrap().clone();
    let now = node_names(&admin, RUN).await;
    assert_eq!(now.len(), 16, "{now:?}");
    for (pod, node) in &now {
        assert!(
            node.as_deref().is_some_and(|n| n.starts_with("real-")),
            "{pod} on {node:?}"
        );
    }
    assert!(
        seen.len() >= 12,
        "the watch saw the pods bound before the outage: {seen:?}"
    );
    for (pod, nodes) in &seen {
        assert_eq!(nodes.len(), 1, "{pod} seen on {nodes:?}");
        assert_eq!(now.get(pod).cloned().flatten().as_ref(), nodes.first(), "{pod} moved");
    }
    plane.down().unwrap();
}
