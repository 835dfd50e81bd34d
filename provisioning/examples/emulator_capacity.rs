//! The node emulator's capacity: how it keeps 1,000 emulated nodes and
//! 10,000 pods alive on a private local control plane (same machine, so the
//! API server, etcd and this process share its cores).
//!
//! 1. creates the node objects and starts the emulator (adoption time);
//! 2. creates the pods already bound (spec.nodeName, so no scheduler is in
//!    the way) and waits until the emulator reports all of them started
//!    (pod creation rate, status writes per second during the wave);
//! 3. keeps them alive for a while in scenario time 10 times faster than the
//!    wall clock, with crashes (Lease renewals per second, status writes per
//!    second, timer lag, write backlog, this process's CPU and RSS);
//! 4. checks through the API that the pods are Running.
//!
//! `cargo run --release -p provisioning --example emulator_capacity [nodes] [pods] [steady_secs]`

use futures::StreamExt;
use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, ListParams, PostParams};
use kube_backend::emulator::{Emulator, EmulatorOptions, EmulatorStats};
use kube_backend::objects::{self, PodIdentity};
use kube_backend::{ApiClient, ClientOptions, ScenarioClock, labels};
use provisioning::local::{LocalOptions, ScopedCluster};
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::testing::{self, PodSpecChanges};
use schedlab_core::{Dist, NodeId, NodeSpec, PodId, PodSlot, Resources, Workload};
use std::collections::BTreeMap;
use std::error::Error;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const RUN: &str = "emucap";
const GI: u64 = 1 << 30;
const MI: u64 = 1 << 20;
/// Requests in flight while creating objects.
const CREATORS: usize = 32;
const SCALE: f64 = 10.0;
/// The emulator's client: enough for 100 renewals/s plus statuses.
const EMULATOR_QPS: f32 = 1000.0;
const EMULATOR_BURST: u32 = 2000;

type Res<T> = Result<T, Box<dyn Error>>;

fn node_spec(i: usize) -> NodeSpec {
    NodeSpec::plain(format!("n{i:04}"), Resources::new(8_000, 32 * GI), 0.2)
}

fn workload() -> Workload {
    let spec = testing::pod(100, 128 * MI)
        .scheduler("nobody")
        .usage(
            Dist::Uniform { min: 50.0, max: 150.0 },
            Dist::Uniform {
                min: (64 * MI) as f64,
                max: (192 * MI) as f64,
            },
        )
        // about one crash per pod per scenario hour
        .crash_rate(1.0);
    Workload {
        recreate: false,
        ..testing::workload(0, "w", spec)
    }
}

fn arg(i: usize, default: usize) -> usize {
    std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

/// This process's resident memory (KiB) and CPU seconds so far.
fn own_usage() -> (u64, f64) {
    let rss = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0);
    // utime and stime, fields 14 and 15 of /proc/self/stat, in clock ticks (100 Hz)
    let cpu = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|t| {
            let after = t.rsplit_once(')')?.1;
            let f: Vec<&str> = after.split_whitespace().collect();
            Some((f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?) / 100.0)
        })
        .unwrap_or(0.0);
    (rss, cpu)
}

fn rss_of(pid: i32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn rate(n: u64, d: Duration) -> f64 {
    n as f64 / d.as_secs_f64().max(1e-9)
}

fn main() -> Res<()> {
    let nodes = arg(1, 1000);
    let pods = arg(2, 10_000);
    let steady = Duration::from_secs(arg(3, 60) as u64);
    let t0 = Instant::now();
    let plane = ScopedCluster::up(&LocalOptions::private("emulator-capacity")?)?;
    println!("control plane up in {:.1}s", t0.elapsed().as_secs_f64());
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let result = rt.block_on(measure(&plane, nodes, pods, steady));
    for (name, pid) in plane.pids() {
        println!("{name}: RSS {} MiB", rss_of(pid) / 1024);
    }
    result
}

async fn measure(plane: &ScopedCluster, nodes: usize, pods: usize, steady: Duration) -> Res<()> {
    let kubeconfig = plane.admin_kubeconfig().to_path_buf();
    let admin = ApiClient::connect(&ClientOptions {
        kubeconfig: Some(kubeconfig.clone()),
        qps: 5000.0,
        burst: 5000,
        ..Default::default()
    })
    .await?;
    let emulator_client = ApiClient::connect(&ClientOptions {
        kubeconfig: Some(kubeconfig),
        qps: EMULATOR_QPS,
        burst: EMULATOR_BURST,
        ..Default::default()
    })
    .await?;
    let client = admin.client();
    let mut ns = core::Namespace::default();
    ns.metadata.name = Some(RUN.into());
    ns.metadata.labels = Some(BTreeMap::from([(labels::RUN.to_string(), RUN.to_string())]));
    Api::<core::Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await?;

    // 1. nodes, then the emulator adopts them
    let started = Instant::now();
    let nodes_api: Api<core::Node> = Api::all(client.clone());
    let node_names: Vec<String> = (0..nodes).map(|i| objects::node_name(RUN, &node_spec(i))).collect();
    let created: Vec<_> = futures::stream::iter(0..nodes)
        .map(|i| {
            let api = nodes_api.clone();
            async move {
                let node = objects::node_object(RUN, NodeId(i as u32), &node_spec(i), true);
                api.create(&PostParams::default(), &node).await
            }
        })
        .buffer_unordered(CREATORS)
        .collect()
        .await;
    for c in created {
        c?;
    }
    println!("{nodes} nodes created in {:.1}s", started.elapsed().as_secs_f64());
    let cancel = CancellationToken::new();
    let clock = ScenarioClock::starting_now(SCALE)?;
    let started = Instant::now();
    let emulator = Emulator::start(
        emulator_client,
        EmulatorOptions::new(RUN, ModelConfig::default(), clock),
        cancel.clone(),
    )
    .await?;
    println!(
        "emulator adopted {} nodes in {:.2}s",
        emulator.nodes(),
        started.elapsed().as_secs_f64()
    );

    // 2. the pod wave
    let w = workload();
    let pods_api: Api<core::Pod> = Api::namespaced(client.clone(), RUN);
    let before = emulator.stats();
    let wave = Instant::now();
    let created: Vec<_> = futures::stream::iter(0..pods)
        .map(|i| {
            let api = pods_api.clone();
            let w = &w;
            let node = node_names[i % nodes].clone();
            async move {
                let ident = PodIdentity {
                    pod: PodId(i as u64),
                    slot: PodSlot {
                        workload: w.id,
                        ordinal: i as u32,
                    },
                    incarnation: 0,
                };
                let mut pod = objects::pod_object(RUN, RUN, &ident, w, 1);
                if let Some(spec) = pod.spec.as_mut() {
                    spec.node_name = Some(node);
                }
                api.create(&PostParams::default(), &pod).await
            }
        })
        .buffer_unordered(CREATORS)
        .collect()
        .await;
    let mut failed = 0;
    for c in created {
        if let Err(e) = c {
            failed += 1;
            if failed < 5 {
                println!("create failed: {e}");
            }
        }
    }
    let created_in = wave.elapsed();
    println!(
        "{} pods created in {:.1}s ({:.0}/s), {failed} failed",
        pods - failed,
        created_in.as_secs_f64(),
        rate((pods - failed) as u64, created_in)
    );
    // every pod was bound and started: a status for each, nothing waiting
    let deadline = Instant::now() + Duration::from_secs(300);
    while (emulator.pods() < pods - failed || emulator.backlog() > 0) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let wave_time = wave.elapsed();
    let after = emulator.stats();
    println!(
        "wave: {} pods played, backlog {} after {:.1}s; {} status writes ({:.0}/s), {} lease renewals ({:.0}/s)",
        emulator.pods(),
        emulator.backlog(),
        wave_time.as_secs_f64(),
        after.status_writes - before.status_writes,
        rate(after.status_writes - before.status_writes, wave_time),
        after.lease_renewals - before.lease_renewals,
        rate(after.lease_renewals - before.lease_renewals, wave_time),
    );

    // 3. steady state
    let (_, cpu0) = own_usage();
    let s0: EmulatorStats = emulator.stats();
    let t = Instant::now();
    let mut max_backlog = 0;
    while t.elapsed() < steady {
        tokio::time::sleep(Duration::from_millis(500)).await;
        max_backlog = max_backlog.max(emulator.backlog());
    }
    let span = t.elapsed();
    let s1 = emulator.stats();
    let (rss, cpu1) = own_usage();
    println!(
        "steady {:.0}s (scenario x{SCALE}): {:.1} lease renewals/s, {:.1} status writes/s, max backlog {max_backlog}, \
         timer lag max {} ms, {} retried errors, emulator process CPU {:.0}% of one core, RSS {} MiB",
        span.as_secs_f64(),
        rate(s1.lease_renewals - s0.lease_renewals, span),
        rate(s1.status_writes - s0.status_writes, span),
        s1.lag_ms_max,
        s1.api_errors_retried,
        100.0 * (cpu1 - cpu0) / span.as_secs_f64(),
        rss / 1024,
    );

    // 4. what the API shows
    let mut running = 0usize;
    let mut continue_token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().labels(&labels::run_selector(RUN)).limit(1000);
        if let Some(token) = &continue_token {
            lp = lp.continue_token(token);
        }
        let page = pods_api.list(&lp).await?;
        running += page
            .items
            .iter()
            .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running"))
            .count();
        continue_token = page.metadata.continue_.filter(|c| !c.is_empty());
        if continue_token.is_none() {
            break;
        }
    }
    println!("API: {running} of {} pods Running", pods - failed);
    let stats = emulator.stop().await?;
    println!("totals: {stats:?}");
    cancel.cancel();
    Ok(())
}
