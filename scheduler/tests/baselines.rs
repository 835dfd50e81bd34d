//! Behaviour of the baselines through the `Scheduler` interface.

use schedlab_core::node::{NodeId, TaintEffect};
use schedlab_core::testing::{GI, MI, PodSpecChanges, pod};
use schedlab_core::{NodeState, Placement};
use scheduler::filters::{TAINT_NODE_UNREACHABLE, is_feasible};
use scheduler::profile::NodeScores;
use scheduler::testing::{cluster, node, pending, taint, toleration, toleration_exists, view};
use scheduler::{BASELINE_NAMES, BinPackScheduler, DefaultScheduler, RandomScheduler, Scheduler, baseline};
use scheduler::{binpack, default};

fn bound(p: Placement) -> usize {
    match p {
        Placement::Bind(NodeId(i)) => i as usize,
        other => panic!("expected a binding, got {other:?}"),
    }
}

fn decisions(s: &mut dyn Scheduler, nodes: &[NodeState], spec: &schedlab_core::PodSpec, n: usize) -> Vec<usize> {
    (0..n)
        .map(|_| bound(s.schedule(&pending(spec), &view(nodes))))
        .collect()
}

#[test]
fn default_scores_match_hand_computation() {
    let nodes = cluster([
        node("a").cpu("4").memory("16Gi"),
        node("b").cpu("4").memory("16Gi").requested("2", "4Gi"),
        node("c")
            .cpu("8")
            .memory("16Gi")
            .tainted(taint("maintenance", "", TaintEffect::PreferNoSchedule)),
    ]);
    let spec = pod(1000, 2 * GI);
    let scores = default::PROFILE_V1_33.node_scores(&spec, &nodes, &[0, 1, 2]);
    let want = [
        // a: fit cpu (4000-1000)*100/4000 = 75, mem (16-2)*100/16 = 87.5 -> 87; (75+87)/2 = 81
        //    balanced: cpu 0.25, mem 0.125, std 0.0625 -> 93.75 -> 93
        //    taints: raw 0 of max 1 -> 100 - 0 = 100; total 81 + 93 + 3*100 = 474
        NodeScores {
            node: 0,
            plugins: vec![81, 93, 100],
            total: 474,
        },
        // b: fit cpu (4000-3000)*100/4000 = 25, mem (16-6)*100/16 = 62.5 -> 62; 87/2 -> 43
        //    balanced: cpu 0.75, mem 0.375, std 0.1875 -> 81.25 -> 81; total 43 + 81 + 300 = 424
        NodeScores {
            node: 1,
            plugins: vec![43, 81, 100],
            total: 424,
        },
        // c: fit cpu 7000*100/8000 = 87.5 -> 87, mem 87; 87
        //    balanced: 0.125 and 0.125 -> 100
        //    taints: raw 1 of max 1 -> 100 - 100 = 0; total 87 + 100 + 0 = 187
        NodeScores {
            node: 2,
            plugins: vec![87, 100, 0],
            total: 187,
        },
    ];
    assert_eq!(scores, want);
    let mut default = DefaultScheduler::new(1);
    assert_eq!(decisions(&mut default, &nodes, &spec, 20), vec![0; 20]);

    // tolerating the PreferNoSchedule taint: every raw count 0 -> all 100;
    // c totals 87 + 100 + 300 = 487 > 474
    let tolerant = pod(1000, 2 * GI).tolerate(toleration("maintenance", "", None));
    let scores = default::PROFILE_V1_33.node_scores(&tolerant, &nodes, &[0, 1, 2]);
    assert_eq!(scores.iter().map(|s| s.total).collect::<Vec<_>>(), [474, 424, 487]);
    assert_eq!(decisions(&mut default, &nodes, &tolerant, 20), vec![2; 20]);
}

#[test]
fn binpack_prefers_the_fuller_node_default_the_emptier() {
    let nodes = cluster([
        node("empty").cpu("4").memory("16Gi"),
        node("half").cpu("4").memory("16Gi").requested("2", "8Gi"),
    ]);
    let spec = pod(500, GI);
    // both arms score as `default`'s release, v1.20
    let totals = |profile: scheduler::profile::Profile| {
        let scores = profile.node_scores(&spec, &nodes, &[0, 1]);
        scores.iter().map(|s| s.total).collect::<Vec<_>>()
    };
    // empty: most cpu 500*100/4000 = 12.5 -> 12, mem 1*100/16 = 6.25 -> 6; 18/2 = 9
    //        balanced 1 - |0.125 - 0.0625| = 0.9375 -> 93; 9 + 93 + 100 = 202
    // half:  most cpu 2500*100/4000 = 62.5 -> 62, mem 9*100/16 = 56.25 -> 56; 118/2 = 59
    //        balanced 1 - |0.625 - 0.5625| -> 93; 59 + 93 + 100 = 252
    assert_eq!(totals(binpack::PROFILE), [202, 252]);
    // empty: least cpu 87.5 -> 87, mem 93.75 -> 93; 90 + 93 + 100 = 283
    // half:  least cpu 37.5 -> 37, mem 43.75 -> 43; 40 + 93 + 100 = 233
    assert_eq!(totals(default::PROFILE), [283, 233]);

    for seed in 0..5 {
        let mut binpack = BinPackScheduler::new(seed);
        assert_eq!(decisions(&mut binpack, &nodes, &spec, 10), vec![1; 10]);
        let mut default = DefaultScheduler::new(seed);
        assert_eq!(decisions(&mut default, &nodes, &spec, 10), vec![0; 10]);
    }
}

#[test]
fn each_baseline_follows_its_own_order_on_one_cluster() {
    // pod 500m / 1Gi
    let nodes = cluster([
        // $0.02 a core, the cheapest per core; half requested
        node("cheap")
            .cpu("8")
            .memory("32Gi")
            .price(0.16)
            .requested("4", "16Gi")
            .used("200m", "4Gi"),
        // the fullest by requests
        node("packed").price(0.4).requested("3", "12Gi").used("500m", "2Gi"),
        // the emptiest by requests, but 68.75% of its cpu in use
        node("hot").cpu("16").memory("64Gi").price(1.6).used("11", "8Gi"),
        // just below Trimaran's 40% once the pod runs: (800 + 750) / 4000
        node("near-target").price(0.4).requested("1", "4Gi").used("800m", "1Gi"),
        // empty and idle
        node("idle").cpu("8").memory("32Gi").price(0.8),
    ]);
    let spec = pod(500, GI);
    let want = [
        ("default", 2),      // LeastAllocated: the emptiest by requests
        ("binpack", 1),      // MostAllocated: the fullest by requests
        ("cost-binpack", 0), // the cheapest per core
        ("target-load", 3),  // closest below the target utilisation
        ("load-aware", 4),   // `hot` filtered; least used after placing
    ];
    for (name, node) in want {
        for seed in 0..3 {
            let mut s = baseline(name, seed).unwrap();
            assert_eq!(decisions(s.as_mut(), &nodes, &spec, 5), vec![node; 5], "{name}");
        }
    }
}

#[test]
fn top_score_ties_are_uniform_and_reproducible() {
    let nodes = cluster((0..4).map(|i| node(&format!("n{i}"))));
    let spec = pod(100, 100 * MI);
    let trials = 8_000;
    for name in BASELINE_NAMES {
        let run = |seed| decisions(baseline(name, seed).unwrap().as_mut(), &nodes, &spec, trials);
        let first = run(11);
        assert_eq!(first, run(11), "{name}: same seed, same choices");
        assert_ne!(first, run(12), "{name}: another seed, other choices");
        let mut hits = [0u32; 4];
        for i in &first {
            hits[*i] += 1;
        }
        // binomial sd = sqrt(8000 * 1/4 * 3/4) ~ 39; allow 5 sd around 2000
        for h in hits {
            assert!(h.abs_diff(2000) < 195, "{name}: {hits:?}");
        }
    }
}

#[test]
fn start_index_rotates_across_decisions() {
    // 200 nodes, the first 50 cordoned.
    // numFeasibleNodesToFind(200): pct = 50 - 200/125 = 49; 200*49/100 = 98 -> 100.
    let nodes = cluster((0..200).map(|i| {
        let n = node(&format!("n{i}"));
        if i < 50 { n.cordoned() } else { n }
    }));
    let spec = pod(100, 0);
    let mut s = DefaultScheduler::new(3);
    // from 0: 50 cordoned + 100 feasible examined -> next start 150; only
    // nodes 50..150 were candidates
    let first = bound(s.schedule(&pending(&spec), &view(&nodes)));
    assert!((50..150).contains(&first), "{first}");
    assert_eq!(s.next_start_node_index(), 150);
    // from 150: 150..200 (50 feasible), 0..50 (cordoned), 50..100 (50 feasible)
    // -> 150 examined, next start (150 + 150) % 200 = 100
    let second = bound(s.schedule(&pending(&spec), &view(&nodes)));
    assert!((50..100).contains(&second) || (150..200).contains(&second), "{second}");
    assert_eq!(s.next_start_node_index(), 100);
    // from 100: 100..200 are 100 feasible -> next start 0
    let third = bound(s.schedule(&pending(&spec), &view(&nodes)));
    assert!((100..200).contains(&third), "{third}");
    assert_eq!(s.next_start_node_index(), 0);

    // 1000 feasible nodes: 420 are examined per decision
    let nodes = cluster((0..1000).map(|i| node(&format!("n{i}"))));
    let mut s = DefaultScheduler::new(3);
    for want in [420, 840, 260, 680] {
        s.schedule(&pending(&spec), &view(&nodes));
        assert_eq!(s.next_start_node_index(), want);
    }
}

#[test]
fn unschedulable_reports_every_reason() {
    let nodes = cluster([
        node("cordoned").cordoned(),
        node("spot").tainted(taint("spot", "true", TaintEffect::NoSchedule)),
        node("down").not_ready(),
        node("small").cpu("1"),
        node("full").memory("2Gi").pods(10).pod_count(10),
        node("small-too").cpu("1500m"),
    ]);
    let spec = pod(2000, 4 * GI);
    let want = "0/6 nodes are available: 1 Insufficient memory, 1 Too many pods, \
                1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, \
                1 node(s) had untolerated taint {spot: true}, 1 node(s) were unschedulable, 2 Insufficient cpu.";
    // `default` words the taint reason as its release, v1.20, did
    let want_v1_20 = "0/6 nodes are available: 1 Insufficient memory, 1 Too many pods, \
                      1 node(s) had taint {node.kubernetes.io/unreachable: }, that the pod didn't tolerate, \
                      1 node(s) had taint {spot: true}, that the pod didn't tolerate, \
                      1 node(s) were unschedulable, 2 Insufficient cpu.";
    for name in BASELINE_NAMES {
        let mut s = baseline(name, 5).unwrap();
        // `binpack` and `cost-binpack` follow `default`'s release
        let want = if ["default", "binpack", "cost-binpack"].contains(name) {
            want_v1_20
        } else {
            want
        };
        match s.schedule(&pending(&spec), &view(&nodes)) {
            Placement::Unschedulable { reason } => assert_eq!(reason, want, "{name}"),
            other => panic!("{name}: {other:?}"),
        }
        match s.schedule(&pending(&spec), &view(&[])) {
            Placement::Unschedulable { reason } => {
                assert_eq!(reason, "no nodes available to schedule pods", "{name}")
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}

#[test]
fn not_ready_nodes_take_only_pods_that_tolerate_unreachable() {
    let nodes = cluster([
        node("down-but-big").cpu("16").memory("64Gi").not_ready(),
        node("up-and-busy").requested("2", "8Gi"),
        node("degraded").requested("3", "12Gi").degraded(),
    ]);
    let spec = pod(500, GI);
    for name in BASELINE_NAMES {
        let mut s = baseline(name, 9).unwrap();
        let chosen = decisions(s.as_mut(), &nodes, &spec, 50);
        assert!(chosen.iter().all(|&i| i != 0), "{name}: {chosen:?}");
    }
    // the big empty node wins the default's LeastAllocated once tolerated
    let tolerant = pod(500, GI).tolerate(toleration_exists(TAINT_NODE_UNREACHABLE, None));
    assert_eq!(
        decisions(&mut DefaultScheduler::new(9), &nodes, &tolerant, 10),
        vec![0; 10]
    );
}

#[test]
fn random_picks_only_feasible_nodes_uniformly() {
    // every third node infeasible, in turn cordoned, tainted, too small
    let nodes = cluster((0..30).map(|i| {
        let n = node(&format!("n{i}")).cpu("2");
        match i % 9 {
            0 => n.cordoned(),
            3 => n.tainted(taint("dedicated", "db", TaintEffect::NoSchedule)),
            6 => n.cpu("100m"),
            _ => n,
        }
    }));
    let spec = pod(1000, 0);
    let feasible: Vec<usize> = (0..30).filter(|&i| is_feasible(&spec, &nodes[i])).collect();
    assert_eq!(feasible.len(), 20);
    let trials = 20_000;
    let mut s = RandomScheduler::new(21);
    let chosen = decisions(&mut s, &nodes, &spec, trials);
    assert_eq!(chosen, decisions(&mut RandomScheduler::new(21), &nodes, &spec, trials));
    let mut hits = [0u32; 30];
    for i in chosen {
        hits[i] += 1;
    }
    for (i, h) in hits.iter().enumerate() {
        if feasible.contains(&i) {
            // expect 1000; sd = sqrt(20000 * 0.05 * 0.95) ~ 31; allow 5 sd
            assert!(h.abs_diff(1000) < 155, "node {i}: {hits:?}");
        } else {
            assert_eq!(*h, 0, "infeasible node {i} chosen");
        }
    }
}

#[test]
fn a_single_feasible_node_is_bound_directly() {
    let nodes = cluster([node("a").cordoned(), node("b"), node("c").not_ready()]);
    let spec = pod(0, 0);
    for name in BASELINE_NAMES {
        let mut s = baseline(name, 0).unwrap();
        assert_eq!(decisions(s.as_mut(), &nodes, &spec, 5), vec![1; 5], "{name}");
    }
}
