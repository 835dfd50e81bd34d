//! The built-in scenarios load, describe themselves and stay small by default.

use schedlab_core::Action;
use workloads::{builtin, builtins, load};

#[test]
fn every_builtin_loads_under_its_own_name() {
    let names: Vec<&str> = builtins().iter().map(|b| b.name).collect();
    assert_eq!(
        names,
        ["pressure", "churn", "trace", "mixed", "pressure-v1", "churn-v1"]
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
