//! A run's time series, for plots: per-node and cluster samples over time,
//! restarts with their times, and the per-run quantities the metrics already
//! compute (scheduling latencies, memory request vs failures), all from the
//! records alone.

mod builder;

pub use builder::RunSeriesBuilder;

use crate::metrics::{MetricsError, PodOutcome, RunMetrics};
use crate::records::for_each_numbered_record;
use schedlab_core::{NodeCondition, NodeId, Span, Time};
use std::path::Path;

/// One node at one sample time: the share of its allocatable requested by the
/// pods bound to it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodePoint {
    pub t: Time,
    pub node: NodeId,
    /// requested / allocatable CPU; `None` when the node has no allocatable CPU
    pub cpu_util: Option<f64>,
    /// requested / allocatable memory; `None` when the node has no allocatable memory
    pub mem_util: Option<f64>,
    pub pods: u32,
    pub condition: NodeCondition,
}

/// The cluster at one sample time. Utilisation is requested / allocatable over
/// the Ready nodes, the definition behind `cpu_util_mean` and `mem_util_mean`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClusterPoint {
    pub t: Time,
    /// `None` when no node is Ready
    pub cpu_util: Option<f64>,
    pub mem_util: Option<f64>,
    /// pods created and not yet bound
    pub pending: u32,
    pub bound: u32,
    pub nodes_in_use: u32,
    pub hourly_cost: f64,
}

/// A node of the run, in the order of its Node record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    pub node: NodeId,
    pub name: String,
}

/// Bound pod incarnations that share a memory request and a failure count:
/// what the memory plot draws of a run's pods (many pods share a request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct OutcomeCount {
    pub memory_request_bytes: u64,
    pub failures: u32,
    pub pods: u64,
}

/// The time series of one run (one arm, one seed).
///
/// A run folder's reader keeps the samples (`nodes`, `node_points`,
/// `cluster`) of each arm's first seed only, the one the plots draw them
/// for, and no run's `metrics.pod_outcomes` (see [`RunSeries::shed_samples`]
/// and [`RunSeries::shed_pod_outcomes`]): what a run keeps then does not
/// grow with its nodes, samples or pods but for `restarts`.
#[derive(Debug, Clone)]
pub struct RunSeries {
    /// the nodes, in record order
    pub nodes: Vec<NodeInfo>,
    /// every NodeSample, in record order (time order per node)
    pub node_points: Vec<NodePoint>,
    /// every ClusterSample, in record order (time order)
    pub cluster: Vec<ClusterPoint>,
    /// the bound pod incarnations by (memory request, failures), ascending
    pub outcome_counts: Vec<OutcomeCount>,
    /// times of the restarts (ContainerStarted with restart_count > 0), in
    /// record order; the `restarts` metric counts these
    pub restarts: Vec<Time>,
    /// the run's metrics: scheduling latencies (`sched_latency_ms`), the
    /// (memory request, failures) pairs (`pod_outcomes`), the End time
    pub metrics: RunMetrics,
}

/// Restarts in one time bucket `[start, start + width)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub start: Time,
    pub count: u64,
}

impl RunSeries {
    /// Time of the End record.
    pub fn end(&self) -> Time {
        self.metrics.end
    }

    /// Per bound pod incarnation: (memory request, failures); empty once
    /// shed.
    pub fn pod_outcomes(&self) -> &[PodOutcome] {
        &self.metrics.pod_outcomes
    }

    /// Lets go of the node and cluster samples, which only an arm's first
    /// seed's plots draw.
    pub fn shed_samples(&mut self) {
        self.nodes = Vec::new();
        self.node_points = Vec::new();
        self.cluster = Vec::new();
    }

    /// Lets go of the per-pod pairs, once what is computed from them (the
    /// run's correlations, see [`crate::summary::RunCorrelations`]) is;
    /// `outcome_counts` stays.
    pub fn shed_pod_outcomes(&mut self) {
        self.metrics.pod_outcomes = Vec::new();
    }

    /// Restarts per bucket of `width`, covering time zero to the End record;
    /// every bucket is present, empty ones with count 0, and a restart at
    /// the End time itself falls into the last one. A zero `width` gives no
    /// buckets.
    pub fn restarts_per_bucket(&self, width: Span) -> Vec<Bucket> {
        if width.0 == 0 {
            return Vec::new();
        }
        let n = self.end().0.div_ceil(width.0).max(1);
        let mut counts = vec![0u64; n as usize];
        for t in &self.restarts {
            let i = (t.0 / width.0).min(n - 1) as usize;
            if let Some(c) = counts.get_mut(i) {
                *c += 1;
            }
        }
        counts
            .into_iter()
            .enumerate()
            .map(|(i, count)| Bucket {
                start: Time(i as u64 * width.0),
                count,
            })
            .collect()
    }

    /// Scheduling latencies (creation to first bind) in seconds with their
    /// counts, ascending, from the metrics' histogram (3 significant digits).
    pub fn sched_latencies_s(&self) -> Vec<(f64, u64)> {
        let h = match self.metrics.sched_latency_ms.decode() {
            Ok(h) => h,
            // encoded by this program when the run was read: cannot fail short of a defect
            Err(e) => {
                tracing::warn!("scheduling latencies not decoded: {e}");
                return Vec::new();
            }
        };
        // a bucket's lowest value: exact below 2048 ms, within 0.1% above
        h.iter_recorded()
            .map(|v| {
                (
                    h.lowest_equivalent(v.value_iterated_to()) as f64 / 1000.0,
                    v.count_at_value(),
                )
            })
            .collect()
    }
}

/// Reads a records file and builds its run's series, streaming, with its
/// metrics as [`crate::metrics::from_file`] computes them (the decision
/// times beside the records included): one reading serves both. Errors name
/// the file and the line, as [`crate::metrics::from_file`]'s do.
pub fn from_file(path: &Path) -> Result<RunSeries, MetricsError> {
    let mut builder = RunSeriesBuilder::for_source(path.display().to_string());
    for_each_numbered_record(path, |line, record| builder.push_at_line(line, &record))?;
    let mut series = builder.finish()?;
    series.metrics.decision_times = crate::metrics::decision_times_beside(path)?;
    Ok(series)
}
