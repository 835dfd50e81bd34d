//! Decisions per second of the `default` baseline on clusters of 1,000 and
//! 5,000 partly filled nodes (`scheduler::testing::synthetic_cluster`, the
//! same clusters as the `agmarl` bench), for a mix of pod shapes; plus the
//! failure path (a pod no node fits).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use scheduler::testing::{pending, pod, synthetic_cluster, synthetic_pods, view};
use scheduler::{DefaultScheduler, Scheduler};
use std::hint::black_box;

const SEED: u64 = 42;

fn decisions(c: &mut Criterion) {
    let specs = synthetic_pods();
    let mut group = c.benchmark_group("default");
    group.throughput(Throughput::Elements(1));
    for n in [1_000, 5_000] {
        let nodes = synthetic_cluster(n, SEED);
        let v = view(&nodes);
        group.bench_with_input(BenchmarkId::new("decision", n), &n, |b, _| {
            let mut scheduler = DefaultScheduler::new(SEED);
            let mut k = 0usize;
            b.iter(|| {
                k = (k + 1) % specs.len();
                black_box(scheduler.schedule(&pending(&specs[k]), black_box(&v)))
            });
        });
    }
    // the failure path: every node examined, reasons counted and formatted
    let nodes = synthetic_cluster(5_000, SEED);
    let v = view(&nodes);
    let huge = pod().cpu("64").memory("1Ti").build();
    group.bench_function(BenchmarkId::new("unschedulable", 5_000), |b| {
        let mut scheduler = DefaultScheduler::new(SEED);
        b.iter(|| black_box(scheduler.schedule(&pending(&huge), black_box(&v))));
    });
    group.finish();
}

criterion_group!(benches, decisions);
criterion_main!(benches);
