//! Decisions per second of the kube-scheduler-like baselines (`default`,
//! `binpack`, `cost-binpack`, `target-load`, `load-aware`) on clusters of
//! 1,000 and 5,000 partly filled nodes (`scheduler::testing::synthetic_cluster`,
//! the same clusters as the `agmarl` bench), for a mix of pod shapes; plus
//! `default`'s failure path (a pod no node fits).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use schedlab_core::testing::{GI, pod};
use scheduler::testing::{pending, synthetic_cluster, synthetic_pods, view};
use scheduler::{DefaultScheduler, Scheduler, baseline};
use std::hint::black_box;

const SEED: u64 = 42;
/// The baselines that run as profiles of plugins (`random` is not one).
const PROFILE_ARMS: [&str; 5] = ["default", "binpack", "cost-binpack", "target-load", "load-aware"];

fn decisions(c: &mut Criterion) {
    let specs = synthetic_pods();
    let clusters = [1_000, 5_000].map(|n| (n, synthetic_cluster(n, SEED)));
    for arm in PROFILE_ARMS {
        let mut group = c.benchmark_group(arm);
        group.throughput(Throughput::Elements(1));
        for (n, nodes) in &clusters {
            let v = view(nodes);
            group.bench_with_input(BenchmarkId::new("decision", n), n, |b, _| {
                let mut scheduler = baseline(arm, SEED).expect("a baseline");
                let mut k = 0usize;
                b.iter(|| {
                    k = (k + 1) % specs.len();
                    black_box(scheduler.schedule(&pending(&specs[k]), black_box(&v)))
                });
            });
        }
        group.finish();
    }
    // the failure path: every node examined, reasons counted and formatted
    let mut group = c.benchmark_group("default");
    let nodes = &clusters[1].1;
    let v = view(nodes);
    let huge = pod(64_000, 1024 * GI);
    group.bench_function(BenchmarkId::new("unschedulable", 5_000), |b| {
        let mut scheduler = DefaultScheduler::new(SEED);
        b.iter(|| black_box(scheduler.schedule(&pending(&huge), black_box(&v))));
    });
    group.finish();
}

criterion_group!(benches, decisions);
criterion_main!(benches);
