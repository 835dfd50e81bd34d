//! The exact definition of every metric. These strings are printed into
//! report.md and the README: a number in a report means what is written here
//! and nothing else.

use serde::Serialize;

/// Which direction of a metric is the better one, if any. Reports mark the
/// best arm of a row only where this says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
    /// no direction is better in itself (counts of work done, usage)
    Neither,
}

/// A metric's key (as in [`crate::metrics::RunMetrics::value`], CSV and
/// JSON), its label and unit for tables, and its definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MetricDef {
    pub key: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    pub better: Better,
    pub definition: &'static str,
}

/// The per-run metrics, in report order. The Summary compares arms on each.
pub const METRICS: &[MetricDef] = &[
    MetricDef {
        key: "cpu_util_mean",
        label: "CPU requested / allocatable, mean",
        unit: "fraction",
        better: Better::Higher,
        definition: "At each sample time: the sum of the CPU requests of pods bound to Ready nodes (NodeSample.requested \
                     of nodes whose condition is Ready or Degraded, i.e. Ready in the core/v1 sense) divided by the sum \
                     of those nodes' allocatable CPU (from their Node records). Then the arithmetic mean over sample \
                     times. Sample times without Ready allocatable CPU are left out.",
    },
    MetricDef {
        key: "cpu_util_p95",
        label: "CPU requested / allocatable, p95",
        unit: "fraction",
        better: Better::Neither,
        definition: "The per-sample-time ratio of cpu_util_mean; then its 95th percentile over sample times by nearest \
                     rank (the smallest per-sample value with at least 95% of sample times at or below it).",
    },
    MetricDef {
        key: "mem_util_mean",
        label: "memory requested / allocatable, mean",
        unit: "fraction",
        better: Better::Higher,
        definition: "As cpu_util_mean, for memory: at each sample time the memory requests on Ready nodes divided by \
                     their allocatable memory; arithmetic mean over sample times.",
    },
    MetricDef {
        key: "mem_util_p95",
        label: "memory requested / allocatable, p95",
        unit: "fraction",
        better: Better::Neither,
        definition: "The per-sample-time ratio of mem_util_mean; its 95th percentile over sample times by nearest rank.",
    },
    MetricDef {
        key: "cpu_used_mean",
        label: "CPU used / allocatable, mean",
        unit: "fraction",
        better: Better::Neither,
        definition: "At each sample time: the actual CPU usage of the containers on Ready nodes (NodeSample.used) \
                     divided by those nodes' allocatable CPU; arithmetic mean over sample times.",
    },
    MetricDef {
        key: "mem_used_mean",
        label: "memory used / allocatable, mean",
        unit: "fraction",
        better: Better::Neither,
        definition: "At each sample time: the actual memory usage of the containers on Ready nodes (NodeSample.used) \
                     divided by those nodes' allocatable memory; arithmetic mean over sample times.",
    },
    MetricDef {
        key: "cpu_util_in_use_mean",
        label: "CPU requested / allocatable on nodes in use, mean",
        unit: "fraction",
        better: Better::Higher,
        definition: "Packing. At each sample time: the CPU requests on nodes hosting at least one pod (NodeSample.pods \
                     >= 1, whatever their condition) divided by those nodes' allocatable CPU; arithmetic mean over \
                     sample times at which at least one node hosts a pod.",
    },
    MetricDef {
        key: "mem_util_in_use_mean",
        label: "memory requested / allocatable on nodes in use, mean",
        unit: "fraction",
        better: Better::Higher,
        definition: "As cpu_util_in_use_mean, for memory.",
    },
    MetricDef {
        key: "nodes_in_use_mean",
        label: "nodes in use, mean",
        unit: "nodes",
        better: Better::Lower,
        definition: "ClusterSample.nodes_in_use (nodes hosting at least one pod), arithmetic mean over cluster samples.",
    },
    MetricDef {
        key: "nodes_in_use_max",
        label: "nodes in use, max",
        unit: "nodes",
        better: Better::Lower,
        definition: "ClusterSample.nodes_in_use, maximum over cluster samples.",
    },
    MetricDef {
        key: "cost_usd",
        label: "node cost",
        unit: "USD",
        better: Better::Lower,
        definition: "Left Riemann sum of the cluster's cost rate: the sum over cluster samples of \
                     ClusterSample.hourly_cost times the time to the next cluster sample (for the last sample: to the \
                     End record), divided by 3600 s. hourly_cost is the sum of the hourly prices of the nodes hosting \
                     at least one pod, so a node is billed while it hosts a pod and not while it is empty, as under a \
                     scale-down autoscaler. Time before the first sample is not billed.",
    },
    MetricDef {
        key: "pods_created",
        label: "pods created",
        unit: "pods",
        better: Better::Neither,
        definition: "PodCreated events: pod incarnations created during the run, including those an owner recreated \
                     after an eviction, a churn deletion or a failure (each incarnation has its own pod id).",
    },
    MetricDef {
        key: "pods_bound",
        label: "pods bound",
        unit: "pods",
        better: Better::Neither,
        definition: "Pod incarnations with at least one PodBound event.",
    },
    MetricDef {
        key: "pods_pending_end",
        label: "pods pending at the end",
        unit: "pods",
        better: Better::Lower,
        definition: "Pod incarnations created, never bound and not deleted before the End record: pods still waiting \
                     for a node when the run ended.",
    },
    MetricDef {
        key: "pods_declined",
        label: "pods declined",
        unit: "pods",
        better: Better::Neither,
        definition: "Pod incarnations with at least one PodDeclined event (a feasible node existed, the policy chose \
                     to wait).",
    },
    MetricDef {
        key: "pods_unschedulable",
        label: "pods unschedulable",
        unit: "pods",
        better: Better::Neither,
        definition: "Pod incarnations with at least one PodUnschedulable event (no feasible node).",
    },
    MetricDef {
        key: "throughput_per_min",
        label: "binds per minute",
        unit: "binds/min",
        better: Better::Neither,
        definition: "PodBound events divided by the run's length in minutes of scenario time (the End record's time; \
                     runs start at 0). Undefined for a run of zero length.",
    },
    MetricDef {
        key: "restarts",
        label: "container restarts",
        unit: "events",
        better: Better::Lower,
        definition: "ContainerStarted events with restart_count > 0.",
    },
    MetricDef {
        key: "oom_kills",
        label: "OOM kills",
        unit: "events",
        better: Better::Lower,
        definition: "ContainerExited events with reason OOMKilled (at the container's limit or under node memory \
                     pressure).",
    },
    MetricDef {
        key: "evictions",
        label: "evictions",
        unit: "events",
        better: Better::Lower,
        definition: "PodEvicted events.",
    },
    MetricDef {
        key: "failures",
        label: "failures",
        unit: "events",
        better: Better::Lower,
        definition: "ContainerExited events with reason Error or OOMKilled, plus PodEvicted events, plus PodFailed \
                     events. A crash that ends a pod for good counts twice: its exit and its PodFailed.",
    },
    MetricDef {
        key: "failure_rate",
        label: "pods with a failure / pods bound",
        unit: "fraction",
        better: Better::Lower,
        definition: "Pod incarnations with at least one failure (as counted in failures) divided by pods_bound. \
                     Undefined when no pod was bound.",
    },
    MetricDef {
        key: "sched_latency_p50_s",
        label: "scheduling latency, p50",
        unit: "s",
        better: Better::Lower,
        definition: "Scheduling latency of a pod incarnation: time from its PodCreated to its first PodBound, recorded \
                     in whole milliseconds into an HDR histogram with 3 significant digits. Pods never bound are not \
                     in it (they count in pods_pending_end). This is its 50th percentile by nearest rank, reported as \
                     the upper bound of the histogram bucket holding it (at most 0.1% above the exact value), in \
                     seconds.",
    },
    MetricDef {
        key: "sched_latency_p99_s",
        label: "scheduling latency, p99",
        unit: "s",
        better: Better::Lower,
        definition: "The 99th percentile of the scheduling latencies of sched_latency_p50_s, by nearest rank, as the \
                     upper bound of its histogram bucket, in seconds.",
    },
    MetricDef {
        key: "sched_latency_mean_s",
        label: "scheduling latency, mean",
        unit: "s",
        better: Better::Lower,
        definition: "The exact arithmetic mean of the millisecond scheduling latencies of sched_latency_p50_s (not \
                     read from the histogram), in seconds.",
    },
];

/// The per-run correlations. Reports show them run by run with their own
/// bootstrap intervals instead of averaging them over seeds.
pub const CORRELATIONS: &[MetricDef] = &[
    MetricDef {
        key: "mem_failure_pearson",
        label: "memory request vs failures, Pearson r",
        unit: "r",
        better: Better::Neither,
        definition: "Over pod incarnations bound at least once: Pearson's r between the pod's memory request (bytes, \
                     from PodCreated) and its failure count (as counted in failures). Undefined for fewer than 3 \
                     pods or when either side has zero variance. 95% interval: percentile bootstrap over pods \
                     (1,000 resamples of the pods with replacement, seeded from the statistics seed, nearest-rank \
                     2.5th and 97.5th percentiles); resamples in which r is undefined are left out and counted.",
    },
    MetricDef {
        key: "mem_failure_spearman",
        label: "memory request vs failures, Spearman rho",
        unit: "rho",
        better: Better::Neither,
        definition: "As mem_failure_pearson, with Spearman's rho: Pearson's r of the ranks, tied values sharing the \
                     average of the ranks they span.",
    },
];

/// How the Summary aggregates a metric over the seeds of an arm.
pub const ACROSS_SEEDS: &str = "For each arm and metric: n is the number of runs (seeds) in which the metric is \
                                defined (runs where it is undefined are left out and counted); mean is the arithmetic \
                                mean over those runs; std is their sample standard deviation (n - 1 in the \
                                denominator; undefined for n = 1); the 95% interval of the mean is a percentile \
                                bootstrap over runs (1,000 resamples with replacement, seeded, nearest-rank 2.5th \
                                and 97.5th percentiles of the resampled means). With n = 1 the interval is the single \
                                value. Tables print mean ± half the interval's width; the interval need not be \
                                symmetric, its exact bounds are in summary.csv and summary.json.";

/// The definition of `key`, among [`METRICS`] and [`CORRELATIONS`].
pub fn find(key: &str) -> Option<&'static MetricDef> {
    METRICS.iter().chain(CORRELATIONS).find(|d| d.key == key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn keys_are_unique_and_defined() {
        let keys: BTreeSet<_> = METRICS.iter().chain(CORRELATIONS).map(|d| d.key).collect();
        assert_eq!(keys.len(), METRICS.len() + CORRELATIONS.len());
        for d in METRICS.iter().chain(CORRELATIONS) {
            assert!(
                !d.definition.is_empty() && !d.label.is_empty() && !d.unit.is_empty(),
                "{}",
                d.key
            );
            assert!(d.definition.ends_with('.'), "{}", d.key);
        }
        assert_eq!(find("cost_usd").map(|d| d.better), Some(Better::Lower));
        assert!(find("nope").is_none());
    }
}
