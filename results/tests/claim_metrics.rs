//! The per-run metrics the pre-registration added for the claims
//! (evaluations/PREREGISTRATION.md, "New metric definitions"), each on a
//! hand-written record stream whose value is worked out by hand, and
//! `pareto_hv`, which the summary computes against the reference arm.

mod common;

use common::*;
use results::metrics::RunMetrics;
use results::summary::{RunResult, Summary};
use schedlab_core::record::ExitReason::{Completed, Error, OOMKilled};
use schedlab_core::record::{DeleteCause, EventKind};
use schedlab_core::{NodeCondition, PodId};

fn close(actual: Option<f64>, expected: f64) {
    let a = actual.unwrap_or_else(|| panic!("expected {expected}, got None"));
    assert!((a - expected).abs() < 1e-9, "expected {expected}, got {a}");
}

fn metrics(records: &[schedlab_core::Record]) -> RunMetrics {
    metrics_of(records).expect("consistent records")
}

fn preempted(t: u64, pod: u64) -> schedlab_core::Record {
    ev(
        t,
        EventKind::PodDeleted {
            pod: PodId(pod),
            node: None,
            cause: DeleteCause::Preempted,
        },
    )
}

#[test]
fn completions_pending_time_and_pods_never_bound() {
    // a half-hour run: pods 1 and 2 succeed, 3 is bound and runs on, 4 is
    // deleted pending after 20 s, 5 waits to the end
    let m = metrics(&[
        node(0, 4000, 8000, 1.0),
        created(0, 1, 100, 100),
        created(0, 2, 100, 100),
        created(10_000, 3, 100, 100),
        created(10_000, 4, 100, 100),
        created(1_700_000, 5, 100, 100),
        bound(2_000, 1, 0),
        bound(4_000, 2, 0),
        bound(16_000, 3, 0),
        deleted(30_000, 4),
        exited(60_000, 1, 0, Completed),
        succeeded(60_000, 1, 0),
        exited(70_000, 2, 0, Completed),
        succeeded(70_000, 2, 0),
        end(1_800_000),
    ]);
    // 2 pods succeeded in 0.5 h
    close(m.value("completions_per_hour"), 4.0);
    // waits: 2, 4, 6, 20 (deleted pending) and 100 s (to the end): mean 26.4 s
    close(m.value("pending_time_mean_s"), 132.0 / 5.0);
    assert_eq!(m.value("pods_never_bound"), Some(2.0));
    assert_eq!(m.value("pods_pending_end"), Some(1.0), "pod 5; pod 4 was deleted");

    let empty = metrics(&[node(0, 1000, 1000, 1.0), end(0)]);
    assert_eq!(empty.value("completions_per_hour"), None, "a run of zero length");
    assert_eq!(empty.value("pending_time_mean_s"), None, "no pod created");
    assert_eq!(empty.value("pods_never_bound"), Some(0.0));
}

#[test]
fn fault_headroom_is_the_free_memory_of_ready_nodes_in_the_fault_window() {
    use NodeCondition::{Degraded, NotReady, Ready};
    let base = vec![
        node(0, 1000, 1000, 1.0),
        node(1, 1000, 3000, 1.0),
        // before any fault: outside the window
        node_sample(0, 0, (0, 900), (0, 0), 1, Ready),
        node_sample(0, 1, (0, 900), (0, 0), 1, Ready),
        cluster_sample(0, 2, 2.0),
    ];
    let mut r = base.clone();
    r.extend([
        node_degraded(5_000, 1),
        // 10 s: both Ready (Degraded is Ready): 1 − (500 + 1500)/4000 = 0.5
        node_sample(10_000, 0, (0, 500), (0, 0), 1, Ready),
        node_sample(10_000, 1, (0, 1500), (0, 0), 1, Degraded),
        cluster_sample(10_000, 2, 2.0),
        node_failed(15_000, 0),
        // 20 s: node 0 NotReady is left out: 1 − 2700/3000 = 0.1
        node_sample(20_000, 0, (0, 1000), (0, 0), 1, NotReady),
        node_sample(20_000, 1, (0, 2700), (0, 0), 1, Degraded),
        cluster_sample(20_000, 2, 2.0),
        node_recovered(30_000, 0),
        node_recovered(30_000, 1),
        // 40 s: after the window
        node_sample(40_000, 0, (0, 0), (0, 0), 0, Ready),
        node_sample(40_000, 1, (0, 0), (0, 0), 0, Ready),
        cluster_sample(40_000, 0, 0.0),
        end(60_000),
    ]);
    let m = metrics(&r);
    assert_eq!(m.fault_window.map(|(a, b)| (a.0, b.0)), Some((5_000, 30_000)));
    close(m.value("fault_headroom_mean"), (0.5 + 0.1) / 2.0);

    // without faults: undefined
    let mut calm = base;
    calm.push(end(60_000));
    assert_eq!(metrics(&calm).value("fault_headroom_mean"), None);
}

#[test]
fn failure_concentration_on_the_top_tenth_of_nodes() {
    // 12 nodes: the top ⌈1.2⌉ = 2 nodes. Failures: node 0 three (two
    // exits and an eviction), node 1 one, node 2 one, node 3 one (a PodFailed)
    let mut r: Vec<_> = (0..12).map(|n| node(n, 4000, 8000, 1.0)).collect();
    for pod in 0..4 {
        r.push(created(0, pod, 100, 100));
        r.push(bound(10, pod, pod as u32));
        r.push(started(20, pod, pod as u32, 0));
    }
    r.extend([
        exited(1_000, 0, 0, Error),
        started(2_000, 0, 0, 1),
        exited(3_000, 0, 0, OOMKilled),
        started(4_000, 0, 0, 2),
        evicted(5_000, 0, 0),
        exited(1_000, 1, 1, Error),
        exited(1_000, 2, 2, Completed),
        exited(1_500, 2, 2, Error),
        exited(1_000, 3, 3, Error),
        failed(1_000, 3, 3),
        end(10_000),
    ]);
    let m = metrics(&r);
    // node 3's exit and PodFailed count twice, as in failures: 3, 1, 1, 2 of 7
    assert_eq!(m.value("failures"), Some(7.0));
    close(m.value("failure_concentration"), 5.0 / 7.0);
    let quiet = metrics(&[node(0, 1000, 1000, 1.0), end(10)]);
    assert_eq!(quiet.value("failure_concentration"), None);
}

#[test]
fn goodput_counts_the_hours_of_pods_that_ended_well() {
    let mut r: Vec<_> = (0..3).map(|n| node(n, 4000, 8000, 1.0)).collect();
    for pod in 1..=7 {
        r.push(created(0, pod, 100, 100));
    }
    r.extend([
        // 1: runs 10 s and succeeds: good
        bound(0, 1, 0),
        started(0, 1, 0, 0),
        exited(10_000, 1, 0, Completed),
        succeeded(10_000, 1, 0),
        // 2: crashes after 5 s, restarts, runs 15 s more and fails for good: lost
        bound(0, 2, 0),
        started(0, 2, 0, 0),
        exited(5_000, 2, 0, Error),
        started(6_000, 2, 0, 1),
        exited(21_000, 2, 0, Error),
        failed(21_000, 2, 0),
        // 3: OOM-killed once after 2 s, restarts and runs to the end (58 s): good
        bound(0, 3, 1),
        started(0, 3, 1, 0),
        exited(2_000, 3, 1, OOMKilled),
        started(2_000, 3, 1, 1),
        // 4: deleted by its workload after 30 s: good
        bound(0, 4, 1),
        started(0, 4, 1, 0),
        deleted(30_000, 4),
        // 5: preempted after 7 s: lost
        bound(0, 5, 1),
        started(0, 5, 1, 0),
        preempted(7_000, 5),
        // 6: its node is lost after 12 s: lost, and the eviction that follows
        // changes nothing
        bound(0, 6, 2),
        started(0, 6, 2, 0),
        node_lost(12_000, 2),
        evicted(12_000, 6, 2),
        // 7: OOM-killed after 9 s and not running at the end: not good
        bound(0, 7, 0),
        started(0, 7, 0, 0),
        exited(9_000, 7, 0, OOMKilled),
        end(60_000),
    ]);
    let m = metrics(&r);
    let all = 10.0 + 20.0 + 60.0 + 30.0 + 7.0 + 12.0 + 9.0;
    close(m.value("running_pod_hours"), all / 3600.0);
    close(m.value("goodput_pod_hours"), (10.0 + 60.0 + 30.0) / 3600.0);
    let idle = metrics(&[node(0, 1000, 1000, 1.0), end(10)]);
    assert_eq!(idle.value("goodput_pod_hours"), Some(0.0));
}

/// A run whose cost is `cost` USD (one $1/h node in use for `cost` hours),
/// with `failures` failed pods of 4 bound and `restarts` restarts.
fn objective_run(cost: f64, failed_pods: u64, restarts: u32) -> RunMetrics {
    let end_ms = (cost * 3_600_000.0) as u64;
    let mut r = vec![node(0, 4000, 8000, 1.0), cluster_sample(0, 1, 1.0)];
    for pod in 0..4 {
        r.push(created(0, pod, 100, 100));
        r.push(bound(0, pod, 0));
        r.push(started(0, pod, 0, 0));
    }
    for pod in 0..failed_pods {
        r.push(exited(1_000, pod, 0, Error));
    }
    for i in 0..restarts {
        r.push(started(2_000 + u64::from(i), 3, 0, i + 1));
    }
    r.push(end(end_ms));
    metrics(&r)
}

fn result(arm: &str, seed: u64, metrics: RunMetrics) -> RunResult {
    RunResult {
        arm: arm.to_string(),
        seed,
        training_run: None,
        metrics,
        correlations: None,
    }
}

#[test]
fn pareto_hv_scales_each_run_by_the_reference_arms_means() {
    // default: cost 2 and 4 (mean 3), failure rate 0.5, 4 restarts
    let runs = vec![
        result("default", 1, objective_run(2.0, 2, 4)),
        result("default", 2, objective_run(4.0, 2, 4)),
        // at the reference means: 1; at half of each: 1.5³; beyond 2× in cost: 0
        result("agmarl", 1, objective_run(3.0, 2, 4)),
        result("agmarl", 2, objective_run(1.5, 1, 2)),
        result("agmarl", 3, objective_run(7.0, 1, 2)),
    ];
    let s = Summary::new("front", runs, 1);
    let values = |arm: &str| -> Vec<Option<f64>> {
        s.arm(arm)
            .unwrap()
            .metric("pareto_hv")
            .unwrap()
            .values
            .iter()
            .map(|(_, v)| *v)
            .collect()
    };
    let agmarl = values("agmarl");
    close(agmarl[0], 1.0);
    close(agmarl[1], 1.5f64.powi(3));
    close(agmarl[2], 0.0);
    // default's own runs: cost 2/3 and 4/3 of its mean
    let default = values("default");
    close(default[0], 4.0 / 3.0);
    close(default[1], 2.0 / 3.0);

    // no reference arm in the folder: undefined
    let alone = Summary::new("front", vec![result("agmarl", 1, objective_run(3.0, 2, 4))], 1);
    let v = &alone.arm("agmarl").unwrap().metric("pareto_hv").unwrap().values;
    assert_eq!(v, &[(1, None)]);
}
