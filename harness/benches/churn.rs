//! The whole simulator road at scale: the built-in `churn` scenario at 1,000
//! nodes over one simulated hour, scheduled by the `default` baseline, with
//! the records written as JSON Lines and the run's metrics computed from them
//! (what one (arm, seed) run of `schedlab scenario` does).

use criterion::{Criterion, criterion_group, criterion_main};
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::sim::Sim;
use std::time::Duration;

const SEED: u64 = 1;

fn churn_1000_nodes_one_hour(c: &mut Criterion) {
    let overrides = vec!["nodes=1000".to_string(), "duration=1h".to_string()];
    let scenario = workloads::load("churn", &overrides).expect("the built-in churn scenario loads");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let records = dir.path().join("records.jsonl");

    let mut group = c.benchmark_group("churn_1000_nodes_1h");
    group.sample_size(10).measurement_time(Duration::from_secs(20));
    group.bench_function("default_sim_records_metrics", |b| {
        b.iter(|| {
            let mut sink = results::JsonlSink::create(&records).expect("records file");
            let summary = play(&scenario, &mut sink);
            sink.finish().expect("records written");
            let metrics = results::metrics::from_file(&records).expect("metrics");
            (summary, metrics.value("cost_usd"))
        })
    });
    group.bench_function("default_sim_only", |b| b.iter(|| play(&scenario, &mut Discard)));
    group.finish();
}

/// Plays one run of `scenario` (seed [`SEED`], the `default` arm) into `sink`.
fn play(scenario: &workloads::Scenario, sink: &mut dyn schedlab_core::RecordSink) -> schedlab_core::sim::SimSummary {
    let sim = Sim::new(scenario.expand(SEED), SEED, ModelConfig::default()).expect("a valid timeline");
    let mut policy = scheduler::baseline("default", SEED).expect("a known baseline");
    let mut placer =
        |pod: &schedlab_core::PendingPod<'_>, view: &schedlab_core::ClusterView<'_>| policy.schedule(pod, view);
    sim.finish(&mut placer, sink)
}

struct Discard;

impl schedlab_core::RecordSink for Discard {
    fn record(&mut self, record: schedlab_core::Record) {
        std::hint::black_box(record);
    }
}

criterion_group!(benches, churn_1000_nodes_one_hour);
criterion_main!(benches);
