//! Two `agmarl-scheduler` replicas against a private local control plane
//! whose kube-apiserver is SIGKILLed and kept down for longer than the
//! lease: the leader cannot renew and must fence itself (stop binding)
//! while the API is gone; neither process exits or fails its liveness probe
//! on the lost connection; once the API server is back a single replica
//! leads again and binds the new pods, every pod bound exactly once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::*;

const RUN: &str = "apiserver-restart";
const LEASE: Duration = Duration::from_secs(4);
/// Longer than the lease, so the Lease expires while nobody can renew it.
const DOWN_FOR: Duration = Duration::from_secs(7);
/// The leader's Lease is valid until its last renewal (before the kill) plus
/// the lease; it stops binding half a renewal margin (0.5 s) before that,
/// checking every 0.5 s. A further 0.5 s covers the sampling period.
const FENCED_BY: Duration = Duration::from_millis(4500);
/// From the restart call's return (the API server answers /readyz) to every
/// new pod bound. The Lease last renewed before the kill has expired by then
/// (DOWN_FOR > LEASE), so no replica has to wait out a valid Lease. What can
/// delay the takeover:
/// - the election's retry after failed requests (1 s), the lease manager's
///   random pause after force-releasing an expired Lease (up to 1 s) and
///   one Lease check (0.5 s) before a claim counts as fresh;
/// - a contender that loses the lock race sleeps until the winner's Lease
///   expires (LEASE) should the winner fence itself again;
/// - a bind loop whose watches broke in the outage retries them on the
///   watcher's doubling back-off (800 ms, 1.6, 3.2, 6.4 s: the step due at
///   this outage length). A new term opens fresh watches, so this only
///   counts if a term outlived the outage, which fencing prevents; it is
///   kept so that the bound holds either way.
///
/// 1 + 1 + 0.5 + 4 + 6.4 s, rounded up with 2.1 s of margin.
const RECOVER_WITHIN: Duration = Duration::from_secs(15);
/// After the new leader appears, how long to keep checking that it stays
/// the only one (a flapping election would show within a lease or two).
const SETTLED_FOR: Duration = Duration::from_secs(8);

/// What both replicas answered at one instant.
#[derive(Debug, Clone)]
struct Sample {
    at: Instant,
    /// `agmarl_leader` of replica a and b (None: no answer)
    leader: [Option<f64>; 2],
    /// /healthz status of replica a and b (None: no answer)
    healthz: [Option<u16>; 2],
}

/// Polls both replicas' /metrics and /healthz every 100 ms until aborted.
fn monitor(addrs: [SocketAddr; 2]) -> (Arc<Mutex<Vec<Sample>>>, tokio::task::JoinHandle<()>) {
    let samples: Arc<Mutex<Vec<Sample>>> = Arc::default();
    let record = samples.clone();
    let task = tokio::spawn(async move {
        loop {
            let at = Instant::now();
            let probe =
                |addr: SocketAddr, path: &'static str| tokio::task::spawn_blocking(move || http_get(addr, path));
            let (ma, mb, ha, hb) = tokio::join!(
                probe(addrs[0], "/metrics"),
                probe(addrs[1], "/metrics"),
                probe(addrs[0], "/healthz"),
                probe(addrs[1], "/healthz"),
            );
            let leader = |m: Option<(u16, String)>| m.and_then(|(_, body)| sample(&body, "agmarl_leader"));
            let status = |h: Option<(u16, String)>| h.map(|(code, _)| code);
            let s = Sample {
                at,
                leader: [leader(ma.unwrap()), leader(mb.unwrap())],
                healthz: [status(ha.unwrap()), status(hb.unwrap())],
            };
            record.lock().unwrap().push(s);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    (samples, task)
}

async fn counter(r: &Replica, series: &str) -> f64 {
    r.metric(series).await.unwrap()
}

async fn total(replicas: [&Replica; 2], series: &str) -> f64 {
    counter(replicas[0], series).await + counter(replicas[1], series).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scheduler_survives_an_apiserver_restart() {
    let (plane, lopts) = plane_with_options("agmarl-apiserver-restart");
    let admin = admin(&plane).await;
    let tmp = tempfile::tempdir().unwrap();
    let kubeconfig = tmp.path().join("sa.kubeconfig");
    as_scheduler_account(&admin, &kubeconfig).await;
    lab(&admin, RUN, 3).await;
    let (seen, watch_task) = watch_bindings(&admin, RUN);

    let lease = format!("{}s", LEASE.as_secs());
    let mut a = Replica::start(tmp.path(), &kubeconfig, RUN, "replica-a", &lease);
    let mut b = Replica::start(tmp.path(), &kubeconfig, RUN, "replica-b", &lease);
    let first_leader = wait_leader(&admin, &["replica-a", "replica-b"], Duration::from_secs(20)).await;
    let (leader, follower) = if first_leader == a.identity { (&a, &b) } else { (&b, &a) };
    leader.wait_metric("agmarl_leader", 1.0, Duration::from_secs(5)).await;
    for r in [leader, follower] {
        r.wait_ok("/readyz", Duration::from_secs(20)).await;
    }
    let first = create_pods(&admin, RUN, 0..12).await;
    wait_bound(&admin, RUN, &first, Duration::from_secs(20)).await;
    let t = Instant::now();
    while counter(leader, "agmarl_binds_total").await < 12.0 && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(counter(leader, "agmarl_binds_total").await, 12.0);
    assert_eq!(counter(follower, "agmarl_binds_total").await, 0.0);
    let before = node_names(&admin, RUN).await;

    // --- The outage: SIGKILL, DOWN_FOR, start again, wait until ready.
    let (samples, monitor_task) = monitor([a.addr, b.addr]);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = Instant::now();
    kill_apiserver(&plane);
    let cache_dir = lopts.cache_dir.clone();
    let (plane, restarted) = tokio::task::spawn_blocking(move || {
        let mut plane = plane;
        let restarted = plane.restart_apiserver(&cache_dir, DOWN_FOR);
        (plane, restarted)
    })
    .await
    .unwrap();
    let unavailable = restarted.expect("kube-apiserver restarts");
    let up = Instant::now();
    eprintln!(
        "kube-apiserver unavailable {:?} (restart call {unavailable:?}); leader before: {first_leader}",
        up - killed
    );
    assert!(a.running(), "replica-a exited on the outage; log:\n{}", a.log_text());
    assert!(b.running(), "replica-b exited on the outage; log:\n{}", b.log_text());

    // Fencing: once the old Lease has run out, nobody claims to lead (until
    // DOWN_FOR the API server is surely down; it answers a moment before
    // the restart call has seen it ready).
    let outage: Vec<Sample> = samples
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.at >= killed + FENCED_BY && s.at < killed + DOWN_FOR)
        .cloned()
        .collect();
    assert!(outage.len() >= 10, "too few samples in the outage: {outage:?}");
    for s in &outage {
        assert_eq!(
            s.leader,
            [Some(0.0), Some(0.0)],
            "a replica claims to lead {:?} after the kill, with no API to renew its Lease; logs:\n{}\n{}",
            s.at - killed,
            a.log_text(),
            b.log_text()
        );
    }
    let fenced_at = samples
        .lock()
        .unwrap()
        .iter()
        .find(|s| s.at >= killed && s.leader == [Some(0.0), Some(0.0)])
        .map(|s| s.at - killed);
    eprintln!("the old leader stopped leading {fenced_at:?} after the kill (lease {LEASE:?})");

    // --- Recovery: new pods are bound by one leader.
    let second = create_pods(&admin, RUN, 100..112).await;
    let bound_after = tokio::time::timeout(
        RECOVER_WITHIN,
        wait_bound(&admin, RUN, &second, Duration::from_secs(3600)),
    )
    .await;
    assert!(
        bound_after.is_ok(),
        "new pods unbound {:?} after the API server came back; logs:\n{}\n{}",
        up.elapsed(),
        a.log_text(),
        b.log_text()
    );
    let recovered = up.elapsed();
    // the API server cannot answer before DOWN_FOR; the first leader after
    // that is the new term
    let led_after = samples
        .lock()
        .unwrap()
        .iter()
        .find(|s| s.at >= killed + DOWN_FOR && s.leader.contains(&Some(1.0)))
        .map(|s| s.at - killed);
    eprintln!(
        "after the restart: a leader {led_after:?} after the kill; 12 new pods bound {recovered:?} after the \
         restart call returned ({:?} after the kill)",
        killed.elapsed()
    );
    let settled = killed + led_after.expect("a leader after the restart");
    let stale = [&a, &b].map(|r| r.log_text().contains("has run out; leading once it is renewed"));
    eprintln!("a replica held back on an expired Lease naming it: {stale:?}");
    tokio::time::sleep(SETTLED_FOR).await;
    monitor_task.abort();
    let samples = samples.lock().unwrap().clone();

    let after: Vec<&Sample> = samples.iter().filter(|s| s.at >= settled).collect();
    assert!(after.len() >= 40, "too few samples after the restart: {}", after.len());
    for s in &after {
        let leaders = s.leader.iter().filter(|l| **l == Some(1.0)).count();
        assert!(
            leaders <= 1,
            "both replicas lead {:?} after the restart; logs:\n{}\n{}",
            s.at - up,
            a.log_text(),
            b.log_text()
        );
    }
    // one leader now, the one the Lease names
    let holder = lease_holder(&admin).await.expect("a Lease holder");
    let (now_leader, now_follower) = if holder == a.identity { (&a, &b) } else { (&b, &a) };
    assert_eq!(
        now_leader.metric("agmarl_leader").await,
        Some(1.0),
        "{holder} holds the Lease"
    );
    assert_eq!(now_follower.metric("agmarl_leader").await, Some(0.0));

    // Liveness held throughout: a lost API connection is no reason to restart.
    for s in &samples {
        assert_eq!(
            s.healthz,
            [Some(200), Some(200)],
            "/healthz {:?} after the kill",
            s.at.saturating_duration_since(killed)
        );
    }
    for r in [&a, &b] {
        r.wait_ok("/healthz", Duration::from_secs(2)).await;
        r.wait_ok("/readyz", Duration::from_secs(10)).await;
    }

    // Every pod bound once: 24 binds in all, no conflict, no pod moved.
    let t = Instant::now();
    while total([&a, &b], "agmarl_binds_total").await < 24.0 && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(total([&a, &b], "agmarl_binds_total").await, 24.0, "24 pods, 24 binds");
    assert_eq!(total([&a, &b], "agmarl_bind_conflicts_total").await, 0.0);
    let now = node_names(&admin, RUN).await;
    assert_eq!(now.len(), 24);
    assert!(now.values().all(Option::is_some), "{now:?}");
    for (pod, node) in &before {
        assert_eq!(now.get(pod), Some(node), "{pod} moved across the restart");
    }
    // the test's own watch re-lists after the restart with back-off: give it
    // time to catch up on a loaded machine before reading what it saw
    let t = Instant::now();
    while seen.lock().unwrap().len() < 24 && t.elapsed() < Duration::from_secs(15) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    watch_task.abort();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 24, "{seen:?}");
    for (pod, nodes) in &seen {
        assert_eq!(nodes.len(), 1, "{pod} seen on {nodes:?}");
    }

    assert!(a.running(), "{}", a.log_text());
    assert!(b.running(), "{}", b.log_text());
    drop((a, b));
    plane.down().unwrap();
}
