//! The watch-and-bind loop: runs one of schedlab's policies (a [`Scheduler`])
//! against an API server, as kube-scheduler runs the default one.
//!
//! It watches nodes (a label selector) and pods, keeps a
//! [`crate::cache::ClusterCache`] of them, and for each pending pod
//! whose `spec.schedulerName` is its own, in PrioritySort order (priority,
//! then arrival), asks the policy with a [`ClusterView`]. A bind goes out as
//! a `pods/<name>/binding` POST and is assumed in the cache at once, so the
//! next decision sees it before the watch does; several binds are in flight
//! at a time. Unschedulable and declined pods get PodScheduled=False (reason
//! `Unschedulable` or `Declined`, the policy's reason as message) when the
//! answer changes, and retry after kube-scheduler's doubling back-off in
//! scenario time, or sooner when the cluster changes in a way that may make
//! room (see [`queue::PendingQueue::cluster_changed`]).
//!
//! Policies see the pods on each node and the nominated pods, and a
//! preemption is carried out as kube-scheduler does it: the victims are
//! deleted, lower-priority nominations on the node cleared, the pod
//! nominated there (`status.nominatedNodeName`) and retried like an
//! unschedulable pod; the victims' departure wakes it (see
//! [`binder::Preemption`]).
//!
//! - [`queue`]: the pending pods and their back-off.
//! - [`binder`]: the loop's state without I/O.
//! - [`requests`]: the Binding and status writes and what their errors mean.
//! - `watch`: the node and pod watches.
//! - [`latency`]: decision and request latencies.

pub mod binder;
pub mod queue;
pub mod requests;
mod watch;

pub use binder::{Preemption, PreemptionResults, Victim};

use crate::cache::{ClusterCache, NodeIds};
use crate::client::ApiClient;
use crate::clock::ScenarioClock;
use crate::error::KubeError;
use crate::labels;
use binder::{Binder, Request};
use futures::StreamExt;
use futures::future::BoxFuture;
use futures::stream::FuturesUnordered;
use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, ListParams};
use queue::PodKey;
use schedlab_core::Scheduler;
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::node::NodeId;
pub use schedlab_core::timing::LatencySummary;
use schedlab_core::verdict::Answer;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Requests (binds and status writes) in flight at most. Enough for a 500
/// QPS client even when an overloaded API server takes ~100 ms per bind
/// (64 / 0.1 s), few enough not to pile work on it.
pub const MAX_IN_FLIGHT: usize = 64;
/// How long a stopped loop waits for its requests in flight.
const DRAIN: Duration = Duration::from_secs(5);

/// What the loop schedules and where.
#[derive(Debug, Clone, PartialEq)]
pub struct BindOptions {
    /// pods with this `spec.schedulerName` are the loop's
    pub scheduler_name: String,
    /// None: pods of all namespaces (every pod's requests count on its node)
    pub namespace: Option<String>,
    /// label selector of the nodes it may use; None: every node
    pub node_selector: Option<String>,
    /// the scheduling back-off (`scheduler_initial/max_backoff_seconds`), in scenario time
    pub model: ModelConfig,
}

/// What the loop did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct BindStats {
    /// policy calls
    pub decisions: u64,
    /// bindings the API server accepted
    pub binds: u64,
    /// 409 on a bind: somebody else bound the pod first
    pub conflicts: u64,
    /// 404 on a bind: the pod was gone
    pub gone: u64,
    /// 429 answers (retried)
    pub throttled: u64,
    /// 5xx answers and requests without an answer (retried)
    pub unavailable: u64,
    /// requests refused for good (400, 422; 403 on a status write)
    pub refused: u64,
    /// answers Unschedulable (including binds to a node that cannot take the pod)
    pub unschedulable: u64,
    /// answers Decline
    pub declined: u64,
    /// placements the loop did not carry out: the node cannot take the pod
    pub rejected: u64,
    /// preemptions carried out: every victim deleted (or gone already) and
    /// the pod nominated to the node
    pub preemptions: u64,
    /// pods deleted to make room for a preemptor
    pub victims: u64,
    /// preemptions the loop did not carry out: a victim is not a pod of
    /// lower priority on the node (nothing deleted; the pod is unschedulable)
    pub rejected_preemptions: u64,
    /// answers Preempt for a pod whose last preemption's victims are still
    /// terminating on its nominated node: it waits for them instead
    /// (kube-scheduler's `PodEligibleToPreemptOthers`)
    pub preemptions_waiting: u64,
    /// `nominatedNodeName` cleared on pods of lower priority than a preemptor
    pub nominations_cleared: u64,
    /// PodScheduled=False conditions written
    pub status_writes: u64,
    /// failed watch attempts (each resumed)
    pub watch_errors: u64,
    /// pods still queued when the loop stopped
    pub pending: u64,
    /// the policy's time per decision
    pub decision_latency: LatencySummary,
    /// a bind's POST, from the rate limiter's wait to the answer
    pub bind_latency: LatencySummary,
    /// every decision's time, ns (what `decision_latency` summarises); for
    /// the run folder's decision-times file, not the manifest
    #[serde(skip)]
    pub decision_times: Option<hdrhistogram::Histogram<u64>>,
}

/// Bind outcomes as they happen, for a process that exports them while the
/// loop runs (the in-cluster scheduler's /metrics); [`BindStats`] only
/// comes back when the loop stops. Shared across loops, it sums them.
#[derive(Debug, Default)]
pub struct LiveCounts {
    /// bindings the API server accepted
    pub binds: AtomicU64,
    /// 409 on a bind: somebody else bound the pod first
    pub conflicts: AtomicU64,
    /// pods deleted to make room for a preemptor
    pub victims: AtomicU64,
}

impl LiveCounts {
    fn count_victims(&self, results: &PreemptionResults) {
        let deleted = results.deleted.iter().filter(|r| r.is_ok()).count() as u64;
        self.victims.fetch_add(deleted, Ordering::Relaxed);
    }

    fn count(&self, result: &Result<(), kube::Error>) {
        match result {
            Ok(()) => {
                self.binds.fetch_add(1, Ordering::Relaxed);
            }
            Err(err) if requests::classify(err) == requests::Failure::Conflict => {
                self.conflicts.fetch_add(1, Ordering::Relaxed);
            }
            Err(_) => {}
        }
    }
}

enum Outcome {
    Bind {
        key: PodKey,
        node: NodeId,
        result: Result<(), kube::Error>,
        took: Duration,
    },
    Status {
        key: PodKey,
        answer: Answer,
        message: String,
        result: Result<(), kube::Error>,
    },
    Preempt {
        preemption: Box<Preemption>,
        results: PreemptionResults,
    },
}

fn send(api: &ApiClient, request: Request) -> BoxFuture<'static, Outcome> {
    let api = api.clone();
    Box::pin(async move {
        match request {
            Request::Bind {
                key,
                uid,
                node,
                node_name,
            } => {
                let started = Instant::now();
                let result = requests::post_binding(&api, &key, &uid, &node_name).await;
                Outcome::Bind {
                    key,
                    node,
                    result,
                    took: started.elapsed(),
                }
            }
            Request::Status { key, answer, message } => {
                let result = requests::write_pod_scheduled(&api, &key, answer, &message).await;
                Outcome::Status {
                    key,
                    answer,
                    message,
                    result,
                }
            }
            Request::Preempt(preemption) => {
                let results = requests::carry_out(&api, &preemption).await;
                Outcome::Preempt { preemption, results }
            }
        }
    })
}

fn settle(binder: &mut Binder, outcome: Outcome, clock: &ScenarioClock, live: &LiveCounts) -> Result<(), KubeError> {
    match outcome {
        Outcome::Bind {
            key,
            node,
            result,
            took,
        } => {
            live.count(&result);
            binder.bind_done(&key, node, result, took, clock.now(), |after| {
                clock.at(Instant::now() + after)
            })
        }
        Outcome::Status {
            key,
            answer,
            message,
            result,
        } => {
            binder.status_done(&key, answer, &message, result);
            Ok(())
        }
        Outcome::Preempt { preemption, results } => {
            live.count_victims(&results);
            binder.preempt_done(&preemption, results)
        }
    }
}

/// Fails early, with the API's own words, when the identity may not read
/// nodes or pods or the node selector is malformed. Returns how to number
/// the nodes: a run's nodes carry their timeline's NodeId in a label, so
/// policies see the same ids as in the simulator; other clusters' nodes are
/// numbered in order of first sight (the initial list comes in name order).
async fn check_access(api: &ApiClient, opts: &BindOptions) -> Result<NodeIds, KubeError> {
    let mut params = ListParams::default();
    if let Some(selector) = opts.node_selector.as_deref() {
        params = params.labels(selector);
    }
    api.throttle().await;
    let nodes = Api::<core::Node>::all(api.client())
        .list_metadata(&params)
        .await
        .map_err(KubeError::api("bind loop: listing nodes"))?;
    let pods: Api<core::Pod> = match opts.namespace.as_deref() {
        Some(ns) => Api::namespaced(api.client(), ns),
        None => Api::all(api.client()),
    };
    api.throttle().await;
    pods.list_metadata(&ListParams::default().limit(1))
        .await
        .map_err(KubeError::api("bind loop: listing pods"))?;
    let labelled = |n: &kube::core::PartialObjectMeta<core::Node>| {
        n.metadata
            .labels
            .as_ref()
            .is_some_and(|l| l.contains_key(labels::NODE_ID))
    };
    let by_label = if nodes.items.is_empty() {
        opts.node_selector.as_deref().is_some_and(|s| s.contains(labels::RUN))
    } else {
        nodes.items.iter().all(labelled)
    };
    Ok(if by_label { NodeIds::FromLabel } else { NodeIds::InOrder })
}

/// Runs the watch-and-bind loop until `cancel` fires, then returns what it
/// did (a stop is the normal end of the loop, not an error). Errors: a model
/// with unusable back-off, an identity that may not list nodes or pods,
/// create bindings or delete a preemption's victims (401/403), a malformed
/// selector. API errors 409, 404, 429 and 5xx are handled and counted, and
/// broken watches resume.
pub async fn run(
    api: ApiClient,
    opts: BindOptions,
    clock: ScenarioClock,
    policy: Box<dyn Scheduler>,
    cancel: CancellationToken,
) -> Result<BindStats, KubeError> {
    run_counted(api, opts, clock, policy, cancel, Arc::new(LiveCounts::default())).await
}

/// Where the bind loop sends the records of the decisions its policy
/// explains (`--explain`), for the run's player to write.
#[derive(Debug, Clone)]
pub struct DecisionOut {
    /// the run's workload names, by id
    pub workloads: Vec<String>,
    pub to: tokio::sync::mpsc::UnboundedSender<schedlab_core::decision::DecisionRecord>,
}

/// [`run`], sending the record of every decision the policy explains to
/// `out`.
pub async fn run_recorded(
    api: ApiClient,
    opts: BindOptions,
    clock: ScenarioClock,
    policy: Box<dyn Scheduler>,
    cancel: CancellationToken,
    out: DecisionOut,
) -> Result<BindStats, KubeError> {
    run_loop(
        api,
        opts,
        clock,
        policy,
        cancel,
        Arc::new(LiveCounts::default()),
        Some(out),
    )
    .await
}

/// [`run`], also counting bind outcomes into `live` as they happen.
pub async fn run_counted(
    api: ApiClient,
    opts: BindOptions,
    clock: ScenarioClock,
    policy: Box<dyn Scheduler>,
    cancel: CancellationToken,
    live: Arc<LiveCounts>,
) -> Result<BindStats, KubeError> {
    run_loop(api, opts, clock, policy, cancel, live, None).await
}

async fn run_loop(
    api: ApiClient,
    opts: BindOptions,
    clock: ScenarioClock,
    mut policy: Box<dyn Scheduler>,
    cancel: CancellationToken,
    live: Arc<LiveCounts>,
    decisions: Option<DecisionOut>,
) -> Result<BindStats, KubeError> {
    opts.model
        .validate()
        .map_err(|e| KubeError::Other(format!("bind loop: {e}")))?;
    let ids = tokio::select! {
        checked = check_access(&api, &opts) => checked?,
        () = cancel.cancelled() => return Ok(BindStats::default()),
    };
    let mut binder = Binder::new(opts.scheduler_name.clone(), opts.model.clone(), ClusterCache::new(ids))?;
    if let Some(out) = decisions {
        binder.record_decisions(out);
    }
    let mut changes = watch::changes(&api, &opts).await;
    let mut in_flight: FuturesUnordered<BoxFuture<'static, Outcome>> = FuturesUnordered::new();
    let far = || tokio::time::Instant::now() + Duration::from_secs(3600);
    let mut timer = Box::pin(tokio::time::sleep_until(far()));
    tracing::info!(scheduler = %opts.scheduler_name, server = %api.server(), "bind loop started");
    let outcome: Result<(), KubeError> = loop {
        let now = clock.now();
        let can_decide = in_flight.len() < MAX_IN_FLIGHT && binder.has_due(now);
        if !can_decide {
            let wake = binder
                .next_due()
                .map_or_else(far, |due| tokio::time::Instant::from_std(clock.instant_of(due)));
            timer.as_mut().reset(wake);
        }
        tokio::select! {
            biased;
            () = cancel.cancelled() => break Ok(()),
            Some(done) = in_flight.next(), if !in_flight.is_empty() => {
                if let Err(err) = settle(&mut binder, done, &clock, &live) {
                    break Err(err);
                }
            }
            change = changes.next() => match change {
                Some(Ok(change)) => binder.apply(change, clock.now()),
                Some(Err(err)) => {
                    tracing::warn!(error = %crate::redact::shown(&err), "bind loop: watch failed; resuming");
                    binder.watch_failed();
                }
                None => break Err(KubeError::Other("bind loop: the watches ended".into())),
            },
            () = &mut timer, if !can_decide => {}
            () = std::future::ready(()), if can_decide => {
                if let Some(request) = binder.decide(now, &mut *policy) {
                    in_flight.push(send(&api, request));
                }
            }
        }
    };
    // Let the requests already sent finish, so the stats count them.
    let _ = tokio::time::timeout(DRAIN, async {
        while let Some(done) = in_flight.next().await {
            if let Err(err) = settle(&mut binder, done, &clock, &live) {
                tracing::warn!(error = %crate::redact::shown(&err), "bind loop: a request failed while stopping");
            }
        }
    })
    .await;
    let stats = binder.stats();
    tracing::info!(?stats, "bind loop stopped");
    outcome.map(|()| stats)
}
