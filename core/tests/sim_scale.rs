//! The simulator at the scale it must hold: 5,000 nodes and 100,000 pods.

use schedlab_core::Record;
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::sim::Sim;
use schedlab_core::testing::*;
use std::time::Instant;

/// About 5 s in a debug build, under 1 s in release.
#[test]
fn five_thousand_nodes_and_a_hundred_thousand_pods() {
    let timeline = synthetic(5000, 100_000, 1.0, 1);
    let actions = timeline.actions.iter().filter(|a| a.at <= timeline.end).count();
    let started = Instant::now();
    let sim = Sim::new(timeline, 1, ModelConfig::default()).unwrap();
    let mut sink = CountingSink::default();
    let mut placer = next_fit();
    let summary = sim.finish(&mut placer, &mut sink);
    let elapsed = started.elapsed();
    eprintln!("5000 nodes x 100000 pods, 1 h: {elapsed:?}, {actions} actions, {summary:?}");
    // actions after the end are never played
    assert_eq!(summary.actions as usize, actions);
    assert!(summary.pods_created >= 100_000);
    assert!(summary.binds >= 100_000, "{summary:?}");
    assert_eq!(summary.records, sink.records);
    // every sample wrote one record per node and one for the cluster
    assert_eq!(summary.samples, 61);
    assert!(sink.records > 61 * 5001);
}

#[test]
fn a_mid_sized_cluster_runs_and_stays_consistent() {
    let timeline = synthetic(200, 4000, 0.5, 2);
    let sim = Sim::new(timeline, 2, ModelConfig::default()).unwrap();
    let mut records = Vec::new();
    let mut placer = next_fit();
    let summary = sim.finish(&mut placer, &mut records);
    assert!(summary.binds >= 4000);
    // samples agree with the node samples of their instant
    let mut node_pods = 0u64;
    for r in &records {
        match r {
            Record::NodeSample(s) => node_pods += u64::from(s.pods),
            Record::ClusterSample(c) => {
                assert_eq!(u64::from(c.bound), node_pods, "at {}", c.t);
                node_pods = 0;
            }
            _ => {}
        }
    }
}
