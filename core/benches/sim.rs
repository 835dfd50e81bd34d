//! The simulator on a synthetic 1,000-node, 10,000-pod hour with churn and
//! node failures, placing with first-feasible.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use schedlab_core::behaviour::ModelConfig;
use schedlab_core::sim::Sim;
use schedlab_core::testing::{CountingSink, first_feasible, synthetic};
use std::hint::black_box;

fn sim_hour(c: &mut Criterion) {
    let timeline = synthetic(1000, 10_000, 1.0, 1);
    let mut group = c.benchmark_group("sim");
    group.sample_size(10);
    group.bench_function("1000 nodes, 10000 pods, 1 h, first-feasible", |b| {
        b.iter_batched(
            || timeline.clone(),
            |timeline| {
                let sim = Sim::new(timeline, 1, ModelConfig::default()).expect("valid timeline");
                let mut sink = CountingSink::default();
                let summary = sim.finish(&mut first_feasible, &mut sink);
                black_box((summary, sink.records))
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, sim_hour);
criterion_main!(benches);
