//! Plays a [`Timeline`] against an API server and writes the records, as
//! [`schedlab_core::sim::Sim::finish`] does in virtual time: the same actions, the
//! same owners, the same events and samples, observed through watches.
//!
//! - [`setup`]: the run's namespace, PriorityClasses and nodes.
//! - [`play`]: the timeline in scenario time, on a clock the caller starts
//!   after setup (so setup does not eat scenario time).
//! - [`teardown`]: removes everything of a run, whatever state it is in.
//! - [`new_run_id`]: a fresh run id (also the run's namespace).

mod options;
mod player;
mod pods;
mod requests;
mod retry;
mod run_id;
mod selector;
mod setup;
mod teardown;
mod watch;

pub use options::{NodeSource, RunOptions, RunSummary};
pub use run_id::{MAX_RUN_ID_LEN, new_run_id};
pub use setup::{Prepared, create_emulated_nodes};
pub use teardown::{TeardownReport, teardown};

use super::cache::{ClusterCache, NodeIds};
use super::emulator::EmulatorCommand;
use super::{ApiClient, KubeError, ScenarioClock, labels, objects};
use k8s_openapi::api::core::v1 as core;
use kube::api::Api;
use schedlab_core::decision::DecisionRecord;
use schedlab_core::node::NodeId;
use schedlab_core::record::{Record, RecordSink};
use schedlab_core::time::Time;
use schedlab_core::timeline::Timeline;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Instant;
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio_util::sync::CancellationToken;

/// Checks the run's options and prepares the cluster for it: the run's
/// namespace, a PriorityClass for every nonzero priority of the timeline,
/// and the nodes — node objects made from the timeline's nodes when
/// [`NodeSource::Emulated`] (labelled emulated=true, Ready from their
/// status), else the cluster's own nodes matched by the selector. Already
/// existing objects of the run are kept. On error, what was created stays
/// for [`teardown`].
pub async fn setup(api: &ApiClient, timeline: &Timeline, opts: &RunOptions) -> Result<Prepared, KubeError> {
    let started = Instant::now();
    check(timeline, opts)?;
    let affinity = match &opts.nodes {
        // the run's own nodes only: a cluster may have others (a plane's
        // real nodes, another run's, a kubeconfig cluster's own), where the
        // cluster's scheduler would otherwise place the run's pods
        NodeSource::Emulated => selector::node_affinity(&crate::labels::run_selector(&opts.run))?,
        NodeSource::Existing { selector } => selector::node_affinity(selector)?,
    };
    let retried = AtomicU64::new(0);
    let prepared = setup::prepare(api, timeline, opts, affinity, started, &retried).await?;
    tracing::info!(
        run = %opts.run,
        nodes = prepared.node_names().len(),
        setup_seconds = prepared.setup_seconds(),
        "run set up"
    );
    Ok(prepared)
}

/// Plays `timeline` on the cluster [`setup`] prepared, in scenario time on
/// `clock` (an action at `at` is due at `clock.instant_of(at)`; start the
/// clock right before calling), watching the run's pods and nodes, and
/// writes [`Record`]s to `sink`: the Node records first (in NodeId order),
/// then PodCreated when a create returns (or the watch shows the pod
/// first), what the watches show as the simulator's events, PodDeleted at
/// the scenario's deletes (Churn when the owner recreates, else Scenario),
/// PodEvicted for a pod that vanishes without the scenario deleting it,
/// samples every `timeline.sample_interval`, and [`Record::End`] at
/// `timeline.end`. Owners replace lost pods as in the simulator; pod ids
/// follow creation order. Fault actions go to `faults` (the node emulator's
/// commands); without it they are counted as unsupported.
///
/// Returns at the timeline's end, or `Err(KubeError::Interrupted)` when
/// `cancel` fires. Never tears down: the caller calls [`teardown`], also
/// after an error.
#[allow(clippy::too_many_arguments)]
pub async fn play(
    api: &ApiClient,
    prepared: &Prepared,
    timeline: &Timeline,
    opts: &RunOptions,
    clock: ScenarioClock,
    faults: Option<UnboundedSender<EmulatorCommand>>,
    sink: &mut (dyn RecordSink + Send),
    cancel: CancellationToken,
) -> Result<RunSummary, KubeError> {
    play_recording(api, prepared, timeline, opts, clock, faults, sink, None, cancel).await
}

/// [`play`], also writing to `sink` the decision records the run's bind
/// loop sends to `decisions` (`--explain`), as they arrive.
#[allow(clippy::too_many_arguments)]
pub async fn play_recording(
    api: &ApiClient,
    prepared: &Prepared,
    timeline: &Timeline,
    opts: &RunOptions,
    clock: ScenarioClock,
    faults: Option<UnboundedSender<EmulatorCommand>>,
    sink: &mut (dyn RecordSink + Send),
    decisions: Option<UnboundedReceiver<DecisionRecord>>,
    cancel: CancellationToken,
) -> Result<RunSummary, KubeError> {
    let started = Instant::now();
    if prepared.run() != opts.run {
        return Err(KubeError::Other(format!(
            "run {} was set up, not run {}",
            prepared.run(),
            opts.run
        )));
    }
    if (clock.scale() - opts.clock_scale).abs() > 1e-9 * opts.clock_scale.abs().max(1.0) {
        tracing::warn!(
            clock = clock.scale(),
            options = opts.clock_scale,
            "the clock's time scale differs from the run options'; the clock's is used"
        );
    }
    let mut cache = ClusterCache::new(match opts.nodes {
        NodeSource::Emulated => NodeIds::FromLabel,
        NodeSource::Existing { .. } => NodeIds::InOrder,
    });
    let mut scratch = Vec::new();
    for node in prepared.nodes() {
        cache.apply_node(node, Time::ZERO, &mut scratch)?;
    }
    let node_selector = match &opts.nodes {
        NodeSource::Emulated => labels::run_selector(&opts.run),
        NodeSource::Existing { selector } => selector.clone(),
    };
    let client = api.client();
    let pods_api: Api<core::Pod> = Api::namespaced(client.clone(), &opts.run);
    // a watch counts once against the rate limits, when it opens
    api.throttle().await;
    let pod_watch = watch::watch(pods_api.clone(), &labels::run_selector(&opts.run));
    api.throttle().await;
    let node_watch = watch::watch(Api::<core::Node>::all(client), &node_selector);

    let mut player = player::Player {
        api: api.clone(),
        pods_api,
        timeline,
        opts,
        clock,
        sink,
        cache,
        node_names: prepared.node_names().to_vec(),
        affinity: prepared.affinity().cloned(),
        faults,
        retried: Arc::new(AtomicU64::new(0)),
        summary: RunSummary {
            setup_seconds: prepared.setup_seconds(),
            ..RunSummary::default()
        },
        pods: pods::Pods::default(),
        queue: VecDeque::new(),
        next_action: 0,
        next_sample: Some(Time::ZERO),
        last_t: Time::ZERO,
        last_sample: None,
        warned_unsupported: false,
        events: Vec::new(),
        decisions,
    };
    for (i, spec) in prepared.node_specs().iter().enumerate() {
        player.write(Record::Node {
            node: NodeId(i as u32),
            spec: spec.clone(),
        });
    }
    for record in player.timeline.workload_records() {
        player.write(record);
    }
    let mut summary = player.play(pod_watch, node_watch, cancel).await?;
    summary.wall_seconds = started.elapsed().as_secs_f64();
    tracing::info!(run = %opts.run, ?summary, "run played");
    Ok(summary)
}

/// What can be known wrong before touching the API server.
fn check(timeline: &Timeline, opts: &RunOptions) -> Result<(), KubeError> {
    let run = opts.run.as_str();
    let dns = !run.is_empty()
        && run.len() <= MAX_RUN_ID_LEN
        && run
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !run.starts_with('-')
        && !run.ends_with('-');
    if !dns {
        return Err(KubeError::Other(format!(
            "run id {run:?}: give a DNS label (a-z, 0-9, '-') of at most {MAX_RUN_ID_LEN} characters"
        )));
    }
    opts.model.validate().map_err(|e| KubeError::Other(e.to_string()))?;
    let mut names: HashMap<String, &str> = HashMap::new();
    for w in &timeline.workloads {
        let name = objects::dns_label(&[&w.name]);
        if let Some(other) = names.insert(name.clone(), &w.name) {
            return Err(KubeError::Other(format!(
                "workloads {other:?} and {:?} would name their pods alike ({name}-...)",
                w.name
            )));
        }
    }
    Ok(())
}
