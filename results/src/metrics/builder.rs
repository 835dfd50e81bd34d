//! The streaming accumulator: records in, [`RunMetrics`] out.

use super::cascades::Cascades;
use super::concentration::FailureSpread;
use super::cost_volatility::CostSeries;
use super::goodput::Goodput;
use super::node_health::NodeHealth;
use super::pods::{Pods, name};
use super::samples::Samples;
use super::strata::strata;
use super::{MetricsError, RunMetrics};
use crate::hdr::EncodedHistogram;
use crate::stats::{partial_pearson, pearson, spearman};
use hdrhistogram::Histogram;
use schedlab_core::record::{EventKind, OomCause, Record};
use schedlab_core::{Time, WorkloadId};
use std::collections::BTreeMap;

/// Significant digits of the scheduling-latency histogram.
const LATENCY_SIGNIFICANT_DIGITS: u8 = 3;

/// Where the records come from and where the current one is, for errors.
#[derive(Debug, Clone, Copy)]
enum Position {
    Record(u64),
    Line(u64),
}

/// Streaming accumulator of a run's metrics: push every record in order,
/// then [`RunMetricsBuilder::finish`]. The first inconsistency found is kept
/// and returned by `finish`; records after it are ignored.
#[derive(Debug)]
pub struct RunMetricsBuilder {
    source: String,
    position: Position,
    error: Option<MetricsError>,
    end: Option<Time>,
    latest: Time,
    samples: Samples,
    pods: Pods,
    workload_names: BTreeMap<WorkloadId, String>,
    node_health: NodeHealth,
    cascades: Cascades,
    spread: FailureSpread,
    goodput: Goodput,
    cost: CostSeries,
}

impl Default for RunMetricsBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl RunMetricsBuilder {
    /// A builder whose errors call the records "records".
    pub fn new() -> Self {
        Self::for_source("records")
    }

    /// A builder whose errors name `source` (a file, a run).
    pub fn for_source(source: impl Into<String>) -> Self {
        RunMetricsBuilder {
            source: source.into(),
            position: Position::Record(0),
            error: None,
            end: None,
            latest: Time::ZERO,
            samples: Samples::default(),
            pods: Pods::default(),
            workload_names: BTreeMap::new(),
            node_health: NodeHealth::default(),
            cascades: Cascades::default(),
            spread: FailureSpread::default(),
            goodput: Goodput::default(),
            cost: CostSeries::default(),
        }
    }

    /// Adds the next record.
    pub fn push(&mut self, r: &Record) {
        self.position = match self.position {
            Position::Record(n) => Position::Record(n + 1),
            Position::Line(_) => Position::Record(0),
        };
        self.apply(r);
    }

    /// Adds the next record, read from line `line` of the source file.
    pub fn push_at_line(&mut self, line: u64, r: &Record) {
        self.position = Position::Line(line);
        self.apply(r);
    }

    fn apply(&mut self, r: &Record) {
        if self.error.is_some() {
            return;
        }
        if let Err(reason) = self.check_and_apply(r) {
            let at = match self.position {
                Position::Record(n) => format!("record {n}"),
                Position::Line(n) => format!("line {n}"),
            };
            self.error = Some(MetricsError::Inconsistent {
                source_name: self.source.clone(),
                at,
                reason,
            });
        }
    }

    fn check_and_apply(&mut self, r: &Record) -> Result<(), String> {
        if let Some(end) = self.end {
            return Err(format!("a record after the End record at {end}"));
        }
        match r {
            Record::Node { node, spec } => self.samples.node(*node, spec.allocatable),
            Record::Event(e) => {
                self.latest = self.latest.max(e.t);
                if let Some(node) = e.kind.node()
                    && !self.samples.is_known(node)
                {
                    return Err(format!("{} on node {} that has no Node record", name(&e.kind), node.0));
                }
                let onto_degraded =
                    matches!(e.kind, EventKind::PodBound { node, .. } if self.node_health.is_degraded(node));
                self.pods.event(e.t, &e.kind, onto_degraded)?;
                self.node_health.event(e.t, &e.kind);
                self.goodput.event(e.t, &e.kind);
                if let Some(node) = e.kind.node()
                    && e.kind.is_failure()
                {
                    self.cascades.failure(e.t, node);
                    self.spread.failure(node);
                }
                if let EventKind::ContainerExited {
                    node,
                    oom_cause: Some(OomCause::NodePressure),
                    ..
                } = e.kind
                {
                    self.cascades.oom_pressure_victim(e.t, node);
                }
                Ok(())
            }
            Record::Workload { workload, name } => {
                if self.workload_names.insert(*workload, name.clone()).is_some() {
                    return Err(format!("a second Workload record for workload {}", workload.0));
                }
                Ok(())
            }
            Record::NodeSample(s) => {
                self.latest = self.latest.max(s.t);
                self.samples.node_sample(s)
            }
            Record::ClusterSample(s) => {
                self.latest = self.latest.max(s.t);
                self.samples.cluster_sample(s)?;
                self.cost.push(s.t, s.hourly_cost);
                Ok(())
            }
            Record::End { t } => {
                if *t < self.latest {
                    return Err(format!("End at {t} before a record at {}", self.latest));
                }
                self.end = Some(*t);
                Ok(())
            }
        }
    }

    /// The run's metrics; `Err` if a record was inconsistent or the records
    /// have no End (the run did not complete).
    pub fn finish(self) -> Result<RunMetrics, MetricsError> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let Some(end) = self.end else {
            return Err(MetricsError::Incomplete {
                source_name: self.source,
            });
        };
        let mut histogram =
            Histogram::<u64>::new(LATENCY_SIGNIFICANT_DIGITS).map_err(|e| MetricsError::Histogram(format!("{e:?}")))?;
        for &ms in &self.pods.latencies_ms {
            histogram
                .record(ms)
                .map_err(|e| MetricsError::Histogram(format!("{e:?}")))?;
        }
        let latencies = &self.pods.latencies_ms;
        let quantile_s = |q: f64| (!histogram.is_empty()).then(|| histogram.value_at_quantile(q) as f64 / 1000.0);
        let latency_mean_s = (!latencies.is_empty())
            .then(|| latencies.iter().map(|&ms| u128::from(ms)).sum::<u128>() as f64 / latencies.len() as f64 / 1000.0);

        let pods = self.pods.counts();
        let fault_window = self.node_health.fault_window(end);
        let fault_headroom_mean = self.samples.headroom_mean(fault_window);
        let s = self.samples.finish(end);
        let failure_concentration = self.spread.finish(s.nodes);
        let minutes = end.as_millis() as f64 / 60_000.0;
        let (mem, failures): (Vec<f64>, Vec<f64>) = pods
            .outcomes
            .iter()
            .map(|p| (p.memory_request_bytes as f64, f64::from(p.failures)))
            .unzip();
        let templates: Vec<u64> = pods.outcomes.iter().map(|p| u64::from(p.workload.0)).collect();
        let (cost_volatility, fault_cost_volatility) = self.cost.finish(fault_window);
        let hours = self.goodput.finish(end);
        let running_pod_hours = hours.running;
        let scenario_hours = end.as_millis() as f64 / 3_600_000.0;
        Ok(RunMetrics {
            end,
            samples: s,
            pods_created: pods.created,
            pods_bound: pods.bound,
            pods_pending_end: pods.pending_end,
            pods_declined: pods.declined,
            pods_unschedulable: pods.unschedulable,
            pods_never_bound: pods.never_bound,
            completions_per_hour: (end.as_millis() > 0).then(|| pods.succeeded as f64 / scenario_hours),
            pending_time_mean_s: self.pods.pending_time_mean_s(end),
            binds: self.pods.binds,
            throughput_per_min: (end.as_millis() > 0).then(|| self.pods.binds as f64 / minutes),
            restarts: self.pods.restarts,
            oom_kills: self.pods.oom_kills,
            evictions: self.pods.evictions,
            preemptions: self.pods.preemptions,
            pods_preempted: self.pods.preempted,
            failures: self.pods.failures,
            pods_with_failure: pods.with_failure,
            failure_rate: (pods.bound > 0).then(|| pods.with_failure as f64 / pods.bound as f64),
            sched_latency_p50_s: quantile_s(0.5),
            sched_latency_p99_s: quantile_s(0.99),
            sched_latency_mean_s: latency_mean_s,
            sched_latency_ms: EncodedHistogram::encode(&histogram).map_err(MetricsError::Histogram)?,
            mem_failure_pearson: pearson(&mem, &failures),
            mem_failure_spearman: spearman(&mem, &failures),
            mem_failure_partial_pearson: partial_pearson(&mem, &failures, &templates),
            pod_outcomes: pods.outcomes,
            workload_names: self.workload_names,
            strata: strata(&pods.strata, end),
            cascades: self.cascades.finish(),
            cost_volatility,
            fault_cost_volatility,
            fault_window,
            running_pod_hours,
            failures_per_running_pod_hour: (running_pod_hours > 0.0)
                .then(|| self.pods.failures as f64 / running_pod_hours),
            goodput_pod_hours: hours.good,
            fault_headroom_mean,
            failure_concentration,
            decision_times: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::*;
    use schedlab_core::NodeCondition;

    fn error_of(records: &[Record]) -> String {
        match metrics_of(records) {
            Err(MetricsError::Inconsistent { at, reason, .. }) => format!("{at}: {reason}"),
            other => panic!("expected an inconsistency, got {other:?}"),
        }
    }

    #[test]
    fn incomplete_without_end() {
        let mut records = hand_run();
        records.pop();
        assert!(matches!(metrics_of(&records), Err(MetricsError::Incomplete { .. })));
        assert!(matches!(metrics_of(&[]), Err(MetricsError::Incomplete { .. })));
    }

    #[test]
    fn inconsistencies_name_the_record() {
        let n = node(0, 1000, 1000, 1.0);
        let e = error_of(&[n.clone(), end(10), created(11, 1, 1, 1)]);
        assert!(e.starts_with("record 3") && e.contains("after the End"), "{e}");
        let e = error_of(&[n.clone(), bound(1, 7, 0), end(2)]);
        assert!(e.contains("pod 7 that was never created"), "{e}");
        let e = error_of(&[n.clone(), created(5, 1, 1, 1), bound(4, 1, 0), end(9)]);
        assert!(e.contains("before its creation"), "{e}");
        let e = error_of(&[n.clone(), created(0, 1, 1, 1), started(1, 1, 0, 0), end(9)]);
        assert!(e.contains("never bound"), "{e}");
        let e = error_of(&[n.clone(), created(0, 1, 1, 1), created(0, 1, 1, 1), end(9)]);
        assert!(e.contains("second PodCreated"), "{e}");
        let e = error_of(&[n.clone(), created(0, 1, 1, 1), bound(1, 1, 3), end(9)]);
        assert!(e.contains("node 3 that has no Node record"), "{e}");
        let e = error_of(&[n.clone(), n.clone(), end(1)]);
        assert!(e.contains("second Node record"), "{e}");
        let ready = NodeCondition::Ready;
        let e = error_of(&[n.clone(), node_sample(5, 1, (0, 0), (0, 0), 0, ready), end(9)]);
        assert!(e.contains("no Node record"), "{e}");
        let e = error_of(&[
            n.clone(),
            node_sample(5, 0, (0, 0), (0, 0), 0, ready),
            node_sample(5, 0, (0, 0), (0, 0), 0, ready),
            end(9),
        ]);
        assert!(e.contains("does not come after"), "{e}");
        let e = error_of(&[n.clone(), cluster_sample(5, 0, 1.0), cluster_sample(4, 0, 1.0), end(9)]);
        assert!(e.contains("time order"), "{e}");
        let e = error_of(&[n.clone(), cluster_sample(5, 0, -1.0), end(9)]);
        assert!(e.contains("hourly_cost"), "{e}");
        let e = error_of(&[n, created(20, 1, 1, 1), end(10)]);
        assert!(e.starts_with("record 3") && e.contains("End at 0.010s before"), "{e}");
    }

    #[test]
    fn first_error_is_kept() {
        let mut b = RunMetricsBuilder::for_source("run-a");
        b.push(&bound(1, 1, 0));
        b.push(&bound(1, 2, 0));
        b.push(&end(5));
        let msg = b.finish().unwrap_err().to_string();
        assert!(msg.starts_with("run-a, record 1"), "{msg}");
    }

    #[test]
    fn rebinding_counts_one_pod_and_its_first_latency() {
        let m = metrics_of(&[
            node(0, 1000, 1000, 1.0),
            created(0, 1, 1, 1),
            bound(200, 1, 0),
            bound(900, 1, 0),
            end(60_000),
        ])
        .unwrap();
        assert_eq!((m.pods_bound, m.binds), (1, 2));
        assert_eq!(m.sched_latency_mean_s, Some(0.2));
    }
}
