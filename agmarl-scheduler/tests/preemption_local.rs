//! The in-cluster scheduler preempts as kube-scheduler does, against a
//! private local control plane, holding the scheduler service account's
//! token (so its RBAC is what the manifests grant): a full node holds pods of
//! low priority, a pod of high priority arrives, and `agmarl-scheduler`
//! deletes as few of them as make room (each with its own grace period),
//! nominates the pod to the node with PodScheduled=False, deletes nothing
//! more while the victims terminate, and binds the pod there once they are
//! gone. No kubelet runs here, so the test finishes the victims' graceful
//! deletion as a kubelet would once their containers stopped.

#![allow(clippy::unwrap_used)]

mod support;

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube_backend::objects::{self, PodIdentity};
use schedlab_core::testing::{self, PodSpecChanges};
use schedlab_core::{PodId, PodSlot, Workload};
use std::time::{Duration, Instant};
use support::*;

const RUN: &str = "preempt";
const MI: u64 = 1 << 20;
const LOW: i32 = 10;
const HIGH: i32 = 1000;
/// How long the test waits for the scheduler to act on something it sees.
const WITHIN: Duration = Duration::from_secs(20);

fn workload(id: u32, name: &str, cpu_milli: u64, priority: i32) -> Workload {
    Workload {
        recreate: false,
        ..testing::workload(
            id,
            name,
            testing::pod(cpu_milli, 64 * MI).priority(priority).scheduler(SCHEDULER),
        )
    }
}

fn pod_of(w: &Workload, id: u64, ordinal: u32) -> core::Pod {
    let ident = PodIdentity {
        pod: PodId(id),
        slot: PodSlot {
            workload: w.id,
            ordinal,
        },
        incarnation: 0,
    };
    objects::pod_object(RUN, RUN, &ident, w, 7)
}

async fn priority_class(admin: &kube_backend::ApiClient, value: i32) {
    let classes: Api<PriorityClass> = Api::all(admin.client());
    let class = PriorityClass {
        metadata: ObjectMeta {
            name: Some(objects::priority_class_name(RUN, value)),
            ..Default::default()
        },
        value,
        ..Default::default()
    };
    classes.create(&PostParams::default(), &class).await.unwrap();
}

async fn pods(admin: &kube_backend::ApiClient) -> Vec<core::Pod> {
    let api: Api<core::Pod> = Api::namespaced(admin.client(), RUN);
    api.list(&ListParams::default()).await.unwrap().items
}

fn name(p: &core::Pod) -> String {
    p.metadata.name.clone().unwrap()
}

fn nominated_node(p: &core::Pod) -> Option<&str> {
    p.status.as_ref()?.nominated_node_name.as_deref()
}

/// The run's pods once `ready` holds for them (after [`WITHIN`] the test
/// fails, showing them and the scheduler's log).
async fn wait_for(
    admin: &kube_backend::ApiClient,
    what: &str,
    replica: &Replica,
    ready: impl Fn(&[core::Pod]) -> bool,
) -> Vec<core::Pod> {
    let started = Instant::now();
    loop {
        let now = pods(admin).await;
        if ready(&now) {
            return now;
        }
        assert!(
            started.elapsed() < WITHIN,
            "{what} not seen after {WITHIN:?}: {:#?}\nlog:\n{}",
            now.iter()
                .map(|p| (
                    name(p),
                    objects::pod_node_name(p).map(str::to_string),
                    p.metadata.deletion_timestamp.is_some(),
                    nominated_node(p).map(str::to_string)
                ))
                .collect::<Vec<_>>(),
            replica.log_text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn terminating(pods: &[core::Pod]) -> Vec<String> {
    pods.iter()
        .filter(|p| p.metadata.deletion_timestamp.is_some())
        .map(name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_high_priority_pod_preempts_and_binds_once_its_victims_are_gone() {
    let AccountLab {
        plane,
        admin,
        tmp,
        kubeconfig,
    } = account_lab("agmarl-preempt").await;
    // one node of 8000m, full with four pods of 2000m and low priority
    let node = lab(&admin, RUN, 1).await.remove(0);
    priority_class(&admin, LOW).await;
    priority_class(&admin, HIGH).await;
    let api: Api<core::Pod> = Api::namespaced(admin.client(), RUN);
    let low = workload(0, "low", 2000, LOW);
    let mut low_names = Vec::new();
    for i in 0..4u32 {
        let mut p = pod_of(&low, u64::from(i), i);
        p.spec.as_mut().unwrap().node_name = Some(node.clone());
        low_names.push(name(&p));
        api.create(&PostParams::default(), &p).await.unwrap();
    }
    let mut replica = Replica::start(tmp.path(), &kubeconfig, RUN, "replica-a", "4s");
    wait_leader(&admin, &["replica-a"], WITHIN).await;
    replica.wait_metric("agmarl_leader", 1.0, WITHIN).await;

    // --- A pod of 3000m and high priority: two victims make room, not more.
    let urgent = pod_of(&workload(1, "urgent", 3000, HIGH), 100, 0);
    let urgent_name = name(&urgent);
    api.create(&PostParams::default(), &urgent).await.unwrap();
    let seen = wait_for(&admin, "the preemption", &replica, |now| {
        now.iter()
            .any(|p| name(p) == urgent_name && nominated_node(p) == Some(node.as_str()))
            && terminating(now).len() >= 2
    })
    .await;
    let victims = terminating(&seen);
    assert_eq!(victims.len(), 2, "{victims:?}");
    assert!(victims.iter().all(|v| low_names.contains(v)), "{victims:?}");
    for p in seen.iter().filter(|p| victims.contains(&name(p))) {
        // deleted with the pod's own grace period (the API server's default 30 s)
        assert_eq!(p.metadata.deletion_grace_period_seconds, Some(30), "{}", name(p));
    }
    let preemptor = seen.iter().find(|p| name(p) == urgent_name).unwrap();
    assert_eq!(
        objects::pod_node_name(preemptor),
        None,
        "bound before the victims are gone"
    );
    let condition = preemptor
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "PodScheduled"))
        .cloned()
        .unwrap();
    assert_eq!(
        (condition.status.as_str(), condition.reason.as_deref()),
        ("False", Some("Unschedulable"))
    );

    // --- While the victims terminate, the pod waits: nothing more is deleted, nothing bound.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let during = pods(&admin).await;
    assert_eq!(
        terminating(&during),
        victims,
        "a second preemption while the victims terminate"
    );
    let waiting = during.iter().find(|p| name(p) == urgent_name).unwrap();
    assert_eq!(objects::pod_node_name(waiting), None);
    assert_eq!(nominated_node(waiting), Some(node.as_str()));
    assert_eq!(replica.metric("agmarl_preemption_victims_total").await, Some(2.0));

    // --- The kubelet's part: the victims' containers stopped, their objects go.
    let gone = Instant::now();
    for v in &victims {
        api.delete(v, &DeleteParams::default().grace_period(0)).await.unwrap();
    }
    wait_bound(&admin, RUN, std::slice::from_ref(&urgent_name), WITHIN).await;
    eprintln!(
        "the preemptor was bound {:?} after its victims were gone",
        gone.elapsed()
    );
    let now = node_names(&admin, RUN).await;
    assert_eq!(now.len(), 3, "{now:?}");
    assert!(now.values().all(|n| n.as_deref() == Some(node.as_str())), "{now:?}");
    assert!(now.contains_key(&urgent_name));
    replica.wait_metric("agmarl_binds_total", 1.0, WITHIN).await;
    assert_eq!(replica.metric("agmarl_preemption_victims_total").await, Some(2.0));
    assert!(replica.metric("agmarl_preemptions_total").await >= Some(1.0));
    assert!(replica.running(), "log:\n{}", replica.log_text());
    drop(replica);
    plane.down().unwrap();
}
