//! Every metric of one run, computed from its raw records and nothing else.
//! [`crate::definitions`] says what each one means.

mod builder;
mod pods;
mod samples;

pub use samples::SampleMetrics;

pub use builder::RunMetricsBuilder;

use crate::records::{RecordsError, for_each_numbered_record};
use crate::stats::{CONFIDENCE, CorrelationEstimate, correlation_ci};
use base64::Engine;
use clusters::{PodId, Time};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Serializer, V2Serializer};
use rand::Rng;
use std::path::Path;

/// Why a run's metrics could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    #[error(transparent)]
    Records(#[from] RecordsError),
    #[error("{source_name}: no End record, the run is incomplete")]
    Incomplete { source_name: String },
    #[error("{source_name}, {at}: inconsistent records: {reason}")]
    Inconsistent {
        source_name: String,
        /// "line N" for a file, "record N" for records pushed by hand
        at: String,
        reason: String,
    },
    #[error("scheduling latency histogram: {0}")]
    Histogram(String),
}

/// A pod incarnation bound at least once: what the memory/failure
/// correlation is computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodOutcome {
    pub pod: PodId,
    pub memory_request_bytes: u64,
    pub failures: u32,
}

/// The metrics of one run (one arm, one seed). `None` marks a metric that is
/// undefined for this run (for instance a ratio over zero pods); reports show
/// it as "n/a".
#[derive(Debug, Clone)]
pub struct RunMetrics {
    /// time of the End record
    pub end: Time,
    /// what the node and cluster samples yield
    pub samples: SampleMetrics,

    pub pods_created: u64,
    pub pods_bound: u64,
    pub pods_pending_end: u64,
    pub pods_declined: u64,
    pub pods_unschedulable: u64,
    /// PodBound events
    pub binds: u64,
    pub throughput_per_min: Option<f64>,
    pub restarts: u64,
    pub oom_kills: u64,
    pub evictions: u64,
    pub failures: u64,
    /// pods bound at least once with at least one failure
    pub pods_with_failure: u64,
    pub failure_rate: Option<f64>,

    /// creation → first bind, milliseconds, 3 significant digits
    pub sched_latency_ms: Histogram<u64>,
    pub sched_latency_p50_s: Option<f64>,
    pub sched_latency_p99_s: Option<f64>,
    pub sched_latency_mean_s: Option<f64>,

    /// every pod bound at least once, in creation order
    pub pod_outcomes: Vec<PodOutcome>,
    pub mem_failure_pearson: Option<f64>,
    pub mem_failure_spearman: Option<f64>,
}

impl RunMetrics {
    /// The value of the metric `key` (see [`crate::definitions`]); `None` if
    /// it is undefined for this run or `key` is unknown.
    pub fn value(&self, key: &str) -> Option<f64> {
        let count = |c: u64| Some(c as f64);
        match key {
            "cpu_util_mean" => self.samples.cpu_util_mean,
            "cpu_util_p95" => self.samples.cpu_util_p95,
            "mem_util_mean" => self.samples.mem_util_mean,
            "mem_util_p95" => self.samples.mem_util_p95,
            "cpu_used_mean" => self.samples.cpu_used_mean,
            "mem_used_mean" => self.samples.mem_used_mean,
            "cpu_util_in_use_mean" => self.samples.cpu_util_in_use_mean,
            "mem_util_in_use_mean" => self.samples.mem_util_in_use_mean,
            "nodes_in_use_mean" => self.samples.nodes_in_use_mean,
            "nodes_in_use_max" => self.samples.nodes_in_use_max.map(f64::from),
            "cost_usd" => self.samples.cost_usd,
            "pods_created" => count(self.pods_created),
            "pods_bound" => count(self.pods_bound),
            "pods_pending_end" => count(self.pods_pending_end),
            "pods_declined" => count(self.pods_declined),
            "pods_unschedulable" => count(self.pods_unschedulable),
            "throughput_per_min" => self.throughput_per_min,
            "restarts" => count(self.restarts),
            "oom_kills" => count(self.oom_kills),
            "evictions" => count(self.evictions),
            "failures" => count(self.failures),
            "failure_rate" => self.failure_rate,
            "sched_latency_p50_s" => self.sched_latency_p50_s,
            "sched_latency_p99_s" => self.sched_latency_p99_s,
            "sched_latency_mean_s" => self.sched_latency_mean_s,
            "mem_failure_pearson" => self.mem_failure_pearson,
            "mem_failure_spearman" => self.mem_failure_spearman,
            _ => None,
        }
        .filter(|v| v.is_finite())
    }

    /// Pearson's r and Spearman's rho between memory request and failure
    /// count over [`RunMetrics::pod_outcomes`], with percentile-bootstrap
    /// intervals from `resamples` resamples drawn from `rng`.
    pub fn mem_failure_correlation(&self, resamples: usize, rng: &mut impl Rng) -> CorrelationEstimate {
        let (x, y): (Vec<f64>, Vec<f64>) = self
            .pod_outcomes
            .iter()
            .map(|p| (p.memory_request_bytes as f64, f64::from(p.failures)))
            .unzip();
        correlation_ci(&x, &y, CONFIDENCE, resamples, rng)
    }

    /// The latency histogram in HdrHistogram's V2 format (uncompressed),
    /// base64: any HdrHistogram implementation can read it back, merge runs,
    /// or draw the full distribution.
    pub fn sched_latency_histogram_base64(&self) -> Result<String, MetricsError> {
        let mut bytes = Vec::new();
        V2Serializer::new()
            .serialize(&self.sched_latency_ms, &mut bytes)
            .map_err(|e| MetricsError::Histogram(format!("{e:?}")))?;
        Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
    }
}

/// Reads a records file and computes its run's metrics. Errors name the file,
/// and the line where the records turn inconsistent.
pub fn from_file(path: &Path) -> Result<RunMetrics, MetricsError> {
    let mut builder = RunMetricsBuilder::for_source(path.display().to_string());
    for_each_numbered_record(path, |line, record| builder.push_at_line(line, &record))?;
    builder.finish()
}
