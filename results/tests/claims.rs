//! The metrics behind the paper's claims, on hand-written record streams
//! whose every value is worked out by hand: priority strata with censored
//! times to bind, placements onto degraded nodes, OOM cascades and failure
//! bursts, cost volatility, goodput, and the memory/failure correlation
//! within templates.

mod common;

use common::*;
use results::decision_time::{DECISION_TIMES_FILE, DecisionTimes};
use results::metrics::{RunMetrics, from_file};
use results::stats::pearson;
use schedlab_core::record::ExitReason::{Completed, Error, OOMKilled};

fn close(actual: Option<f64>, expected: f64) {
    let a = actual.unwrap_or_else(|| panic!("expected {expected}, got None"));
    assert!((a - expected).abs() < 1e-9, "expected {expected}, got {a}");
}

fn metrics(records: &[schedlab_core::Record]) -> RunMetrics {
    metrics_of(records).expect("consistent records")
}

/// Critical pods 1–3 (priority 100), other pods 4, 5, 7 (priority 0). Node 1
/// is Degraded from 1.5 s to 4 s.
fn strata_run() -> Vec<schedlab_core::Record> {
    vec![
        node(0, 4000, 8000, 1.0),
        node(1, 4000, 8000, 1.0),
        created_with(0, 1, 0, 100, 1000),
        created_with(0, 2, 0, 100, 1000),
        created_with(0, 3, 0, 100, 1000),
        created_with(0, 4, 1, 0, 1000),
        created_with(0, 5, 1, 0, 1000),
        created_with(0, 7, 1, 0, 1000),
        bound(500, 4, 0),
        bound(1000, 1, 0),
        node_degraded(1500, 1),
        bound(2000, 5, 1),
        bound(3000, 2, 1),
        node_recovered(4000, 1),
        bound(4500, 7, 1),
        started(5000, 1, 0, 0),
        exited(6000, 1, 0, Error),
        started(7000, 1, 0, 1),
        exited(8000, 1, 0, Error),
        evicted(9000, 4, 0),
        // pod 3 is never bound: censored at the End
        end(60_000),
    ]
}

#[test]
fn critical_and_rest_strata_with_censored_times_to_bind() {
    let m = metrics(&strata_run());
    assert_eq!(m.strata.critical_priority, Some(100));
    assert_eq!(m.value("critical_pods"), Some(3.0));
    // critical: bound after 1 s and 3 s, pod 3 censored at 60 s.
    // S(1 s) = 2/3, S(3 s) = 2/3 · 1/2 = 1/3: p50 = 3 s; S never falls to
    // 0.01, so p99 is undefined (dropping pod 3 would have claimed 3 s)
    close(m.value("critical_bind_p50_s"), 3.0);
    assert_eq!(m.value("critical_bind_p99_s"), None);
    // rest: 0.5 s, 2 s, 4.5 s, nothing censored: nearest rank
    close(m.value("rest_bind_p50_s"), 2.0);
    close(m.value("rest_bind_p99_s"), 4.5);
    // pod 1 failed twice, two critical pods bound; pod 4 evicted once, three
    close(m.value("critical_failures_per_pod"), 1.0);
    close(m.value("rest_failures_per_pod"), 1.0 / 3.0);
    // pod 2 (critical) and pod 5 (rest) were bound onto node 1 while it was
    // Degraded; pod 7 after it recovered
    assert_eq!(m.value("critical_degraded_binds"), Some(1.0));
    close(m.value("critical_degraded_bind_share"), 0.5);
    assert_eq!(m.value("rest_degraded_binds"), Some(1.0));
    close(m.value("rest_degraded_bind_share"), 1.0 / 3.0);
}

#[test]
fn a_pod_deleted_pending_is_censored_at_its_deletion() {
    let mut records = strata_run();
    records.pop();
    // rest pod 8, deleted unbound after 3 s: S(0.5) = 3/4, S(2) = 2/4 ≤ 0.5
    records.push(created_with(10_000, 8, 1, 0, 1000));
    records.push(deleted(13_000, 8));
    records.push(end(60_000));
    let m = metrics(&records);
    close(m.value("rest_bind_p50_s"), 2.0);
    // after 3 s pod 8 leaves the risk set: S(4.5) = 2/4 · 1/1... one of
    // one at risk bound, S = 0: p99 = 4.5 s
    close(m.value("rest_bind_p99_s"), 4.5);
    assert_eq!(m.pods_pending_end, 1, "pod 3; pod 8 was deleted");
}

#[test]
fn no_critical_stratum_when_every_priority_is_equal_or_none_is_positive() {
    for priorities in [[50, 50, 50], [0, -5, 0]] {
        let mut records = vec![node(0, 4000, 8000, 1.0)];
        for (i, &p) in priorities.iter().enumerate() {
            records.push(created_with(0, i as u64, 0, p, 1000));
            records.push(bound(1000 * (i as u64 + 1), i as u64, 0));
        }
        records.push(end(10_000));
        let m = metrics(&records);
        assert_eq!(m.strata.critical_priority, None, "{priorities:?}");
        for key in ["critical_pods", "critical_bind_p50_s", "critical_degraded_binds"] {
            assert_eq!(m.value(key), None, "{key} with {priorities:?}");
        }
        // the rest is every pod: 1 s, 2 s, 3 s
        assert_eq!(m.strata.rest.pods, 3);
        close(m.value("rest_bind_p50_s"), 2.0);
        close(m.value("rest_bind_p99_s"), 3.0);
    }
}

#[test]
fn a_failed_or_lost_node_is_not_degraded_and_a_replaced_one_is_healthy() {
    let m = metrics(&[
        node(0, 4000, 8000, 1.0),
        created_with(0, 1, 0, 0, 1000),
        created_with(0, 2, 0, 0, 1000),
        created_with(0, 3, 0, 0, 1000),
        node_degraded(100, 0),
        bound(200, 1, 0),
        node_lost(300, 0),
        node_replaced(400, 0),
        bound(500, 2, 0),
        node_degraded(600, 0),
        node_failed(700, 0),
        bound(800, 3, 0),
        end(1000),
    ]);
    assert_eq!(m.value("rest_degraded_binds"), Some(1.0));
}

#[test]
fn oom_events_group_victims_by_node_and_time_and_bursts_chain_within_60_s() {
    let mut r = vec![node(0, 4000, 8000, 1.0), node(1, 4000, 8000, 1.0)];
    for pod in 1..=7 {
        r.push(created(0, pod, 100, 100));
    }
    for pod in 1..=5 {
        r.push(bound(10, pod, 0));
    }
    for pod in 6..=7 {
        r.push(bound(10, pod, 1));
    }
    // node 0 at 10 s: three victims; node 1 at 10 s: one; node 0 at 20 s:
    // two; a kill at a container's limit is not a pressure event
    r.extend([
        oom_pressure(10_000, 1, 0),
        oom_pressure(10_000, 2, 0),
        oom_pressure(10_000, 3, 0),
        oom_pressure(10_000, 6, 1),
        oom_pressure(20_000, 4, 0),
        oom_pressure(20_000, 5, 0),
        exited(50_000, 7, 1, OOMKilled),
        // node 0 again 70 s after its last failure: a new chain, which the
        // failure exactly 60 s later extends
        exited(90_000, 1, 0, Error),
        exited(150_000, 2, 0, Error),
        exited(150_000, 3, 0, Completed),
        end(200_000),
    ]);
    let m = metrics(&r);
    assert_eq!(m.value("oom_pressure_events"), Some(3.0));
    close(m.value("oom_victims_per_event_mean"), 2.0);
    assert_eq!(m.value("oom_victims_per_event_max"), Some(3.0));
    // node 0: {10, 10, 10, 20, 20 s} and {90, 150 s}; node 1: 10 s and
    // 50 s, 40 s apart: a third burst of 2
    assert_eq!(m.value("failure_bursts"), Some(3.0));
    assert_eq!(m.value("failure_burst_max"), Some(5.0));

    // no pressure OOM, no burst: the mean is undefined, the maxima 0
    let quiet = metrics(&[node(0, 1000, 1000, 1.0), end(10)]);
    assert_eq!(quiet.value("oom_victims_per_event_mean"), None);
    assert_eq!(quiet.value("oom_victims_per_event_max"), Some(0.0));
    assert_eq!(quiet.value("failure_bursts"), Some(0.0));
    assert_eq!(quiet.value("failure_burst_max"), Some(0.0));
}

fn cost_series() -> Vec<schedlab_core::Record> {
    vec![
        node(0, 1000, 1000, 1.0),
        node(1, 1000, 1000, 1.0),
        cluster_sample(0, 1, 1.0),
        cluster_sample(10_000, 1, 3.0),
        cluster_sample(20_000, 1, 2.0),
        cluster_sample(30_000, 1, 6.0),
    ]
}

#[test]
fn cost_volatility_over_the_run_and_the_fault_window() {
    let mut r = cost_series();
    r.push(end(60_000));
    let m = metrics(&r);
    // 1, 3, 2, 6: mean 3, squared deviations 4 + 0 + 1 + 9 = 14
    close(m.value("cost_rate_cv"), (14.0f64 / 3.0).sqrt() / 3.0);
    close(m.value("cost_rate_range_usd_h"), 5.0);
    close(m.value("cost_rate_step_max_usd_h"), 4.0);
    for key in [
        "fault_cost_rate_cv",
        "fault_cost_rate_range_usd_h",
        "fault_cost_rate_step_max_usd_h",
    ] {
        assert_eq!(m.value(key), None, "{key} without faults");
    }

    // degraded from 10 s to 20 s: the samples 3 and 2, bounds included
    let mut r = cost_series();
    r.insert(3, node_degraded(10_000, 0));
    r.insert(5, node_recovered(20_000, 0));
    r.push(end(60_000));
    let m = metrics(&r);
    assert_eq!(m.fault_window.map(|(a, b)| (a.0, b.0)), Some((10_000, 20_000)));
    close(m.value("fault_cost_rate_cv"), 0.5f64.sqrt() / 2.5);
    close(m.value("fault_cost_rate_range_usd_h"), 1.0);
    close(m.value("fault_cost_rate_step_max_usd_h"), 1.0);

    // a node failed at 15 s that never recovers: the window runs to the End
    let mut r = cost_series();
    r.insert(4, node_failed(15_000, 1));
    r.push(end(60_000));
    let m = metrics(&r);
    assert_eq!(m.fault_window.map(|(a, b)| (a.0, b.0)), Some((15_000, 60_000)));
    close(m.value("fault_cost_rate_cv"), 8f64.sqrt() / 4.0);
    close(m.value("fault_cost_rate_range_usd_h"), 4.0);
    close(m.value("fault_cost_rate_step_max_usd_h"), 4.0);
}

#[test]
fn goodput_stops_containers_with_their_node() {
    let m = metrics(&[
        node(0, 4000, 8000, 1.0),
        node(1, 4000, 8000, 1.0),
        node(2, 4000, 8000, 1.0),
        created(0, 1, 100, 100),
        created(0, 2, 100, 100),
        created(0, 3, 100, 100),
        bound(0, 1, 0),
        bound(0, 2, 1),
        bound(0, 3, 2),
        started(0, 1, 0, 0),
        started(0, 3, 2, 0),
        started(5_000, 2, 1, 0),
        exited(10_000, 1, 0, Error),
        started(12_000, 1, 0, 1),
        // node 1 fails: pod 2's container stops with no ContainerExited,
        // and starts again when the node recovers
        node_failed(20_000, 1),
        node_recovered(30_000, 1),
        started(30_000, 2, 1, 1),
        // node 2 is lost: pod 3 stops, and its eviction stops nothing more
        node_lost(30_000, 2),
        evicted(30_000, 3, 2),
        deleted(40_000, 2),
        end(60_000),
    ]);
    // pod 1: 10 s + 48 s; pod 2: 15 s + 10 s; pod 3: 30 s
    let hours = (10.0 + 48.0 + 15.0 + 10.0 + 30.0) / 3600.0;
    close(m.value("running_pod_hours"), hours);
    // one Error, one eviction
    close(m.value("failures_per_running_pod_hour"), 2.0 / hours);
    let idle = metrics(&[node(0, 1000, 1000, 1.0), end(10)]);
    assert_eq!(idle.value("running_pod_hours"), Some(0.0));
    assert_eq!(idle.value("failures_per_running_pod_hour"), None);
}

/// Templates 0 ("web") and 1 (no Workload record): within each, memory and
/// failures are uncorrelated; template 1 asks for more memory and fails more.
fn mixed_templates() -> Vec<schedlab_core::Record> {
    let mut r = vec![node(0, 100_000, 100_000, 1.0), workload(0, "web")];
    let pods = [
        (1, 0, 1000, 0),
        (2, 0, 1100, 0),
        (3, 0, 1000, 1),
        (4, 0, 1100, 1),
        (5, 1, 5000, 4),
        (6, 1, 5100, 4),
        (7, 1, 5000, 5),
        (8, 1, 5100, 5),
    ];
    for &(pod, w, mem, _) in &pods {
        r.push(created_with(0, pod, w, 0, mem));
        r.push(bound(10, pod, 0));
    }
    for &(pod, _, _, failures) in &pods {
        for i in 0..failures {
            r.push(exited(1000 + 1000 * i, pod, 0, Error));
        }
    }
    r.push(end(60_000));
    r
}

#[test]
fn a_correlation_from_the_template_mix_vanishes_within_templates() {
    let m = metrics(&mixed_templates());
    // pooled: means 3050 and 2.5; Sxy = 2.5·8000 + 1.5·8000 = 32000,
    // Sxx = 4·(2050² + 1950²) = 32,020,000, Syy = 4·(2.5² + 1.5²) = 34
    let pooled = 32_000.0 / (32_020_000.0f64 * 34.0).sqrt();
    close(m.value("mem_failure_pearson"), pooled);
    assert!(pooled > 0.96);
    // within each template the residuals are ±50 and ±0.5 in a crossed
    // pattern: Sxy = 0
    close(m.value("mem_failure_partial_pearson"), 0.0);
    let mut seeds = 0;
    let templates = m.template_correlations(200, |w| {
        seeds += 1;
        schedlab_core::rng::stream(7, &[u64::from(w.0)])
    });
    assert_eq!(seeds, 2);
    let names: Vec<&str> = templates.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["web", "workload 1"]);
    for t in &templates {
        assert_eq!(t.estimate.n, 4);
        close(t.estimate.pearson.map(|e| e.value), 0.0);
        close(t.estimate.spearman.map(|e| e.value), 0.0);
    }
    let partial = m.mem_failure_partial_correlation(200, &mut schedlab_core::rng::stream(7, &[9]));
    assert_eq!((partial.n, partial.groups), (8, 2));
    close(partial.pearson.map(|e| e.value), 0.0);
    // the same pods in one template: the partial correlation is the pooled one
    let x = [1000.0, 1100.0, 1000.0, 1100.0, 5000.0, 5100.0, 5000.0, 5100.0];
    let y = [0.0, 0.0, 1.0, 1.0, 4.0, 4.0, 5.0, 5.0];
    close(pearson(&x, &y), pooled);
}

#[test]
fn a_second_workload_record_is_inconsistent() {
    let err = metrics_of(&[workload(0, "a"), workload(0, "b"), end(1)]).unwrap_err();
    assert!(err.to_string().contains("second Workload record"), "{err}");
}

#[test]
fn decision_times_beside_the_records_are_picked_up() {
    let tmp = tempfile::tempdir().unwrap();
    let records = tmp.path().join("records.jsonl");
    let text: String = mixed_templates()
        .iter()
        .map(|r| serde_json::to_string(r).unwrap() + "\n")
        .collect();
    std::fs::write(&records, text).unwrap();
    let m = from_file(&records).unwrap();
    for key in ["decision_time_p50_ms", "decision_time_p99_ms", "decision_time_mean_ms"] {
        assert_eq!(m.value(key), None, "{key} without the file");
    }

    let mut d = DecisionTimes::new();
    for _ in 0..99 {
        d.record(1_000_000);
    }
    d.record(40_000_000);
    d.write(&tmp.path().join(DECISION_TIMES_FILE)).unwrap();
    let m = from_file(&records).unwrap();
    // buckets at 3 significant digits: the upper bounds are within 0.1%
    let p50 = m.value("decision_time_p50_ms").unwrap();
    assert!((1.0..=1.001).contains(&p50), "{p50}");
    let p99 = m.value("decision_time_p99_ms").unwrap();
    assert!((1.0..=1.001).contains(&p99), "{p99}");
    let mean = m.value("decision_time_mean_ms").unwrap();
    assert!((mean - 1.39).abs() < 0.39 * 0.002, "{mean}");
    assert!(!m.decision_times.as_ref().unwrap().charged);

    // a damaged file fails the run, naming the file
    std::fs::write(tmp.path().join(DECISION_TIMES_FILE), "{\"format\": 1}").unwrap();
    let err = from_file(&records).unwrap_err().to_string();
    assert!(err.contains(DECISION_TIMES_FILE), "{err}");
}
