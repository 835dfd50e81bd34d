//! The built-in scenarios load, describe themselves and stay small by default.

use schedlab_core::Action;
use workloads::{builtin, builtins, load};

#[test]
fn every_builtin_loads_under_its_own_name() {
    let names: Vec<&str> = builtins().iter().map(|b| b.name).collect();
    assert_eq!(
        names,
        [
            "pressure",
            "churn",
            "trace",
            "mixed",
            "autoscaled",
            "pressure-v1",
            "churn-v1"
        ]
    );
    for b in builtins() {
        let s = load(b.name, &[]).unwrap();
        assert_eq!(s.name(), b.name);
        assert_eq!(s.origin(), format!("builtin:{}", b.name));
        assert!(s.description().len() > 200, "{}: describe what it models", b.name);
        assert!(!b.description.is_empty() && !b.description.contains('\n'));
        assert_eq!(builtin(&format!("builtin:{}", b.name)), Some(b));
        assert!(s.params().contains_key("nodes"), "{} scales with --set nodes=N", b.name);
    }
}

#[test]
fn defaults_are_small_enough_for_a_quick_run() {
    for b in builtins() {
        let t = load(b.name, &[]).unwrap().expand(1);
        let pods = t
            .actions
            .iter()
            .filter(|a| matches!(a.action, Action::CreatePod { .. }))
            .count();
        assert!(
            (40..=60).contains(&t.nodes.len()),
            "{}: {} nodes",
            b.name,
            t.nodes.len()
        );
        assert!((300..=2000).contains(&pods), "{}: {pods} pods", b.name);
        let minutes = t.end.as_secs_f64() / 60.0;
        assert!((30.0..=60.0).contains(&minutes), "{}: {minutes} minutes", b.name);
    }
}

#[test]
fn pressure_mixes_prices_and_outgrows_the_cluster() {
    let t = load("pressure", &[]).unwrap().expand(1);
    let prices: std::collections::BTreeSet<String> =
        t.nodes.iter().map(|n| format!("{:?}", n.pool.hourly_price)).collect();
    assert_eq!(prices.len(), 3);
    let allocatable: u64 = t.nodes.iter().map(|n| n.allocatable.cpu_milli).sum();
    let requested: u64 = t
        .actions
        .iter()
        .filter_map(|a| match a.action {
            Action::CreatePod { slot } => t.workload(slot.workload).map(|w| w.spec.requests.cpu_milli),
            _ => None,
        })
        .sum();
    assert!(requested > allocatable, "the waves must push past capacity");
    // each wave asks for more and uses more beyond its request than the last
    let waves: Vec<_> = t.workloads.iter().filter(|w| w.name.starts_with("wave-")).collect();
    assert_eq!(waves.len(), 4);
    for pair in waves.windows(2) {
        let (a, b) = (&pair[0].spec, &pair[1].spec);
        assert!(b.requests.memory_bytes > a.requests.memory_bytes);
        let over = |s: &schedlab_core::PodSpec| s.behaviour.memory_usage.mean() / s.requests.memory_bytes as f64;
        assert!(over(b) > over(a));
        assert!(over(a) > 1.0);
    }
}

#[test]
fn churn_has_unstable_pods_churn_faults_and_critical_arrivals() {
    let t = load("churn", &[]).unwrap().expand(1);
    assert!(
        t.workloads
            .iter()
            .any(|w| w.spec.behaviour.unstable && w.spec.behaviour.crash_rate_per_hour >= 1.0)
    );
    let critical = t.workloads.iter().max_by_key(|w| w.spec.priority).unwrap();
    assert!(critical.spec.priority > 0);
    let has = |f: &dyn Fn(&Action) -> bool| t.actions.iter().any(|a| f(&a.action));
    assert!(has(&|a| matches!(a, Action::DeletePod { recreate: true, .. })));
    assert!(has(&|a| matches!(a, Action::FailNode { .. })));
    assert!(has(&|a| matches!(a, Action::DegradeNode { .. })));
    assert!(has(&|a| matches!(a, Action::RecoverNode { .. })));
    // the critical pods arrive while the churn is going on
    let first_churn = t
        .actions
        .iter()
        .find(|a| matches!(a.action, Action::DeletePod { recreate: true, .. }))
        .unwrap()
        .at;
    let first_critical = t
        .actions
        .iter()
        .find(|a| matches!(a.action, Action::CreatePod { slot } if slot.workload == critical.id))
        .unwrap()
        .at;
    assert!(first_critical > first_churn);
}

/// A kind or GKE cluster is made once for all seeds of a run, so a
/// scenario's nodes must not depend on the seed.
#[test]
fn nodes_do_not_depend_on_the_seed() {
    for b in builtins() {
        let s = load(b.name, &[]).unwrap();
        let first = s.expand(1).nodes;
        for seed in [2, 7, 999, 1_000_000] {
            assert!(s.expand(seed).nodes == first, "{}: seed {seed} has other nodes", b.name);
        }
    }
}

/// "claim/role" strings of a scenario's declaration.
fn declared(s: &workloads::Scenario) -> Vec<String> {
    s.claims().iter().map(|u| u.to_string()).collect()
}

#[test]
fn the_builtins_declare_the_claims_they_test() {
    let want: &[(&str, &[&str])] = &[
        ("pressure", &["packing/cascading-pressure", "pareto/stress"]),
        ("churn", &["restraint/churn-faults", "pareto/stress-faults"]),
        ("mixed", &["pareto/stress-faults"]),
        ("trace", &["pareto/stress"]),
        ("autoscaled", &["decoupling/varying-requests", "pareto/stress-faults"]),
        ("pressure-v1", &[]),
        ("churn-v1", &[]),
    ];
    assert_eq!(want.len(), builtins().len(), "every built-in is listed here");
    for (name, claims) in want {
        assert_eq!(declared(&load(name, &[]).unwrap()), *claims, "{name}");
    }
}

#[test]
fn the_heldout_scenarios_declare_the_claims_they_test() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../evaluations/heldout");
    let want: &[(&str, &[&str])] = &[
        ("diurnal", &["pareto/stress"]),
        ("heavy-tail", &["pareto/stress"]),
        ("spot-storm", &["restraint/churn-faults", "pareto/stress-faults"]),
        ("zone-outage", &["restraint/churn-faults", "pareto/stress-faults"]),
    ];
    let files = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "yaml"))
        .count();
    assert_eq!(files, want.len(), "every held-out scenario is listed here");
    for (name, claims) in want {
        let path = dir.join(format!("{name}.yaml"));
        let s = load(path.to_str().unwrap(), &[]).unwrap();
        assert_eq!(declared(&s), *claims, "{name}");
    }
}

#[test]
fn autoscaled_draws_memory_requests_per_pod_and_usage_follows_them() {
    let s = load("autoscaled", &[]).unwrap();
    let t = s.expand(1);
    for name in ["service", "cache"] {
        let w = t.workloads.iter().find(|w| w.name == name).unwrap();
        let slots = t
            .actions
            .iter()
            .filter(|a| matches!(a.action, Action::CreatePod { slot } if slot.workload == w.id))
            .count();
        assert_eq!(w.slot_specs.len(), slots, "{name}: one spec per slot");
        let mut memory: Vec<u64> = w.slot_specs.iter().map(|p| p.requests.memory_bytes).collect();
        memory.sort_unstable();
        let median = memory[memory.len() / 2] as f64 / w.spec.requests.memory_bytes as f64;
        assert!((0.85..1.15).contains(&median), "{name}: median/typical {median}");
        // a log-normal spread of about 0.4: the 10th and 90th percentiles
        // lie about a factor 1.7 from the median
        let spread = memory[memory.len() * 9 / 10] as f64 / memory[memory.len() / 10] as f64;
        assert!(spread > 2.0, "{name}: p90/p10 {spread}");
        for p in &w.slot_specs {
            let usage = p.behaviour.memory_usage.mean() / p.requests.memory_bytes as f64;
            assert!((0.85..1.0).contains(&usage), "{name}: usage/request {usage}");
            let limit = p.limits.unwrap().memory_bytes as f64 / p.requests.memory_bytes as f64;
            assert!((limit - 1.5).abs() < 0.001, "{name}: limit/request {limit}");
        }
    }
}
