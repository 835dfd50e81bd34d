//! What expansion does with a scenario and a seed: reproducible, seed-driven
//! choices, actions in time order, faults and churn that follow the phases.

mod common;

use schedlab_core::{Action, Time, Timeline};
use std::collections::{BTreeMap, BTreeSet};
use workloads::{load, parse_str};

fn churn_at(nodes: u32) -> workloads::Scenario {
    load("churn", &[format!("nodes={nodes}")]).expect("churn loads")
}

/// The actions that involve a random choice.
fn random_choices(t: &Timeline) -> Vec<String> {
    t.actions
        .iter()
        .filter(|a| !matches!(a.action, Action::CreatePod { .. }))
        .map(|a| format!("{:?}", a))
        .collect()
}

#[test]
fn the_same_seed_gives_the_same_timeline() {
    for name in ["pressure", "churn"] {
        let a = load(name, &[]).unwrap();
        let b = load(name, &[]).unwrap();
        assert_eq!(a.expand(7), b.expand(7), "{name}");
        assert_eq!(a.expand(7), a.expand(7), "{name}");
    }
    let small = load(common::data("small.yaml").to_str().unwrap(), &[]).unwrap();
    assert_eq!(small.expand(3), small.expand(3));
}

#[test]
fn another_seed_makes_other_fault_and_churn_choices_on_the_same_workload() {
    let s = churn_at(40);
    let (one, two) = (s.expand(1), s.expand(2));
    assert_ne!(random_choices(&one), random_choices(&two));
    // which pods exist and when they are created does not depend on the seed
    let creates = |t: &Timeline| -> Vec<String> {
        t.actions
            .iter()
            .filter(|a| matches!(a.action, Action::CreatePod { .. }))
            .map(|a| format!("{a:?}"))
            .collect()
    };
    assert_eq!(creates(&one), creates(&two));
    assert_eq!(one.nodes, two.nodes);
    assert_eq!(one.workloads, two.workloads);
    // and the number of each kind of action stays the same, but for losses
    // at a rate, whose number is itself drawn
    let kinds = |t: &Timeline| -> BTreeMap<String, usize> {
        let mut m = BTreeMap::new();
        for a in t
            .actions
            .iter()
            .filter(|a| !matches!(a.action, Action::LoseNode { .. } | Action::ReplaceNode { .. }))
        {
            let k = format!("{:?}", a.action);
            *m.entry(k.split_whitespace().next().unwrap().to_string()).or_default() += 1;
        }
        m
    };
    assert_eq!(kinds(&one), kinds(&two));
}

#[test]
fn actions_are_in_time_order_and_before_the_end() {
    for name in ["pressure", "churn"] {
        let t = load(name, &[]).unwrap().expand(5);
        assert!(t.actions.windows(2).all(|w| w[0].at <= w[1].at), "{name}");
        assert!(t.actions.iter().all(|a| a.at < t.end), "{name}");
        assert!(!t.actions.is_empty());
    }
}

#[test]
fn every_action_names_a_slot_or_node_that_exists() {
    let t = churn_at(40).expand(11);
    let mut created: BTreeSet<(u32, u32)> = BTreeSet::new();
    for a in &t.actions {
        match a.action {
            Action::CreatePod { slot } => {
                assert!(t.workload(slot.workload).is_some());
                assert!(created.insert((slot.workload.0, slot.ordinal)), "slot created twice");
            }
            Action::DeletePod { slot, .. } | Action::KillPod { slot } => {
                assert!(
                    created.contains(&(slot.workload.0, slot.ordinal)),
                    "{a:?} before its creation"
                );
            }
            _ => {
                let node = a.action.node().expect("a node action");
                assert!(node.index() < t.nodes.len());
            }
        }
    }
}

#[test]
fn ordinals_count_up_across_phases_of_one_template() {
    let text = common::base_plus("  - wait: 1m\n  - create: {template: web, count: 5}\n");
    let t = parse_str("t", &text).unwrap().expand(1);
    let ordinals: Vec<u32> = t
        .actions
        .iter()
        .filter_map(|a| match a.action {
            Action::CreatePod { slot } => Some(slot.ordinal),
            _ => None,
        })
        .collect();
    assert_eq!(ordinals, (0..15).collect::<Vec<_>>());
    assert_eq!(t.actions[10].at, Time(60_000));
}

#[test]
fn churn_deletes_a_fraction_of_the_existing_slots_every_interval() {
    let text = common::base_plus("  - churn: {template: web, fraction: 0.3, every: 2m, for: 10m}\n");
    let t = parse_str("t", &text).unwrap().expand(1);
    let mut rounds: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    for a in &t.actions {
        if let Action::DeletePod { slot, recreate } = a.action {
            assert!(recreate, "churn lets the owner recreate");
            rounds.entry(a.at.as_millis()).or_default().push(slot.ordinal);
        }
    }
    let times: Vec<u64> = rounds.keys().copied().collect();
    assert_eq!(times, vec![0, 120_000, 240_000, 360_000, 480_000]);
    for ordinals in rounds.values() {
        assert_eq!(ordinals.len(), 3, "round(0.3 * 10)");
        let distinct: BTreeSet<_> = ordinals.iter().collect();
        assert_eq!(distinct.len(), 3);
    }
    // different rounds draw independently
    assert!(rounds.values().collect::<BTreeSet<_>>().len() > 1);
}

#[test]
fn deleted_pods_are_gone_for_later_phases() {
    let text =
        common::base_plus("  - delete_pods: {template: web, count: 6}\n  - kill_pods: {template: web, count: 4}\n");
    for seed in 0..20 {
        let t = parse_str("t", &text).unwrap().expand(seed);
        let deleted: BTreeSet<u32> = t
            .actions
            .iter()
            .filter_map(|a| match a.action {
                Action::DeletePod { slot, recreate: false } => Some(slot.ordinal),
                _ => None,
            })
            .collect();
        let killed: BTreeSet<u32> = t
            .actions
            .iter()
            .filter_map(|a| match a.action {
                Action::KillPod { slot } => Some(slot.ordinal),
                _ => None,
            })
            .collect();
        assert_eq!(deleted.len(), 6);
        assert_eq!(killed.len(), 4);
        assert!(deleted.is_disjoint(&killed), "seed {seed}");
    }
}

fn node_actions(t: &Timeline) -> Vec<(u64, String, u32)> {
    t.actions
        .iter()
        .filter_map(|a| {
            let (kind, node) = match a.action {
                Action::FailNode { node } => ("fail", node),
                Action::DegradeNode { node } => ("degrade", node),
                Action::RecoverNode { node } => ("recover", node),
                _ => return None,
            };
            Some((a.at.as_millis(), kind.to_string(), node.0))
        })
        .collect()
}

const TWO_POOLS: &str = r#"name: faults
duration: 1h
cluster:
  pools:
    - {name: a, count: 4, machine_type: m, hourly_price: 1, capacity: {cpu: 2, memory: 4Gi}}
    - {name: b, count: 2, machine_type: m, hourly_price: 1, capacity: {cpu: 2, memory: 4Gi}}
phases:
"#;

#[test]
fn node_faults_pick_from_the_pool_and_recover_after() {
    let text = format!("{TWO_POOLS}  - at: 1m\n    fail_nodes: {{count: 2, pool: b, recover_after: 5m}}\n");
    let s = parse_str("t", &text).unwrap();
    for seed in 0..10 {
        let acts = node_actions(&s.expand(seed));
        assert_eq!(
            acts,
            vec![
                (60_000, "fail".into(), 4),
                (60_000, "fail".into(), 5),
                (360_000, "recover".into(), 4),
                (360_000, "recover".into(), 5)
            ]
        );
    }
    let t = s.expand(0);
    assert_eq!(t.nodes[4].name, "b-0");
    assert_eq!(t.nodes[4].labels["schedlab.io/pool"], "b");
}

#[test]
fn faults_do_not_overlap_on_a_node() {
    // both nodes of pool b are down from 1m to 6m, so the second fault
    // (which may not overlap it) finds no node; every seed agrees
    let text = format!(
        "{TWO_POOLS}  - at: 1m\n    fail_nodes: {{count: 2, pool: b, recover_after: 5m}}\n  - at: 2m\n    degrade_nodes: {{count: 1, pool: b}}\n"
    );
    let s = parse_str("t", &text).unwrap();
    let acts = node_actions(&s.expand(3));
    assert!(acts.iter().all(|(_, kind, _)| kind != "degrade"), "{acts:?}");
}

#[test]
fn recover_nodes_brings_back_what_is_down_and_cancels_later_recoveries() {
    let text = format!(
        "{TWO_POOLS}  - fail_nodes: {{count: 3, pool: a, recover_after: 30m}}\n  - degrade_nodes: {{count: 2, pool: b}}\n  - at: 10m\n    recover_nodes: {{pool: a, count: 2}}\n  - at: 20m\n    recover_nodes: {{}}\n"
    );
    let s = parse_str("t", &text).unwrap();
    for seed in 0..10 {
        let acts = node_actions(&s.expand(seed));
        let at = |ms: u64, kind: &str| acts.iter().filter(|(t, k, _)| *t == ms && k == kind).count();
        assert_eq!(at(0, "fail"), 3);
        assert_eq!(at(0, "degrade"), 2);
        assert_eq!(at(600_000, "recover"), 2);
        // the third failed node of pool a and both degraded nodes of b
        assert_eq!(at(1_200_000, "recover"), 3);
        // the recoveries planned for 30m were cancelled by the earlier ones
        assert_eq!(at(1_800_000, "recover"), 0, "seed {seed}: {acts:?}");
        let recovered: BTreeSet<u32> = acts.iter().filter(|(_, k, _)| k == "recover").map(|a| a.2).collect();
        let failed: BTreeSet<u32> = acts.iter().filter(|(_, k, _)| k != "recover").map(|a| a.2).collect();
        assert_eq!(recovered, failed);
    }
}

#[test]
fn pods_due_after_the_end_are_not_created() {
    let text = common::base_with("count: 10}", "count: 100, over: 60m}");
    let t = parse_str("t", &text).unwrap().expand(1);
    // 100 pods over 60 minutes, but the scenario ends at 30 minutes
    assert_eq!(t.actions.len(), 50);
    assert_eq!(t.end, Time(30 * 60_000));
}

#[test]
fn builtins_scale_with_nodes() {
    let small = churn_at(40).expand(1);
    let big = churn_at(200).expand(1);
    assert_eq!(small.nodes.len(), 40);
    assert_eq!(big.nodes.len(), 200);
    let creates = |t: &Timeline| {
        t.actions
            .iter()
            .filter(|a| matches!(a.action, Action::CreatePod { .. }))
            .count()
    };
    assert_eq!(creates(&big), 5 * creates(&small));
    let p = load("pressure", &["nodes=1000".into()]).unwrap().expand(1);
    assert_eq!(p.nodes.len(), 1000);
    let p48 = load("pressure", &[]).unwrap().expand(1);
    let ratio = creates(&p) as f64 / creates(&p48) as f64;
    assert!((ratio - 1000.0 / 48.0).abs() < 0.1, "{ratio}");
    assert_eq!(p.nodes.iter().filter(|n| n.pool.name == "small").count(), 500);
    assert!(
        p.nodes
            .iter()
            .any(|n| n.labels.get("tier").map(String::as_str) == Some("spot"))
    );
}

#[test]
fn resolved_scenarios_load_again_to_the_same_timelines() {
    let dir = tempfile::tempdir().unwrap();
    let small = common::data("small.yaml");
    for (name, overrides) in [
        (small.to_str().unwrap(), vec![]),
        ("pressure", vec!["nodes=10".to_string()]),
        ("churn", vec!["nodes=12".to_string(), "churn_every=90s".to_string()]),
    ] {
        let s = load(name, &overrides).unwrap();
        let json = s.resolved();
        let path = dir.path().join("resolved.json");
        std::fs::write(&path, serde_json::to_string_pretty(&json).unwrap()).unwrap();
        let again = load(path.to_str().unwrap(), &[]).unwrap();
        assert_eq!(again.resolved(), json, "{name}");
        for seed in [1, 9] {
            assert_eq!(again.expand(seed), s.expand(seed), "{name} seed {seed}");
        }
        assert_eq!(again.params(), s.params());
    }
}

#[test]
fn params_report_defaults_and_overrides() {
    let s = load("churn", &["nodes=12".into()]).unwrap();
    assert_eq!(s.params()["nodes"], serde_json::json!(12));
    assert_eq!(s.params()["churn_every"], serde_json::json!("1m"));
    assert_eq!(s.origin(), "builtin:churn");
    assert_eq!(s.name(), "churn");
    assert_eq!(s.resolved()["cluster"]["pools"][1]["count"], serde_json::json!(3));
    let file = common::data("small.yaml");
    let f = load(file.to_str().unwrap(), &[]).unwrap();
    assert_eq!(f.origin(), file.to_str().unwrap());
}

/// `nodes op k op k ...` with `terms` operands in all.
fn long_chain(op: &str, k: &str, terms: usize) -> String {
    let mut s = String::from("nodes");
    for _ in 1..terms {
        s.push_str(op);
        s.push_str(k);
    }
    s
}

#[test]
fn a_hundred_thousand_term_expression_in_a_scenario_file_loads() {
    // Flat chains of ~52,000 terms or more once overflowed the stack (exit 134).
    let dir = tempfile::tempdir().unwrap();
    for (op, k) in [(" + ", "0"), (" - ", "0"), (" * ", "1"), (" / ", "1"), ("+", "0*1")] {
        let text = common::BASE.replace(
            "count: ${nodes}",
            &format!("count: ${{{}}}", long_chain(op, k, 100_000)),
        );
        assert!(text.len() > 150_000, "{}", text.len());
        let path = dir.path().join("long.yaml");
        std::fs::write(&path, &text).unwrap();
        let s = load(path.to_str().unwrap(), &["nodes=7".into()]).unwrap();
        assert_eq!(
            s.resolved()["cluster"]["pools"][0]["count"],
            serde_json::json!(7),
            "{op:?}"
        );
    }
    // and a long chain that goes wrong names the field and the trouble
    let text = common::BASE.replace(
        "count: ${nodes}",
        &format!("count: ${{{} / 0}}", long_chain(" + ", "1", 100_000)),
    );
    let e = workloads::parse_str("long.yaml", &text).unwrap_err().to_string();
    assert!(
        e.contains("cluster.pools[0].count") && e.contains("division by zero"),
        "{}",
        &e[..e.len().min(300)]
    );
}
