//! The exact definition of every metric. These strings are printed into
//! report.md and the book's metrics chapter (`docs/src/metrics.md`, rendered
//! by [`metrics_page`]): a number in a report means what is written here and
//! nothing else.

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
                     after an eviction, a churn deletion, a preemption or a failure (each incarnation has its own \
                     pod id).",
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
        key: "preemptions",
        label: "preemptions",
        unit: "events",
        better: Better::Neither,
        definition: "PodNominated events: a pod no node could take had pods of lower priority deleted to make room \
                     (kube-scheduler's DefaultPreemption). Neither good nor bad by itself: it serves urgent work \
                     at the cost of the victims.",
    },
    MetricDef {
        key: "pods_preempted",
        label: "pods preempted",
        unit: "pods",
        better: Better::Lower,
        definition: "Pods deleted by preemption (PodDeleted with cause preempted); their owners recreate them. \
                     Not counted as failures.",
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
    MetricDef {
        key: "critical_pods",
        label: "critical pods",
        unit: "pods",
        better: Better::Neither,
        definition: "The critical stratum: pod incarnations whose PodCreated priority equals the highest priority of \
                     the run's PodCreated events, when that priority is above 0 and at least one pod of the run has a \
                     lower priority; the rest stratum is every other pod (every pod when there is no critical \
                     stratum). This is the number of critical pods created. Every critical_* metric is undefined \
                     when there is no critical stratum.",
    },
    MetricDef {
        key: "critical_bind_p50_s",
        label: "critical pods: time to bind, p50 (censored)",
        unit: "s",
        better: Better::Lower,
        definition: "Over the critical pods (see critical_pods): the time from a pod's PodCreated to its first \
                     PodBound, in whole milliseconds; a pod never bound is censored at its PodDeleted if it was \
                     deleted before any bind, otherwise at the End record (it waited at least that long). The \
                     Kaplan-Meier estimate S(t) = product over bind times t_i <= t of (1 - d_i / n_i), with d_i the \
                     pods bound at t_i and n_i the pods whose time (bind or censoring) is at least t_i; this is the \
                     smallest bind time t with S(t) <= 0.5, in seconds. Undefined when S never falls to 0.5 (too \
                     many pods censored) or the stratum is empty. Without censored pods it is the nearest-rank \
                     median of the bind times.",
    },
    MetricDef {
        key: "critical_bind_p99_s",
        label: "critical pods: time to bind, p99 (censored)",
        unit: "s",
        better: Better::Lower,
        definition: "As critical_bind_p50_s, the smallest bind time t with S(t) <= 0.01. Undefined when more than 1% \
                     of the estimated distribution is never reached, for instance when more than 1% of the critical \
                     pods are never bound.",
    },
    MetricDef {
        key: "critical_failures_per_pod",
        label: "critical pods: failures per pod bound",
        unit: "events/pod",
        better: Better::Lower,
        definition: "Failures (as counted in failures) of critical pods divided by the critical pods bound at least \
                     once. Undefined when none was bound.",
    },
    MetricDef {
        key: "critical_degraded_binds",
        label: "critical pods: binds onto degraded nodes",
        unit: "binds",
        better: Better::Lower,
        definition: "PodBound events of critical pods onto a node that is Degraded at that moment: the node's last \
                     NodeDegraded, NodeRecovered, NodeFailed, NodeLost or NodeReplaced event before the bind is \
                     NodeDegraded (a node without such events is healthy; a Failed or Lost node is not Degraded).",
    },
    MetricDef {
        key: "critical_degraded_bind_share",
        label: "critical pods: share of binds onto degraded nodes",
        unit: "fraction",
        better: Better::Lower,
        definition: "critical_degraded_binds divided by the PodBound events of critical pods. Undefined without such \
                     binds.",
    },
    MetricDef {
        key: "rest_bind_p50_s",
        label: "other pods: time to bind, p50 (censored)",
        unit: "s",
        better: Better::Lower,
        definition: "As critical_bind_p50_s, over the rest stratum (see critical_pods).",
    },
    MetricDef {
        key: "rest_bind_p99_s",
        label: "other pods: time to bind, p99 (censored)",
        unit: "s",
        better: Better::Lower,
        definition: "As critical_bind_p99_s, over the rest stratum.",
    },
    MetricDef {
        key: "rest_failures_per_pod",
        label: "other pods: failures per pod bound",
        unit: "events/pod",
        better: Better::Lower,
        definition: "As critical_failures_per_pod, over the rest stratum.",
    },
    MetricDef {
        key: "rest_degraded_binds",
        label: "other pods: binds onto degraded nodes",
        unit: "binds",
        better: Better::Lower,
        definition: "As critical_degraded_binds, over the rest stratum.",
    },
    MetricDef {
        key: "rest_degraded_bind_share",
        label: "other pods: share of binds onto degraded nodes",
        unit: "fraction",
        better: Better::Lower,
        definition: "As critical_degraded_bind_share, over the rest stratum.",
    },
    MetricDef {
        key: "oom_pressure_events",
        label: "node-pressure OOM events",
        unit: "events",
        better: Better::Lower,
        definition: "Node-pressure OOM events: the distinct (node, time) pairs of ContainerExited events with reason \
                     OOMKilled and oom_cause NodePressure (the kernel picks all victims of one memory shortage at \
                     once). Kills at a container's own limit are not among them.",
    },
    MetricDef {
        key: "oom_victims_per_event_mean",
        label: "victims per node-pressure OOM event, mean",
        unit: "containers",
        better: Better::Lower,
        definition: "ContainerExited events with oom_cause NodePressure divided by oom_pressure_events. Undefined \
                     without such events.",
    },
    MetricDef {
        key: "oom_victims_per_event_max",
        label: "victims per node-pressure OOM event, max",
        unit: "containers",
        better: Better::Lower,
        definition: "The largest number of ContainerExited events with oom_cause NodePressure sharing one node and \
                     one time; 0 without such events.",
    },
    MetricDef {
        key: "failure_bursts",
        label: "failure bursts",
        unit: "bursts",
        better: Better::Lower,
        definition: "On each node, its failures (as counted in failures; every one of them names a node) in time \
                     order are chained: a failure at most 60 s (60,000 ms, inclusive) after the previous failure on \
                     the same node extends that failure's chain, a later one starts a new chain. A burst is a \
                     maximal chain of at least 2 failures; this counts them over all nodes.",
    },
    MetricDef {
        key: "failure_burst_max",
        label: "largest failure burst",
        unit: "failures",
        better: Better::Lower,
        definition: "The number of failures in the largest burst of failure_bursts; 0 without bursts.",
    },
    MetricDef {
        key: "cost_rate_cv",
        label: "cost rate, coefficient of variation",
        unit: "ratio",
        better: Better::Lower,
        definition: "Over the cluster samples, each counted once: the sample standard deviation (n - 1) of \
                     ClusterSample.hourly_cost divided by its arithmetic mean. Undefined for fewer than 2 samples or \
                     a mean of 0.",
    },
    MetricDef {
        key: "cost_rate_range_usd_h",
        label: "cost rate, max - min",
        unit: "USD/h",
        better: Better::Lower,
        definition: "The largest minus the smallest ClusterSample.hourly_cost of the run. Undefined without cluster \
                     samples.",
    },
    MetricDef {
        key: "cost_rate_step_max_usd_h",
        label: "cost rate, largest step",
        unit: "USD/h",
        better: Better::Lower,
        definition: "The largest absolute difference of ClusterSample.hourly_cost between consecutive cluster \
                     samples. Undefined for fewer than 2 samples.",
    },
    MetricDef {
        key: "fault_cost_rate_cv",
        label: "cost rate under faults, coefficient of variation",
        unit: "ratio",
        better: Better::Lower,
        definition: "As cost_rate_cv, over the cluster samples in the fault window, bounds included: from the first \
                     NodeFailed, NodeDegraded or NodeLost event to the last NodeRecovered or NodeReplaced event, or \
                     to the End record when a node is still failed, degraded or lost then. Undefined without such \
                     faults.",
    },
    MetricDef {
        key: "fault_cost_rate_range_usd_h",
        label: "cost rate under faults, max - min",
        unit: "USD/h",
        better: Better::Lower,
        definition: "As cost_rate_range_usd_h, over the cluster samples in the fault window of fault_cost_rate_cv.",
    },
    MetricDef {
        key: "fault_cost_rate_step_max_usd_h",
        label: "cost rate under faults, largest step",
        unit: "USD/h",
        better: Better::Lower,
        definition: "As cost_rate_step_max_usd_h, between consecutive cluster samples both in the fault window of \
                     fault_cost_rate_cv.",
    },
    MetricDef {
        key: "running_pod_hours",
        label: "running pod-hours",
        unit: "pod-h",
        better: Better::Higher,
        definition: "Goodput: the sum over ContainerStarted events of the time to that container's stop, in hours: \
                     its pod's next ContainerExited, PodDeleted or PodEvicted, a NodeFailed or NodeLost of the node \
                     it started on (a failed node's containers stop without a ContainerExited), its pod's next \
                     ContainerStarted, or the End record, whichever comes first.",
    },
    MetricDef {
        key: "failures_per_running_pod_hour",
        label: "failures per running pod-hour",
        unit: "events/pod-h",
        better: Better::Lower,
        definition: "failures divided by running_pod_hours, so that an arm cannot look better by running fewer pods. \
                     Undefined when no container ran.",
    },
    MetricDef {
        key: "completions_per_hour",
        label: "pods completed per hour",
        unit: "pods/h",
        better: Better::Higher,
        definition: "Pods that reached Succeeded ÷ the run's scenario hours. Pods that reached Succeeded: pod \
                     incarnations with a PodSucceeded event; scenario hours: the End record's time in hours (runs \
                     start at 0). Undefined for a run of zero length.",
    },
    MetricDef {
        key: "pending_time_mean_s",
        label: "time pending, mean",
        unit: "s",
        better: Better::Lower,
        definition: "Over every pod created, the time from its creation to its first bind, or, for a pod never bound, \
                     to its deletion or the run's end; arithmetic mean in seconds. Creation: the pod incarnation's \
                     PodCreated; first bind: its first PodBound; deletion: its first PodDeleted; the run's end: the \
                     End record. Undefined when no pod was created.",
    },
    MetricDef {
        key: "pods_never_bound",
        label: "pods never bound",
        unit: "pods",
        better: Better::Lower,
        definition: "Pods created and never bound (deleted while pending, or pending at the run's end): pod \
                     incarnations with a PodCreated and no PodBound event.",
    },
    MetricDef {
        key: "fault_headroom_mean",
        label: "free memory head-room under faults, mean",
        unit: "fraction",
        better: Better::Higher,
        definition: "Over the cluster samples in the fault window (the window of fault_cost_rate_cv), 1 − Σ memory \
                     requests on Ready nodes ÷ Σ their allocatable memory; arithmetic mean. Undefined without faults. \
                     At each ClusterSample time inside the window (bounds included): the NodeSample.requested memory \
                     of that time's node samples whose condition is Ready or Degraded (Ready in the core/v1 sense, as \
                     in mem_util_mean) and those nodes' allocatable memory from their Node records; a sample time \
                     without such a node is left out, and the metric is undefined when every one is.",
    },
    MetricDef {
        key: "failure_concentration",
        label: "share of failures on the 10% of nodes with most",
        unit: "fraction",
        better: Better::Higher,
        definition: "The share of the run's pod failures (as counted in failures) on the ⌈10%⌉ of the run's nodes \
                     with the most failures (at least one node). Undefined without failures. The run's nodes: its \
                     Node records; each failure counts on the node its event names; k = max(1, ⌈0.1 × nodes⌉), and \
                     the share is the failures of the k nodes with the most failures divided by failures.",
    },
    MetricDef {
        key: "goodput_pod_hours",
        label: "running pod-hours of pods that ended well",
        unit: "pod-h",
        better: Better::Higher,
        definition: "The running pod-hours (as running_pod_hours) of the pods whose life did not end in a failure, \
                     eviction, OOM kill, preemption or node loss (they succeeded, were deleted by their workload, or \
                     were still running at the end). A pod incarnation's life ends at its first PodSucceeded, \
                     PodFailed, PodEvicted or PodDeleted, or at a NodeLost of the node it was last bound to; it counts \
                     when that is a PodSucceeded or a PodDeleted with cause churn or scenario, or, with no such end \
                     before the End record, when its container is running then (started and not stopped, as \
                     running_pod_hours counts it).",
    },
    MetricDef {
        key: "pareto_hv",
        label: "Pareto hypervolume against the reference arm",
        unit: "volume",
        better: Better::Higher,
        definition: "The hypervolume dominated by the run's point (cost_usd, failure_rate, restarts), each divided by \
                     the mean over seeds of the reference arm (default) on the same scenario and size, against the \
                     fixed reference point (2, 2, 2): Π max(0, 2 − xᵢ/refᵢ). A component whose reference mean is 0 \
                     counts as xᵢ/refᵢ = 1 if xᵢ is 0, else 2. Undefined when the folder has no reference arm. The \
                     reference means are over the default arm's runs in which each metric is defined, in the \
                     summary of the scenario's run folders (a run alone cannot define it); undefined too where the \
                     run's or the reference's value of a component is.",
    },
    MetricDef {
        key: "decision_time_p50_ms",
        label: "scheduling decision wall-clock time, p50",
        unit: "ms",
        better: Better::Lower,
        definition: "Not from the records: the real wall-clock time of each scheduling decision of the arm, as the \
                     harness measured it on the machine that ran it, from decision_times.json beside the run's \
                     records (an HDR histogram of times in ns, 3 significant digits). Its 50th percentile by nearest \
                     rank, as the upper bound of the histogram bucket holding it, in milliseconds. Depends on the \
                     machine and its load. Undefined when the file is absent or holds no decision.",
    },
    MetricDef {
        key: "decision_time_p99_ms",
        label: "scheduling decision wall-clock time, p99",
        unit: "ms",
        better: Better::Lower,
        definition: "As decision_time_p50_ms, the 99th percentile.",
    },
    MetricDef {
        key: "decision_time_mean_ms",
        label: "scheduling decision wall-clock time, mean",
        unit: "ms",
        better: Better::Lower,
        definition: "As decision_time_p50_ms, the histogram's mean (each decision at its bucket's midpoint, within \
                     0.1% of the exact mean), in milliseconds.",
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
    MetricDef {
        key: "mem_failure_partial_pearson",
        label: "memory request vs failures within templates, partial r",
        unit: "r",
        better: Better::Neither,
        definition: "The pods of mem_failure_pearson, each less its template's means (template: PodCreated.slot.workload; \
                     means over that template's pods in the sample): Pearson's r between the residual memory request \
                     and the residual failure count. This is the partial correlation controlling for the template, \
                     so a pooled correlation that only comes from templates that differ in both memory and \
                     failures vanishes here. Undefined for fewer than 3 pods, fewer than 2 residual degrees of \
                     freedom (pods minus templates), or when requests or failures are constant within every \
                     template. Interval as mem_failure_pearson's, the template means recomputed in every resample.",
    },
    MetricDef {
        key: "mem_failure_template_pearson",
        label: "memory request vs failures in one template, Pearson r",
        unit: "r",
        better: Better::Neither,
        definition: "As mem_failure_pearson, over the pods of one template (PodCreated.slot.workload) only, for each \
                     template with a pod bound at least once; templates are named by their Workload records (\"workload \
                     N\" without one). Reported per run and template, not averaged over seeds.",
    },
    MetricDef {
        key: "mem_failure_template_spearman",
        label: "memory request vs failures in one template, Spearman rho",
        unit: "rho",
        better: Better::Neither,
        definition: "As mem_failure_spearman, over the pods of one template, as mem_failure_template_pearson.",
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

/// The book's metrics chapter, `docs/src/metrics.md`, rendered from these
/// definitions so that the book cannot say anything else; a test checks the
/// committed file against it.
pub fn metrics_page() -> String {
    let mut out = String::from(
        "# Metrics\n\n\
         <!-- Generated from results::definitions; edit the definitions, not this file, and regenerate it with \
         `SCHEDLAB_BLESS=1 cargo test -p results --test book`. -->\n\n\
         ## Across seeds\n\n",
    );
    out.push_str(ACROSS_SEEDS);
    out.push_str("\n\n## Metrics of a run\n\n");
    push_definitions(&mut out, METRICS);
    out.push_str("\n## Correlations of a run\n\n");
    push_definitions(&mut out, CORRELATIONS);
    out
}

fn push_definitions(out: &mut String, defs: &[MetricDef]) {
    for d in defs {
        let direction = match d.better {
            Better::Lower => ", lower is better",
            Better::Higher => ", higher is better",
            Better::Neither => "",
        };
        out.push_str(&format!(
            "- **`{}`** ({}{direction}): {}\n",
            d.key, d.unit, d.definition
        ));
    }
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
