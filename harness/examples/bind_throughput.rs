//! Binds per second of schedlab's watch-and-bind loop, deciding with one of
//! its arms (`binpack` by default, or e.g. `agmarl` with its bundled
//! checkpoint), against the real kube-scheduler, at the same client QPS and
//! burst, on a private local control plane: 100 node objects, 1,000 pending
//! pods.
//!
//! For each scheduler the pods are created first, while it cannot see them
//! (kube-scheduler is paused with SIGSTOP; the loop is not started yet), so
//! pod creation does not limit the rate measured. Then the scheduler is let
//! go (SIGCONT; the loop starts) and an admin watch notes when each pod's
//! nodeName appears. Reported: wall time from release to the last binding,
//! and the rate between the first and the last binding.
//!
//! `cargo run --release -p harness --example bind_throughput [pods] [nodes] [arm]`

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::runtime::watcher;
use kube_backend::bind::{self, BindOptions, BindStats};
use kube_backend::objects::{self, PodIdentity};
use kube_backend::{ApiClient, ClientOptions, ScenarioClock, labels};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use provisioning::local::{self, LocalOptions, ScopedCluster};
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::testing::{self, PodSpecChanges};
use schedlab_core::{ClusterView, NodeId, NodeSpec, PendingPod, PodId, PodSlot, Resources, Workload};
use std::collections::HashMap;
use std::error::Error;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const RUN: &str = "bindtp";
const QPS: f32 = 500.0;
const BURST: u32 = 1000;
const GI: u64 = 1 << 30;
const MI: u64 = 1 << 20;

type Res<T> = Result<T, Box<dyn Error>>;

fn node_spec(i: usize) -> NodeSpec {
    NodeSpec::plain(format!("n{i:03}"), Resources::new(32_000, 128 * GI), 0.2)
}

fn workload(scheduler: &str) -> Workload {
    Workload {
        recreate: false,
        ..testing::workload(0, "tp", testing::pod(100, 128 * MI).scheduler(scheduler))
    }
}

async fn connect(kubeconfig: &std::path::Path, qps: f32, burst: u32) -> Res<ApiClient> {
    Ok(ApiClient::connect(&ClientOptions {
        kubeconfig: Some(kubeconfig.to_path_buf()),
        qps,
        burst,
        ..Default::default()
    })
    .await?)
}

async fn create_namespace(admin: &ApiClient, name: &str) -> Res<()> {
    let ns = objects::run_namespace(name, RUN);
    Api::<core::Namespace>::all(admin.client())
        .create(&PostParams::default(), &ns)
        .await?;
    Ok(())
}

/// Creates `count` pods with a few requests in flight at a time.
async fn create_pods(admin: &ApiClient, ns: &str, scheduler: &str, count: usize) -> Res<Duration> {
    let started = Instant::now();
    let w = workload(scheduler);
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), ns);
    futures::stream::iter(0..count)
        .map(|i| {
            let ident = PodIdentity {
                pod: PodId(i as u64),
                slot: PodSlot {
                    workload: w.id,
                    ordinal: i as u32,
                },
                incarnation: 0,
            };
            let pod = objects::pod_object(RUN, ns, &ident, &w, 1);
            let pods = pods.clone();
            async move {
                admin.throttle().await;
                pods.create(&PostParams::default(), &pod).await.map(|_| ())
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(started.elapsed())
}

/// Watches `ns` from a fully listed start; `release` lets the scheduler go;
/// returns each binding's time since the release.
async fn time_bindings(
    admin: &ApiClient,
    ns: &str,
    count: usize,
    release: impl AsyncFnOnce() -> Res<()>,
) -> Res<Vec<Duration>> {
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), ns);
    let mut stream = watcher(pods, watcher::Config::default()).boxed();
    // wait for the initial listing, so it is not timed
    loop {
        match stream.try_next().await? {
            Some(watcher::Event::InitDone) => break,
            Some(_) => {}
            None => return Err("watch ended".into()),
        }
    }
    let t0 = Instant::now();
    release().await?;
    let mut bound: HashMap<String, Duration> = HashMap::new();
    let deadline = t0 + Duration::from_secs(120);
    while bound.len() < count {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(event) = tokio::time::timeout(left, stream.try_next()).await else {
            return Err(format!("only {} of {count} pods bound after 120 s", bound.len()).into());
        };
        if let Some(watcher::Event::Apply(pod) | watcher::Event::InitApply(pod)) = event?
            && objects::pod_node_name(&pod).is_some()
            && let Some(name) = pod.metadata.name.clone()
        {
            bound.entry(name).or_insert_with(|| t0.elapsed());
        }
    }
    let mut times: Vec<Duration> = bound.into_values().collect();
    times.sort();
    Ok(times)
}

fn report(who: &str, times: &[Duration]) {
    let (Some(first), Some(last)) = (times.first(), times.last()) else {
        return;
    };
    let span = last.saturating_sub(*first).as_secs_f64();
    println!(
        "{who:>15}: {} pods bound in {:.2} s after release ({:.0} binds/s); first bind after {:.3} s, \
         then {:.0} binds/s (first to last)",
        times.len(),
        last.as_secs_f64(),
        times.len() as f64 / last.as_secs_f64(),
        first.as_secs_f64(),
        (times.len() - 1) as f64 / span.max(1e-9),
    );
}

async fn clear(admin: &ApiClient, ns: &str) -> Res<()> {
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), ns);
    pods.delete_collection(&DeleteParams::default().grace_period(0), &ListParams::default())
        .await?;
    while !pods
        .list_metadata(&ListParams::default().limit(1))
        .await?
        .items
        .is_empty()
    {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(())
}

fn signal(pid: i32, sig: Signal) -> Res<()> {
    kill(Pid::from_raw(pid), sig)?;
    Ok(())
}

async fn bench(plane: &ScopedCluster, pods: usize, nodes: usize, arm: &str) -> Res<BindStats> {
    let admin = connect(plane.admin_kubeconfig(), 5000.0, 10_000).await?;
    let node_api: Api<core::Node> = Api::all(admin.client());
    for i in 0..nodes {
        let node = objects::node_object(RUN, NodeId(i as u32), &node_spec(i), false);
        node_api.create(&PostParams::default(), &node).await?;
    }
    let (qps, burst) = plane.client_rate();
    println!(
        "{nodes} nodes, {pods} pods per scheduler; client rate limits: kube-scheduler {qps}/{burst}, loop {QPS}/{BURST}"
    );

    // The real kube-scheduler, paused while its pods are created.
    let scheduler_pid = plane
        .pids()
        .into_iter()
        .find(|(name, _)| *name == local::SCHEDULER)
        .map(|(_, pid)| pid)
        .ok_or("no kube-scheduler process")?;
    create_namespace(&admin, "tp-default").await?;
    signal(scheduler_pid, Signal::SIGSTOP)?;
    let created = create_pods(&admin, "tp-default", "default-scheduler", pods).await;
    let default_times = match created {
        Ok(took) => {
            println!("created {pods} default-scheduler pods in {:.2} s", took.as_secs_f64());
            time_bindings(&admin, "tp-default", pods, async || {
                signal(scheduler_pid, Signal::SIGCONT)
            })
            .await
        }
        Err(e) => Err(e),
    };
    // never leave the scheduler stopped
    let _ = signal(scheduler_pid, Signal::SIGCONT);
    let default_times = default_times?;
    clear(&admin, "tp-default").await?;

    // schedlab's loop, started once its pods exist.
    let ns = format!("tp-{arm}");
    create_namespace(&admin, &ns).await?;
    let took = create_pods(&admin, &ns, arm, pods).await?;
    println!("created {pods} {arm} pods in {:.2} s", took.as_secs_f64());
    let agmarl = connect(plane.agmarl_kubeconfig(), QPS, BURST).await?;
    let cancel = CancellationToken::new();
    let mut task = None;
    let opts = BindOptions {
        scheduler_name: arm.into(),
        namespace: None,
        node_selector: Some(labels::run_selector(RUN)),
        model: ModelConfig::default(),
    };
    let mut policy = scheduler::arm(arm, 1)?;
    let placer = move |pod: &PendingPod<'_>, view: &ClusterView<'_>| policy.schedule(pod, view);
    let loop_times = time_bindings(&admin, &ns, pods, async || {
        task = Some(tokio::spawn(bind::run(
            agmarl,
            opts,
            ScenarioClock::starting_now(1.0)?,
            Box::new(placer),
            cancel.clone(),
        )));
        Ok(())
    })
    .await?;
    cancel.cancel();
    let stats = task.ok_or("loop not started")?.await??;

    report("kube-scheduler", &default_times);
    report(&format!("loop ({arm})"), &loop_times);
    Ok(stats)
}

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let pods = number(0, 1000);
    let nodes = number(1, 100);
    let arm = args.get(2).cloned().unwrap_or_else(|| "binpack".into());
    let mut opts = LocalOptions::private("bind-throughput")?;
    opts.scheduler_qps = QPS;
    opts.scheduler_burst = BURST;
    let plane = ScopedCluster::up(&opts)?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let stats = rt.block_on(bench(&plane, pods, nodes, &arm))?;
    println!(
        "loop: {} decisions, {} binds, {} conflicts, {} throttled, {} unavailable; decision p50 {} µs p99 {} µs; \
         bind POST p50 {} µs p99 {} µs",
        stats.decisions,
        stats.binds,
        stats.conflicts,
        stats.throttled,
        stats.unavailable,
        stats.decision_latency.p50_micros,
        stats.decision_latency.p99_micros,
        stats.bind_latency.p50_micros,
        stats.bind_latency.p99_micros,
    );
    println!("(2 cores shared with other work: rates are pessimistic)");
    Ok(())
}
