//! The streaming accumulator: records in, [`RunSeries`] out. The metrics
//! builder runs alongside and decides what is consistent, so a records file
//! yields series exactly when it yields metrics.

use super::{ClusterPoint, NodeInfo, NodePoint, OutcomeCount, RunSeries};
use crate::metrics::{MetricsError, RunMetricsBuilder};
use schedlab_core::record::{EventKind, Record};
use schedlab_core::{NodeId, Resources, Time};
use std::collections::BTreeMap;

/// Streaming accumulator of a run's series: push every record in order, then
/// [`RunSeriesBuilder::finish`]. Errors are the metrics builder's, naming
/// the source and the record or line.
#[derive(Debug)]
pub struct RunSeriesBuilder {
    metrics: RunMetricsBuilder,
    allocatable: BTreeMap<NodeId, Resources>,
    nodes: Vec<NodeInfo>,
    node_points: Vec<NodePoint>,
    cluster: Vec<ClusterPoint>,
    restarts: Vec<Time>,
}

impl Default for RunSeriesBuilder {
    fn default() -> Self {
        Self::new()
    }
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

impl RunSeriesBuilder {
    /// A builder whose errors call the records "records".
    pub fn new() -> Self {
        Self::for_source("records")
    }

    /// A builder whose errors name `source` (a file, a run).
    pub fn for_source(source: impl Into<String>) -> Self {
        RunSeriesBuilder {
            metrics: RunMetricsBuilder::for_source(source),
            allocatable: BTreeMap::new(),
            nodes: Vec::new(),
            node_points: Vec::new(),
            cluster: Vec::new(),
            restarts: Vec::new(),
        }
    }

    /// Adds the next record.
    pub fn push(&mut self, r: &Record) {
        self.metrics.push(r);
        self.apply(r);
    }

    /// Adds the next record, read from line `line` of the source file.
    pub fn push_at_line(&mut self, line: u64, r: &Record) {
        self.metrics.push_at_line(line, r);
        self.apply(r);
    }

    // Inconsistent records are the metrics builder's to report; here they
    // are only kept out of the series (finish then fails anyway).
    fn apply(&mut self, r: &Record) {
        match r {
            Record::Node { node, spec } => {
                if self.allocatable.insert(*node, spec.allocatable).is_none() {
                    self.nodes.push(NodeInfo {
                        node: *node,
                        name: spec.name.clone(),
                    });
                }
            }
            Record::NodeSample(s) => {
                if let Some(a) = self.allocatable.get(&s.node) {
                    self.node_points.push(NodePoint {
                        t: s.t,
                        node: s.node,
                        cpu_util: ratio(s.requested.cpu_milli, a.cpu_milli),
                        mem_util: ratio(s.requested.memory_bytes, a.memory_bytes),
                        pods: s.pods,
                        condition: s.condition,
                    });
                }
            }
            Record::ClusterSample(s) => self.cluster.push(ClusterPoint {
                t: s.t,
                cpu_util: ratio(s.requested.cpu_milli, s.allocatable.cpu_milli),
                mem_util: ratio(s.requested.memory_bytes, s.allocatable.memory_bytes),
                pending: s.pending,
                bound: s.bound,
                nodes_in_use: s.nodes_in_use,
                hourly_cost: s.hourly_cost,
            }),
            Record::Event(e) => {
                // the same test as the `restarts` metric
                if let EventKind::ContainerStarted { restart_count, .. } = e.kind
                    && restart_count > 0
                {
                    self.restarts.push(e.t);
                }
            }
            Record::Workload { .. } | Record::End { .. } => {}
        }
    }

    /// The run's series; `Err` exactly when the metrics builder fails
    /// (inconsistent records, no End record).
    pub fn finish(self) -> Result<RunSeries, MetricsError> {
        let metrics = self.metrics.finish()?;
        let mut counts: BTreeMap<(u64, u32), u64> = BTreeMap::new();
        for p in &metrics.pod_outcomes {
            *counts.entry((p.memory_request_bytes, p.failures)).or_default() += 1;
        }
        let outcome_counts = counts
            .into_iter()
            .map(|((memory_request_bytes, failures), pods)| OutcomeCount {
                memory_request_bytes,
                failures,
                pods,
            })
            .collect();
        Ok(RunSeries {
            nodes: self.nodes,
            node_points: self.node_points,
            cluster: self.cluster,
            outcome_counts,
            restarts: self.restarts,
            metrics,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_records::*;
    use schedlab_core::{NodeCondition, Span};

    fn series_of(records: &[Record]) -> Result<RunSeries, MetricsError> {
        let mut b = RunSeriesBuilder::new();
        for r in records {
            b.push(r);
        }
        b.finish()
    }

    #[test]
    fn hand_run_series() {
        let s = series_of(&hand_run()).unwrap();
        assert_eq!(s.nodes.len(), 2);
        assert_eq!(s.nodes[1].name, "node-1");
        assert_eq!(s.node_points.len(), 6);
        // node 0 at 20 s: 1500 of 4000 m, 3000 of 8000 B
        let p = s.node_points[2];
        assert_eq!((p.t, p.node, p.pods), (Time(20_000), NodeId(0), 2));
        assert_eq!(p.cpu_util, Some(0.375));
        assert_eq!(p.mem_util, Some(0.375));
        assert_eq!(s.node_points[5].condition, NodeCondition::NotReady);
        assert_eq!(s.cluster.len(), 3);
        assert_eq!(s.cluster[1].nodes_in_use, 2);
        // the helper writes zero allocatable: utilisation is undefined, not NaN
        assert_eq!(s.cluster[1].cpu_util, None);
        assert_eq!(s.restarts, vec![Time(30_000), Time(50_000)]);
        assert_eq!(s.restarts.len() as u64, s.metrics.restarts);
        assert_eq!(s.end(), Time(60_000));
        assert_eq!(s.pod_outcomes().len() as u64, s.metrics.pods_bound);
        assert_eq!(
            s.outcome_counts.iter().map(|c| c.pods).sum::<u64>(),
            s.metrics.pods_bound
        );
        assert!(s.outcome_counts.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn restart_buckets_cover_the_run() {
        let s = series_of(&hand_run()).unwrap();
        let b = s.restarts_per_bucket(Span(20_000));
        let counts: Vec<u64> = b.iter().map(|b| b.count).collect();
        assert_eq!(counts, vec![0, 1, 1]);
        assert_eq!(b[2].start, Time(40_000));
        let total: u64 = s.restarts_per_bucket(Span(7_000)).iter().map(|b| b.count).sum();
        assert_eq!(total, 2);
        assert!(s.restarts_per_bucket(Span(0)).is_empty());
    }

    #[test]
    fn restart_at_the_end_lands_in_the_last_bucket() {
        let s = series_of(&[
            node(0, 1000, 1000, 1.0),
            created(0, 1, 1, 1),
            bound(0, 1, 0),
            started(10, 1, 0, 0),
            started(10_000, 1, 0, 1),
            end(10_000),
        ])
        .unwrap();
        let b = s.restarts_per_bucket(Span(5_000));
        assert_eq!(b.iter().map(|b| b.count).collect::<Vec<_>>(), vec![0, 1]);
    }

    #[test]
    fn latencies_match_the_metrics() {
        let s = series_of(&hand_run()).unwrap();
        let lat = s.sched_latencies_s();
        let n: u64 = lat.iter().map(|(_, c)| c).sum();
        assert_eq!(n, s.metrics.pods_bound);
        // pods 1, 2, 4, 5 bound 1 s, 3 s, 1 s and 0.5 s after creation
        let values: Vec<f64> = lat.iter().map(|(v, _)| *v).collect();
        assert_eq!(values, vec![0.5, 1.0, 3.0]);
        assert_eq!(lat[1].1, 2);
    }

    #[test]
    fn errors_are_the_metrics_errors() {
        let mut records = hand_run();
        records.pop();
        assert!(matches!(series_of(&records), Err(MetricsError::Incomplete { .. })));
        let e = series_of(&[node(0, 1, 1, 1.0), bound(1, 7, 0), end(2)]).unwrap_err();
        assert!(e.to_string().contains("record 2"), "{e}");
    }
}
