//! Every metric of one run, computed from its raw records and nothing else.
//! [`crate::definitions`] says what each one means.

mod builder;
mod cascades;
mod concentration;
mod cost_volatility;
mod goodput;
mod node_health;
mod pareto_hv;
mod pods;
mod samples;
mod strata;

pub use samples::SampleMetrics;

pub use builder::RunMetricsBuilder;
pub use cascades::BURST_GAP;
pub use pareto_hv::{HV_REFERENCE, pareto_hv};

use crate::decision_time::{DECISION_TIMES_FILE, DecisionTimeFacts, DecisionTimes, DecisionTimesError};
use crate::hdr::EncodedHistogram;
use crate::records::{RecordsError, for_each_numbered_record};
use crate::stats::{CONFIDENCE, CorrelationEstimate, PartialEstimate, correlation_ci, partial_correlation_ci};
use rand::Rng;
use schedlab_core::{PodId, Time, WorkloadId};
use std::collections::BTreeMap;
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
    #[error(transparent)]
    DecisionTimes(#[from] DecisionTimesError),
}

/// A pod incarnation bound at least once: what the memory/failure
/// correlation is computed over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodOutcome {
    pub pod: PodId,
    pub memory_request_bytes: u64,
    pub failures: u32,
    /// the template (PodCreated.slot.workload)
    pub workload: WorkloadId,
}

/// One priority stratum's metrics (see `crate::definitions`, `critical_*`
/// and `rest_*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StratumMetrics {
    /// pod incarnations created in the stratum
    pub pods: u64,
    /// of which bound at least once
    pub bound: u64,
    /// Kaplan–Meier time to first bind, never-bound pods censored
    pub bind_p50_s: Option<f64>,
    pub bind_p99_s: Option<f64>,
    /// failures per pod bound at least once
    pub failures_per_pod: Option<f64>,
    /// PodBound events onto a node Degraded at that moment
    pub degraded_binds: u64,
    /// degraded_binds over the stratum's PodBound events
    pub degraded_bind_share: Option<f64>,
}

/// The run's pods split by priority.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrataMetrics {
    /// the critical stratum's priority; `None` when there is no critical
    /// stratum (the highest priority is 0 or below, or every pod has it)
    pub critical_priority: Option<i32>,
    pub critical: Option<StratumMetrics>,
    /// every pod not in the critical stratum
    pub rest: StratumMetrics,
}

/// OOM cascades and failure bursts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CascadeMetrics {
    /// distinct (node, time) of ContainerExited with oom_cause NodePressure
    pub oom_pressure_events: u64,
    pub oom_victims_per_event_mean: Option<f64>,
    /// 0 without such events
    pub oom_victims_per_event_max: u32,
    /// maximal chains of ≥ 2 failures on one node, each within
    /// [`BURST_GAP`] of the previous one
    pub failure_bursts: u64,
    /// 0 without bursts
    pub failure_burst_max: u32,
}

/// How much a cost-rate series swings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Volatility {
    /// sample standard deviation over mean
    pub cv: Option<f64>,
    /// max − min
    pub range: Option<f64>,
    /// largest |change| between consecutive samples
    pub step_max: Option<f64>,
}

/// A run's memory/failure correlation within one template.
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateCorrelation {
    pub workload: WorkloadId,
    pub name: String,
    pub estimate: CorrelationEstimate,
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
    /// pods created and never bound
    pub pods_never_bound: u64,
    /// pods with a PodSucceeded event per scenario hour
    pub completions_per_hour: Option<f64>,
    /// creation to first bind (or deletion, or the end), mean
    pub pending_time_mean_s: Option<f64>,
    /// PodBound events
    pub binds: u64,
    pub throughput_per_min: Option<f64>,
    pub restarts: u64,
    pub oom_kills: u64,
    pub evictions: u64,
    pub failures: u64,
    /// preemptions carried out (PodNominated events)
    pub preemptions: u64,
    /// pods deleted by preemption
    pub pods_preempted: u64,
    /// pods bound at least once with at least one failure
    pub pods_with_failure: u64,
    pub failure_rate: Option<f64>,

    /// creation → first bind, milliseconds, 3 significant digits; its
    /// base64 is what summary.json carries, so that any HdrHistogram
    /// implementation can read it back, merge runs, or draw the distribution
    pub sched_latency_ms: EncodedHistogram,
    pub sched_latency_p50_s: Option<f64>,
    pub sched_latency_p99_s: Option<f64>,
    pub sched_latency_mean_s: Option<f64>,

    /// every pod bound at least once, in creation order
    pub pod_outcomes: Vec<PodOutcome>,
    pub mem_failure_pearson: Option<f64>,
    pub mem_failure_spearman: Option<f64>,
    /// Pearson's r of memory request and failures after subtracting each
    /// template's means (see [`crate::stats::partial_pearson`])
    pub mem_failure_partial_pearson: Option<f64>,
    /// template names from the Workload records; templates without one are
    /// "workload N"
    pub workload_names: BTreeMap<WorkloadId, String>,

    pub strata: StrataMetrics,
    pub cascades: CascadeMetrics,
    pub cost_volatility: Volatility,
    /// `None` without faults
    pub fault_cost_volatility: Option<Volatility>,
    /// the fault window, `None` without faults
    pub fault_window: Option<(Time, Time)>,
    pub running_pod_hours: f64,
    pub failures_per_running_pod_hour: Option<f64>,
    /// running pod-hours of the pods whose life ended well
    pub goodput_pod_hours: f64,
    /// free memory head-room over the fault window; `None` without faults
    pub fault_headroom_mean: Option<f64>,
    /// share of failures on the top ⌈10%⌉ of nodes; `None` without failures
    pub failure_concentration: Option<f64>,

    /// from decision_times.json beside the records, when there is one; not
    /// from the records
    pub decision_times: Option<DecisionTimeFacts>,
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
            "pods_never_bound" => count(self.pods_never_bound),
            "completions_per_hour" => self.completions_per_hour,
            "pending_time_mean_s" => self.pending_time_mean_s,
            "goodput_pod_hours" => Some(self.goodput_pod_hours),
            "fault_headroom_mean" => self.fault_headroom_mean,
            "failure_concentration" => self.failure_concentration,
            // needs the reference arm's means: the summary computes it
            "pareto_hv" => None,
            "throughput_per_min" => self.throughput_per_min,
            "restarts" => count(self.restarts),
            "oom_kills" => count(self.oom_kills),
            "evictions" => count(self.evictions),
            "preemptions" => count(self.preemptions),
            "pods_preempted" => count(self.pods_preempted),
            "failures" => count(self.failures),
            "failure_rate" => self.failure_rate,
            "sched_latency_p50_s" => self.sched_latency_p50_s,
            "sched_latency_p99_s" => self.sched_latency_p99_s,
            "sched_latency_mean_s" => self.sched_latency_mean_s,
            "mem_failure_pearson" => self.mem_failure_pearson,
            "mem_failure_spearman" => self.mem_failure_spearman,
            "mem_failure_partial_pearson" => self.mem_failure_partial_pearson,
            "critical_pods" => self.strata.critical.map(|c| c.pods as f64),
            "critical_bind_p50_s" => self.strata.critical.and_then(|c| c.bind_p50_s),
            "critical_bind_p99_s" => self.strata.critical.and_then(|c| c.bind_p99_s),
            "critical_failures_per_pod" => self.strata.critical.and_then(|c| c.failures_per_pod),
            "critical_degraded_binds" => self.strata.critical.map(|c| c.degraded_binds as f64),
            "critical_degraded_bind_share" => self.strata.critical.and_then(|c| c.degraded_bind_share),
            "rest_bind_p50_s" => self.strata.rest.bind_p50_s,
            "rest_bind_p99_s" => self.strata.rest.bind_p99_s,
            "rest_failures_per_pod" => self.strata.rest.failures_per_pod,
            "rest_degraded_binds" => count(self.strata.rest.degraded_binds),
            "rest_degraded_bind_share" => self.strata.rest.degraded_bind_share,
            "oom_pressure_events" => count(self.cascades.oom_pressure_events),
            "oom_victims_per_event_mean" => self.cascades.oom_victims_per_event_mean,
            "oom_victims_per_event_max" => Some(f64::from(self.cascades.oom_victims_per_event_max)),
            "failure_bursts" => count(self.cascades.failure_bursts),
            "failure_burst_max" => Some(f64::from(self.cascades.failure_burst_max)),
            "cost_rate_cv" => self.cost_volatility.cv,
            "cost_rate_range_usd_h" => self.cost_volatility.range,
            "cost_rate_step_max_usd_h" => self.cost_volatility.step_max,
            "fault_cost_rate_cv" => self.fault_cost_volatility.and_then(|v| v.cv),
            "fault_cost_rate_range_usd_h" => self.fault_cost_volatility.and_then(|v| v.range),
            "fault_cost_rate_step_max_usd_h" => self.fault_cost_volatility.and_then(|v| v.step_max),
            "running_pod_hours" => Some(self.running_pod_hours),
            "failures_per_running_pod_hour" => self.failures_per_running_pod_hour,
            "decision_time_p50_ms" => self.decision_time_ms(|d| d.p50_ns.map(|ns| ns as f64)),
            "decision_time_p99_ms" => self.decision_time_ms(|d| d.p99_ns.map(|ns| ns as f64)),
            "decision_time_mean_ms" => self.decision_time_ms(|d| d.mean_ns),
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

    fn decision_time_ms(&self, ns: impl Fn(&DecisionTimeFacts) -> Option<f64>) -> Option<f64> {
        self.decision_times.as_ref().and_then(ns).map(|ns| ns / 1e6)
    }

    /// A template's name: its Workload record's, else "workload N".
    pub fn workload_name(&self, workload: WorkloadId) -> String {
        self.workload_names
            .get(&workload)
            .cloned()
            .unwrap_or_else(|| format!("workload {}", workload.0))
    }

    /// The memory/failure correlation within each template that has a pod
    /// bound at least once, in template order; `rng_for` gives each template
    /// its own bootstrap stream.
    pub fn template_correlations<R: Rng>(
        &self,
        resamples: usize,
        mut rng_for: impl FnMut(WorkloadId) -> R,
    ) -> Vec<TemplateCorrelation> {
        let mut by_template: BTreeMap<WorkloadId, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
        for p in &self.pod_outcomes {
            let (x, y) = by_template.entry(p.workload).or_default();
            x.push(p.memory_request_bytes as f64);
            y.push(f64::from(p.failures));
        }
        by_template
            .into_iter()
            .map(|(workload, (x, y))| TemplateCorrelation {
                workload,
                name: self.workload_name(workload),
                estimate: correlation_ci(&x, &y, CONFIDENCE, resamples, &mut rng_for(workload)),
            })
            .collect()
    }

    /// [`RunMetrics::mem_failure_partial_pearson`] with its bootstrap
    /// interval over pods.
    pub fn mem_failure_partial_correlation(&self, resamples: usize, rng: &mut impl Rng) -> PartialEstimate {
        let x: Vec<f64> = self
            .pod_outcomes
            .iter()
            .map(|p| p.memory_request_bytes as f64)
            .collect();
        let y: Vec<f64> = self.pod_outcomes.iter().map(|p| f64::from(p.failures)).collect();
        let g: Vec<u64> = self.pod_outcomes.iter().map(|p| u64::from(p.workload.0)).collect();
        partial_correlation_ci(&x, &y, &g, CONFIDENCE, resamples, rng)
    }
}

/// Reads a records file and computes its run's metrics, with the decision
/// times of [`DECISION_TIMES_FILE`] beside it when that file exists. Errors
/// name the file, and the line where the records turn inconsistent.
pub fn from_file(path: &Path) -> Result<RunMetrics, MetricsError> {
    let mut builder = RunMetricsBuilder::for_source(path.display().to_string());
    for_each_numbered_record(path, |line, record| builder.push_at_line(line, &record))?;
    let mut metrics = builder.finish()?;
    metrics.decision_times = decision_times_beside(path)?;
    Ok(metrics)
}

/// The decision times of [`DECISION_TIMES_FILE`] beside the records file `records`, when that file exists.
pub(crate) fn decision_times_beside(records: &Path) -> Result<Option<DecisionTimeFacts>, MetricsError> {
    let path = records.with_file_name(DECISION_TIMES_FILE);
    Ok(if path.is_file() {
        Some(DecisionTimes::read(&path)?.facts())
    } else {
        None
    })
}
