//! Two `agmarl-scheduler` processes against a private local control plane,
//! each holding the scheduler service account's token (TokenRequest) and
//! nothing more: only the Lease holder binds, every pod is bound exactly
//! once, a SIGKILLed leader is replaced within a little more than the lease
//! duration, and a SIGTERMed one exits 0 and releases the Lease so the
//! standby takes over at once.

#![allow(clippy::unwrap_used)]

mod support;

use futures::StreamExt;
use k8s_openapi::api::core::v1 as core;
use kube::api::Api;
use kube::runtime::{WatchStreamExt, watcher};
use nix::sys::signal::Signal;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::*;

const RUN: &str = "failover";
const BIND_WITHIN: Duration = Duration::from_secs(20);

/// Every node name each pod of the namespace was ever seen with.
type Seen = Arc<Mutex<BTreeMap<String, Vec<String>>>>;

fn watch_bindings(admin: &kube_backend::ApiClient) -> (Seen, tokio::task::JoinHandle<()>) {
    let seen: Seen = Arc::default();
    let pods: Api<core::Pod> = Api::namespaced(admin.client(), RUN);
    let record = seen.clone();
    let task = tokio::spawn(async move {
        let mut events = watcher(pods, watcher::Config::default()).applied_objects().boxed();
        while let Some(Ok(pod)) = events.next().await {
            let name = pod.metadata.name.clone().unwrap_or_default();
            if let Some(node) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) {
                let mut seen = record.lock().unwrap();
                let nodes = seen.entry(name).or_default();
                if nodes.last() != Some(&node) {
                    nodes.push(node);
                }
            }
        }
    });
    (seen, task)
}

async fn binds(r: &Replica) -> f64 {
    r.metric("agmarl_binds_total").await.unwrap()
}

async fn conflicts(r: &Replica) -> f64 {
    r.metric("agmarl_bind_conflicts_total").await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_binds_and_a_standby_takes_over() {
    let AccountLab {
        plane,
        admin,
        tmp,
        kubeconfig,
    } = account_lab("agmarl-failover").await;
    lab(&admin, RUN, 3).await;
    let (seen, watch_task) = watch_bindings(&admin);

    // --- Phase 1: two replicas with a 4 s lease; SIGKILL the leader.
    let lease = Duration::from_secs(4);
    let mut a = Replica::start(tmp.path(), &kubeconfig, RUN, "replica-a", "4s");
    let mut b = Replica::start(tmp.path(), &kubeconfig, RUN, "replica-b", "4s");
    let leader_id = wait_leader(&admin, &["replica-a", "replica-b"], Duration::from_secs(20)).await;
    let (leader, follower) = if leader_id == a.identity {
        (&mut a, &mut b)
    } else {
        (&mut b, &mut a)
    };
    // /metrics agrees with the Lease (the holder learns it a moment after
    // the Lease says so: the lease manager confirms its write first)
    leader.wait_metric("agmarl_leader", 1.0, Duration::from_secs(5)).await;
    assert_eq!(follower.metric("agmarl_leader").await, Some(0.0));
    for r in [&*leader, &*follower] {
        r.wait_ok("/readyz", Duration::from_secs(20)).await;
        r.wait_ok("/healthz", Duration::from_secs(5)).await;
    }
    let (_, ready) = leader.get("/readyz").await.unwrap();
    assert!(ready.contains("leader, binding"), "{ready}");
    let (_, ready) = follower.get("/readyz").await.unwrap();
    assert!(ready.contains("follower"), "{ready}");

    let first = create_pods(&admin, RUN, 0..12).await;
    let took = wait_bound(&admin, RUN, &first, BIND_WITHIN).await;
    eprintln!("phase 1: 12 pods bound by the leader in {took:?}");
    // the leader's counters reach the pods (the watch can be a moment ahead)
    let t = Instant::now();
    while binds(leader).await < 12.0 && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(binds(leader).await, 12.0, "the leader bound every pod");
    assert_eq!(binds(follower).await, 0.0, "a follower never binds");
    assert_eq!(follower.metric("agmarl_decisions_total").await, Some(0.0));
    assert_eq!(conflicts(leader).await, 0.0);
    let leader_binds = binds(leader).await;

    let killed = Instant::now();
    leader.signal(Signal::SIGKILL);
    assert_eq!(leader.wait_exit(Duration::from_secs(5)), None, "killed by the signal");
    let second = create_pods(&admin, RUN, 100..110).await;
    let takeover = tokio::time::timeout(
        lease + Duration::from_secs(10),
        wait_bound(&admin, RUN, &second, Duration::from_secs(3600)),
    )
    .await;
    assert!(
        takeover.is_ok(),
        "no takeover after {:?}; survivor log:\n{}",
        killed.elapsed(),
        follower.log_text()
    );
    let since_kill = killed.elapsed();
    eprintln!("phase 1: after SIGKILL, 10 new pods bound in {since_kill:?} (lease {lease:?})");
    assert!(
        since_kill < lease + Duration::from_secs(3),
        "takeover took {since_kill:?}, lease {lease:?}; survivor log:\n{}",
        follower.log_text()
    );
    assert_eq!(lease_holder(&admin).await.as_deref(), Some(follower.identity.as_str()));
    follower.wait_metric("agmarl_leader", 1.0, Duration::from_secs(2)).await;
    let t = Instant::now();
    while binds(follower).await < 10.0 && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(binds(follower).await, 10.0, "the survivor bound exactly the new pods");
    assert_eq!(conflicts(follower).await, 0.0);
    assert_eq!(leader_binds + binds(follower).await, 22.0, "22 pods, 22 binds");

    // Graceful stop of the survivor: exit 0 and the Lease released.
    follower.signal(Signal::SIGTERM);
    assert_eq!(
        follower.wait_exit(Duration::from_secs(15)),
        Some(0),
        "{}",
        follower.log_text()
    );
    assert_eq!(lease_holder(&admin).await, None, "SIGTERM releases the Lease");

    // --- Phase 2: a 20 s lease, so a takeover by expiry would take >= 6 s;
    // after a graceful stop the standby must lead within ~2 s.
    let mut c = Replica::start(tmp.path(), &kubeconfig, RUN, "replica-c", "20s");
    let mut d = Replica::start(tmp.path(), &kubeconfig, RUN, "replica-d", "20s");
    let leader_id = wait_leader(&admin, &["replica-c", "replica-d"], Duration::from_secs(20)).await;
    let (leader, standby) = if leader_id == c.identity {
        (&mut c, &mut d)
    } else {
        (&mut d, &mut c)
    };
    standby.wait_ok("/readyz", Duration::from_secs(20)).await;
    leader.wait_ok("/readyz", Duration::from_secs(20)).await;
    let third = create_pods(&admin, RUN, 200..206).await;
    wait_bound(&admin, RUN, &third, BIND_WITHIN).await;
    assert_eq!(binds(standby).await, 0.0);

    let stopped = Instant::now();
    leader.signal(Signal::SIGTERM);
    assert_eq!(
        leader.wait_exit(Duration::from_secs(15)),
        Some(0),
        "{}",
        leader.log_text()
    );
    let exited = stopped.elapsed();
    wait_leader(&admin, &[standby.identity.as_str()], Duration::from_secs(10)).await;
    let handover = stopped.elapsed();
    eprintln!("phase 2: leader exited {exited:?} after SIGTERM; standby led after {handover:?} (lease 20s)");
    assert!(
        handover < Duration::from_secs(4),
        "handover took {handover:?}; standby log:\n{}",
        standby.log_text()
    );
    let fourth = create_pods(&admin, RUN, 300..306).await;
    wait_bound(&admin, RUN, &fourth, BIND_WITHIN).await;
    let t = Instant::now();
    while binds(standby).await < 6.0 && t.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(binds(standby).await, 6.0);
    assert_eq!(conflicts(standby).await, 0.0);
    standby.signal(Signal::SIGTERM);
    assert_eq!(standby.wait_exit(Duration::from_secs(15)), Some(0));

    // Every pod bound once, and never moved.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 34, "{seen:?}");
    for (pod, nodes) in &seen {
        assert_eq!(nodes.len(), 1, "{pod} seen on {nodes:?}");
    }
    watch_task.abort();
    // A LeaderElection event per takeover.
    let events: Api<core::Event> = Api::namespaced(admin.client(), SYSTEM_NS);
    let elected = events
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("LeaderElection"))
        .count();
    assert!(elected >= 4, "{elected} LeaderElection events");
    drop((a, b, c, d));
    plane.down().unwrap();
}
