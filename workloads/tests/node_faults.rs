//! The node faults beyond fail and degrade: losses at a rate with
//! replacements, flaky nodes that degrade before they fail, zone outages,
//! and leaking templates; each on a hand-built scenario with the actions it
//! must expand to, and each bad value refused with its path.

mod common;

use schedlab_core::{Action, Timeline};
use workloads::parse_str;

/// Two pools of three nodes, in zones a and b.
fn zoned(phases: &str) -> String {
    format!(
        r#"name: t
duration: 10h
cluster:
  pools:
    - name: east
      count: 3
      machine_type: m
      hourly_price: 0.1
      zone: zone-a
      capacity: {{cpu: 4, memory: 16Gi}}
    - name: west
      count: 3
      machine_type: m
      hourly_price: 0.1
      zone: zone-b
      capacity: {{cpu: 4, memory: 16Gi}}
templates:
  web:
    requests: {{cpu: 100m, memory: 128Mi}}
    memory_growth_per_hour: {{uniform: {{min: 10Mi, max: 20Mi}}}}
phases:
  - create: {{template: web, count: 6}}
{phases}"#
    )
}

fn node_actions(t: &Timeline) -> Vec<(u64, &'static str, u32)> {
    t.actions
        .iter()
        .filter_map(|a| {
            let kind = match a.action {
                Action::FailNode { .. } => "fail",
                Action::DegradeNode { .. } => "degrade",
                Action::RecoverNode { .. } => "recover",
                Action::LoseNode { .. } => "lose",
                Action::ReplaceNode { .. } => "replace",
                _ => return None,
            };
            Some((a.at.as_millis() / 1000, kind, a.action.node()?.0))
        })
        .collect()
}

fn err(text: &str) -> String {
    parse_str("my.yaml", text).expect_err("refused").to_string()
}

#[test]
fn a_zone_sets_the_topology_label_and_an_outage_fails_the_whole_zone() {
    let s = parse_str(
        "t",
        &zoned("  - at: 1h\n    zone_outage: {zone: zone-b, recover_after: 30m}\n"),
    )
    .unwrap();
    let t = s.expand(1);
    assert_eq!(t.nodes[0].labels["topology.kubernetes.io/zone"], "zone-a");
    assert_eq!(t.nodes[5].labels["topology.kubernetes.io/zone"], "zone-b");
    let mut got = node_actions(&t);
    got.sort();
    assert_eq!(
        got,
        vec![
            (3600, "fail", 3),
            (3600, "fail", 4),
            (3600, "fail", 5),
            (5400, "recover", 3),
            (5400, "recover", 4),
            (5400, "recover", 5)
        ]
    );
}

#[test]
fn flaky_nodes_degrade_then_fail_then_recover() {
    let s = parse_str(
        "t",
        &zoned("  - at: 1h\n    degrade_nodes: {count: 2, pool: west, fail_after: 5m, recover_after: 20m}\n"),
    )
    .unwrap();
    let t = s.expand(4);
    let got = node_actions(&t);
    assert_eq!(got.len(), 6, "{got:?}");
    let nodes: Vec<u32> = got.iter().filter(|a| a.1 == "degrade").map(|a| a.2).collect();
    assert_eq!(nodes.len(), 2);
    for n in nodes {
        assert!((3..6).contains(&n), "a west node: {n}");
        let of_node: Vec<(u64, &str)> = got.iter().filter(|a| a.2 == n).map(|a| (a.0, a.1)).collect();
        assert_eq!(of_node, vec![(3600, "degrade"), (3900, "fail"), (4800, "recover")]);
    }
}

#[test]
fn losses_come_at_the_rate_and_each_is_replaced_after_its_delay() {
    let s = parse_str(
        "t",
        &zoned("  - at: 1h\n    lose_nodes: {rate_per_node_hour: 0.5, pool: east, for: 8h, replace_after: 10m}\n"),
    )
    .unwrap();
    let t = s.expand(9);
    assert_eq!(t, s.expand(9), "a seed fixes the losses");
    assert_ne!(
        node_actions(&t),
        node_actions(&s.expand(10)),
        "another seed, other losses"
    );
    let got = node_actions(&t);
    let losses: Vec<&(u64, &str, u32)> = got.iter().filter(|a| a.1 == "lose").collect();
    for loss in &losses {
        assert!(loss.2 < 3, "only east nodes are lost: {loss:?}");
        assert!((3600..3600 + 8 * 3600).contains(&loss.0), "within the phase: {loss:?}");
        assert!(
            got.contains(&(loss.0 + 600, "replace", loss.2)),
            "replaced 10 min later: {loss:?}"
        );
    }
    // per node, a loss never comes before the last replacement
    for n in 0..3 {
        let times: Vec<u64> = got.iter().filter(|a| a.2 == n).map(|a| a.0).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    }
    // 3 nodes x 8 h x 0.5/h = 12 expected (less the replacement gaps); over
    // 20 seeds the mean is within a few per cent of that
    let total: usize = (0..20)
        .map(|seed| node_actions(&s.expand(seed)).iter().filter(|a| a.1 == "lose").count())
        .sum();
    let mean = total as f64 / 20.0;
    assert!((9.5..13.0).contains(&mean), "mean losses per run {mean}");
}

#[test]
fn losses_skip_nodes_that_other_faults_hold_and_recover_nodes_leaves_them_lost() {
    let s = parse_str(
        "t",
        &zoned(
            "  - at: 1h\n    fail_nodes: {count: 3, pool: east}\n  - at: 1h\n    lose_nodes: {rate_per_node_hour: 2, for: 5h, replace_after: 1h}\n  - at: 9h\n    recover_nodes: {}\n",
        ),
    )
    .unwrap();
    let got = node_actions(&s.expand(2));
    // the east nodes are failed from 1 h until 9 h: no loss touches them before then
    assert!(got.iter().all(|a| !(a.1 == "lose" && a.2 < 3)), "{got:?}");
    assert!(got.iter().any(|a| a.1 == "lose"), "west nodes are lost: {got:?}");
    // recover_nodes at 9 h recovers the failed east nodes, and none of the lost ones
    let recovered: Vec<u32> = got.iter().filter(|a| a.1 == "recover").map(|a| a.2).collect();
    assert_eq!(recovered, vec![0, 1, 2]);
}

#[test]
fn a_leak_is_part_of_the_template_and_of_the_resolved_scenario() {
    let s = parse_str("t", &zoned("")).unwrap();
    let t = s.expand(1);
    let growth = t.workloads[0].spec.behaviour.memory_growth_per_hour.clone();
    assert_eq!(
        growth,
        Some(schedlab_core::Dist::Uniform {
            min: (10u64 << 20) as f64,
            max: (20u64 << 20) as f64
        })
    );
    let again = parse_str("resolved", &s.resolved().to_string()).unwrap();
    assert_eq!(again.expand(1), t);
}

#[test]
fn a_crash_hazard_growing_with_age_is_part_of_the_template_and_of_the_resolved_scenario() {
    let text = zoned("").replace(
        "    memory_growth_per_hour:",
        "    crash_rate_per_hour: 0.5\n    crash_rate_growth_per_hour: 2\n    memory_growth_per_hour:",
    );
    let s = parse_str("t", &text).unwrap();
    let t = s.expand(1);
    assert_eq!(t.workloads[0].spec.behaviour.crash_rate_growth_per_hour, 2.0);
    let again = parse_str("resolved", &s.resolved().to_string()).unwrap();
    assert_eq!(again.expand(1), t);
    // absent: flat, and not written into the resolved scenario
    let flat = parse_str("t", &zoned("")).unwrap();
    assert_eq!(
        flat.expand(1).workloads[0].spec.behaviour.crash_rate_growth_per_hour,
        0.0
    );
    assert!(!flat.resolved().to_string().contains("crash_rate_growth_per_hour"));
    let m = err(&text.replace("crash_rate_growth_per_hour: 2", "crash_rate_growth_per_hour: -1"));
    assert!(
        m.contains("my.yaml") && m.contains("templates.web.crash_rate_growth_per_hour") && m.contains("-1"),
        "{m}"
    );
}

#[test]
fn bad_fault_values_name_their_field() {
    let m = err(&zoned("  - fail_nodes: {count: 1, fail_after: 1m}\n"));
    assert!(
        m.contains("phases[1].fail_nodes.fail_after") && m.contains("only degrade_nodes"),
        "{m}"
    );
    let m = err(&zoned(
        "  - degrade_nodes: {count: 1, fail_after: 10m, recover_after: 5m}\n",
    ));
    assert!(
        m.contains("phases[1].degrade_nodes.recover_after") && m.contains("after the failure"),
        "{m}"
    );
    let m = err(&zoned("  - zone_outage: {zone: zone-c}\n"));
    assert!(
        m.contains("phases[1].zone_outage.zone") && m.contains("zones: zone-a, zone-b"),
        "{m}"
    );
    let m = err(&zoned(
        "  - lose_nodes: {rate_per_node_hour: 0, for: 1h, replace_after: 1m}\n",
    ));
    assert!(m.contains("phases[1].lose_nodes.rate_per_node_hour"), "{m}");
    let m = err(&zoned("  - lose_nodes: {rate_per_node_hour: 1, for: 1h}\n"));
    assert!(m.contains("replace_after"), "{m}");
    let m = err(&zoned("").replace("zone: zone-a", "zone: \"zone a\""));
    assert!(m.contains("cluster.pools[0].zone"), "{m}");
    let m = err(&zoned("").replace("{uniform: {min: 10Mi, max: 20Mi}}", "{uniform: {min: 30Mi, max: 20Mi}}"));
    assert!(m.contains("templates.web.memory_growth_per_hour"), "{m}");
}
