//! Removing everything of a run: pods, node Leases, nodes, PriorityClasses
//! and the namespace, also when nothing else runs (no namespace controller:
//! the namespace is then finalised as the controller would).

use super::retry::{self, RetryPolicy};
use crate::error::status_code;
use crate::{ApiClient, KubeError, labels};
use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::{Resource, ResourceExt};
use serde::de::DeserializeOwned;
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::atomic::AtomicU64;
use std::time::{Duration, Instant};

/// How many deletes are in flight at once.
const DELETES_IN_FLIGHT: usize = 16;
/// How long a namespace controller gets to show itself (it writes the
/// namespace's deletion conditions) before teardown finalises the namespace,
/// when the namespace has no `default` ServiceAccount (no controller-manager
/// made one, so most likely none runs).
const NAMESPACE_CONTROLLER_GRACE: Duration = Duration::from_secs(1);
/// How long a namespace controller at work gets to empty the namespace.
const NAMESPACE_CONTROLLER_WORK: Duration = Duration::from_secs(120);
/// How long a finalised namespace may take to disappear.
const NAMESPACE_GONE_WITHIN: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(100);
/// Pods created while teardown deletes (a player still stopping) are
/// caught by listing again, a few times at most.
const POD_PASSES: usize = 3;

/// What [`teardown`] removed (objects it deleted; those already gone are
/// not counted).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TeardownReport {
    pub pods: u64,
    pub leases: u64,
    pub nodes: u64,
    pub priority_classes: u64,
    /// the run's namespace existed and is gone now
    pub namespace: bool,
    /// no namespace controller removed it in time; teardown finalised it
    pub namespace_finalized: bool,
}

impl TeardownReport {
    /// Whether teardown found nothing to remove.
    pub fn is_empty(&self) -> bool {
        *self == TeardownReport::default()
    }
}

/// Removes everything labelled run=`run`: its pods (grace period 0; also
/// unlabelled pods in its namespace), node Leases (labelled, or named after
/// the run's nodes), nodes, PriorityClasses and the namespace. Idempotent.
pub async fn teardown(api: &ApiClient, run: &str) -> Result<TeardownReport, KubeError> {
    let retried = AtomicU64::new(0);
    let client = api.client();
    let selector = labels::run_selector(run);
    let by_label = ListParams::default().labels(&selector);
    let mut report = TeardownReport::default();

    let namespaced: Api<core::Pod> = Api::namespaced(client.clone(), run);
    let labelled: Api<core::Pod> = Api::all(client.clone());
    for _ in 0..POD_PASSES {
        let mut pods: BTreeSet<(String, String)> = BTreeSet::new();
        for pod in list(
            api,
            &namespaced,
            &ListParams::default(),
            &retried,
            "listing the run's pods",
        )
        .await?
        {
            pods.insert((pod.namespace().unwrap_or_default(), pod.name_any()));
        }
        for pod in list(api, &labelled, &by_label, &retried, "listing the run's pods").await? {
            pods.insert((pod.namespace().unwrap_or_default(), pod.name_any()));
        }
        if pods.is_empty() {
            break;
        }
        let targets = pods
            .into_iter()
            .map(|(ns, name)| (Api::<core::Pod>::namespaced(client.clone(), &ns), name));
        report.pods += delete_all(api, targets, &DeleteParams::default().grace_period(0), &retried, "pod").await?;
    }

    let nodes_api: Api<core::Node> = Api::all(client.clone());
    let nodes = list(api, &nodes_api, &by_label, &retried, "listing the run's nodes").await?;
    let leases_api: Api<Lease> = Api::namespaced(client.clone(), labels::NODE_LEASE_NAMESPACE);
    let mut leases: BTreeSet<String> = list(api, &leases_api, &by_label, &retried, "listing the run's node Leases")
        .await?
        .iter()
        .map(|l| l.name_any())
        .collect();
    // a Lease an emulator wrote without the label still belongs to its node
    leases.extend(nodes.iter().map(|n| n.name_any()));
    let targets = leases.into_iter().map(|name| (leases_api.clone(), name));
    report.leases = delete_all(api, targets, &DeleteParams::default(), &retried, "node Lease").await?;
    let targets = nodes.iter().map(|n| (nodes_api.clone(), n.name_any()));
    report.nodes = delete_all(api, targets, &DeleteParams::default(), &retried, "node").await?;

    let classes_api: Api<PriorityClass> = Api::all(client.clone());
    let classes = list(
        api,
        &classes_api,
        &by_label,
        &retried,
        "listing the run's PriorityClasses",
    )
    .await?;
    let targets = classes.iter().map(|c| (classes_api.clone(), c.name_any()));
    report.priority_classes = delete_all(api, targets, &DeleteParams::default(), &retried, "PriorityClass").await?;

    let (gone, finalized) = remove_namespace(api, run, &retried).await?;
    report.namespace = gone;
    report.namespace_finalized = finalized;
    tracing::info!(run, ?report, "run torn down");
    Ok(report)
}

async fn list<K>(
    api: &ApiClient,
    objects: &Api<K>,
    lp: &ListParams,
    retried: &AtomicU64,
    what: &str,
) -> Result<Vec<K>, KubeError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    match retry::send(api, RetryPolicy::SETUP, retried, || objects.list(lp)).await {
        Ok(list) => Ok(list.items),
        // a namespace that never existed has no pods
        Err(e) if status_code(&e) == Some(404) => Ok(Vec::new()),
        Err(e) => Err(KubeError::api(what.to_string())(e)),
    }
}

/// Deletes every (api, name), a few at a time; counts those it deleted.
async fn delete_all<K>(
    api: &ApiClient,
    targets: impl Iterator<Item = (Api<K>, String)>,
    dp: &DeleteParams,
    retried: &AtomicU64,
    kind: &str,
) -> Result<u64, KubeError>
where
    K: Resource + Clone + DeserializeOwned + Debug,
{
    let outcomes: Vec<Result<bool, KubeError>> = futures::stream::iter(targets)
        .map(|(objects, name)| async move {
            match retry::send(api, RetryPolicy::SETUP, retried, || objects.delete(&name, dp)).await {
                Ok(_) => Ok(true),
                Err(e) if status_code(&e) == Some(404) => Ok(false),
                Err(e) => Err(KubeError::api(format!("deleting {kind} {name}"))(e)),
            }
        })
        .buffer_unordered(DELETES_IN_FLIGHT)
        .collect()
        .await;
    let mut deleted = 0;
    for outcome in outcomes {
        deleted += u64::from(outcome?);
    }
    Ok(deleted)
}

/// Deletes the namespace and waits for it to go; finalises it when no
/// namespace controller does. Returns (it existed and is gone, finalised).
async fn remove_namespace(api: &ApiClient, run: &str, retried: &AtomicU64) -> Result<(bool, bool), KubeError> {
    let namespaces: Api<core::Namespace> = Api::all(api.client());
    let get = || async {
        retry::send(api, RetryPolicy::SETUP, retried, || namespaces.get_opt(run))
            .await
            .map_err(KubeError::api(format!("reading namespace {run}")))
    };
    let Some(ns) = get().await? else {
        return Ok((false, false));
    };
    let (dp, lp, pp) = (DeleteParams::default(), ListParams::default(), PostParams::default());
    // A controller-manager gives every namespace a default ServiceAccount;
    // its namespace controller then gets all the time it needs.
    let accounts: Api<core::ServiceAccount> = Api::namespaced(api.client(), run);
    let mut controller = match retry::send(api, RetryPolicy::SETUP, retried, || accounts.get_opt("default")).await {
        Ok(account) => account.is_some(),
        Err(e) if status_code(&e) == Some(404) => false,
        Err(e) => {
            return Err(KubeError::api(format!(
                "reading namespace {run}'s default ServiceAccount"
            ))(e));
        }
    };
    if ns.metadata.deletion_timestamp.is_none() {
        match retry::send(api, RetryPolicy::SETUP, retried, || namespaces.delete(run, &dp)).await {
            Ok(_) => {}
            Err(e) if status_code(&e) == Some(404) => return Ok((true, false)),
            Err(e) => return Err(KubeError::api(format!("deleting namespace {run}"))(e)),
        }
    }
    let waited = Instant::now();
    loop {
        let Some(ns) = get().await? else {
            return Ok((true, false));
        };
        controller |= ns
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .is_some_and(|c| !c.is_empty());
        let limit = if controller {
            NAMESPACE_CONTROLLER_WORK
        } else {
            NAMESPACE_CONTROLLER_GRACE
        };
        if waited.elapsed() >= limit {
            break;
        }
        tokio::time::sleep(POLL).await;
    }
    if controller {
        tracing::warn!(
            namespace = run,
            "the namespace controller did not remove the namespace in time; finalising it"
        );
    }
    // No namespace controller: remove what it would have (the events the
    // scheduler wrote there), then drop its finalizer as it would.
    let events: Api<core::Event> = Api::namespaced(api.client(), run);
    match retry::send(api, RetryPolicy::SETUP, retried, || events.delete_collection(&dp, &lp)).await {
        Ok(_) => {}
        Err(e) if status_code(&e) == Some(404) => {}
        Err(e) => {
            tracing::warn!(namespace = run, error = %crate::redact::shown(&e), "deleting the namespace's events")
        }
    }
    let Some(mut ns) = get().await? else {
        return Ok((true, false));
    };
    ns.spec = Some(core::NamespaceSpec {
        finalizers: Some(Vec::new()),
    });
    match retry::send(api, RetryPolicy::SETUP, retried, || {
        namespaces.replace_subresource("finalize", run, &pp, &ns)
    })
    .await
    {
        Ok(_) => {}
        Err(e) if status_code(&e) == Some(404) => return Ok((true, false)),
        Err(e) => return Err(KubeError::api(format!("finalising namespace {run}"))(e)),
    }
    let waited = Instant::now();
    while waited.elapsed() < NAMESPACE_GONE_WITHIN {
        if get().await?.is_none() {
            return Ok((true, true));
        }
        tokio::time::sleep(POLL).await;
    }
    Err(KubeError::Other(format!(
        "namespace {run} is still there {}s after it was finalised",
        NAMESPACE_GONE_WITHIN.as_secs()
    )))
}
