//! Properties every baseline keeps on arbitrary clusters: it binds exactly
//! when some node passes its filters, and only to such a node (the default
//! profile's filters; `load-aware` adds its usage filter). `cost-binpack`
//! also never picks a Degraded node while a healthy one fits.

use proptest::prelude::*;
use schedlab_core::node::{NodeCondition, NodeId, TaintEffect};
use schedlab_core::testing::{MI, PodSpecChanges, pod};
use schedlab_core::{NodeState, Placement};
use scheduler::filters::is_feasible;
use scheduler::testing::{NodeBuilder, cluster, node, pending, taint, toleration, view};
use scheduler::{BASELINE_NAMES, CostBinPackScheduler, LoadAwareScheduler, baseline, load_aware};

fn arb_node() -> impl Strategy<Value = NodeBuilder> {
    (
        1u64..16,   // cores
        1u64..64,   // GiB
        0u64..=120, // requested cpu, % of allocatable (over 100: overcommitted)
        0u64..=120, // requested memory, %
        0u32..=12,  // pods bound (limit 10)
        0u8..10,    // condition / cordon / taint roll
        0u64..=100, // cpu in use, % of allocatable
        0u64..=100, // memory in use, %
    )
        .prop_map(|(cores, gib, cpu_pct, mem_pct, pods, roll, cpu_used, mem_used)| {
            let n = node("n")
                .cpu(&cores.to_string())
                .memory(&format!("{gib}Gi"))
                .pods(10)
                .requested(
                    &format!("{}m", cores * 10 * cpu_pct),
                    &format!("{}Mi", gib * 1024 * mem_pct / 100),
                )
                .pod_count(pods)
                .used(
                    &format!("{}m", cores * 10 * cpu_used),
                    &format!("{}Mi", gib * 1024 * mem_used / 100),
                );
            match roll {
                0 => n.cordoned(),
                1 => n.not_ready(),
                2 => n.degraded(),
                3 => n.tainted(taint("spot", "true", TaintEffect::NoSchedule)),
                4 => n.tainted(taint("soft", "", TaintEffect::PreferNoSchedule)),
                _ => n,
            }
        })
}

fn arb_cluster() -> impl Strategy<Value = Vec<NodeState>> {
    // past 100 nodes the default samples a share of them
    prop_oneof![
        prop::collection::vec(arb_node(), 0..20),
        prop::collection::vec(arb_node(), 100..260)
    ]
    .prop_map(cluster)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn binds_iff_feasible_and_only_to_feasible_nodes(
        nodes in arb_cluster(),
        cpu_m in 0u64..8000,
        mem_mi in 0u64..16384,
        tolerates_spot in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut spec = pod(cpu_m, mem_mi * MI);
        if tolerates_spot {
            spec = spec.tolerate(toleration("spot", "true", None));
        }
        let healthy_fits = nodes
            .iter()
            .any(|n| is_feasible(&spec, n) && n.condition != NodeCondition::Degraded);
        for name in BASELINE_NAMES {
            let passes = |n: &NodeState| match *name {
                LoadAwareScheduler::NAME => load_aware::is_feasible(&spec, n),
                _ => is_feasible(&spec, n),
            };
            let any_feasible = nodes.iter().any(passes);
            let mut s = baseline(name, seed).unwrap();
            for _ in 0..3 {
                match s.schedule(&pending(&spec), &view(&nodes)) {
                    Placement::Bind(NodeId(i)) => {
                        prop_assert!(any_feasible);
                        let chosen = &nodes[i as usize];
                        prop_assert!(passes(chosen), "{} bound to infeasible node {}", name, i);
                        if *name == CostBinPackScheduler::NAME && healthy_fits {
                            prop_assert!(chosen.condition != NodeCondition::Degraded, "degraded node {}", i);
                        }
                    }
                    Placement::Unschedulable { reason } => {
                        prop_assert!(!any_feasible, "{}: {}", name, reason);
                        let prefix = format!("0/{} nodes are available: ", nodes.len());
                        prop_assert!(nodes.is_empty() || reason.starts_with(&prefix), "{}", reason);
                    }
                    Placement::Decline { reason } => prop_assert!(false, "{} declined: {}", name, reason),
                    // the view lists no bound pods, so there is nothing to preempt
                    Placement::Preempt { node, .. } => prop_assert!(false, "{} preempted on {}", name, node.0),
                }
            }
        }
    }
}
