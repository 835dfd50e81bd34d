//! Decisions per second of the `default` baseline on clusters of 1,000 and
//! 5,000 partly filled nodes (mixed machine sizes, 20–85% requested, some
//! spot-tainted, cordoned, NotReady and PreferNoSchedule nodes), for a mix of
//! pod shapes; plus the failure path (a pod no node fits).

use clusters::node::{NodeState, TaintEffect};
use clusters::pod::PodSpec;
use clusters::rng::{purpose, stream};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use rand::Rng;
use scheduler::testing::{cluster, node, pending, pod, taint, toleration, view};
use scheduler::{DefaultScheduler, Scheduler};
use std::hint::black_box;

const SEED: u64 = 42;

fn nodes(n: usize) -> Vec<NodeState> {
    let mut rng = stream(SEED, &[purpose::TIMELINE, n as u64]);
    // (cpu millicores, memory GiB) allocatable of common machine types
    let shapes = [(1930, 6), (3920, 13), (7910, 27), (15890, 57)];
    cluster((0..n).map(|i| {
        let (cpu_m, mem_gi) = shapes[rng.random_range(0..shapes.len())];
        let cpu_used = (cpu_m as f64 * rng.random_range(0.2..0.85)) as u64;
        let mem_used = (mem_gi as f64 * 1024.0 * rng.random_range(0.2..0.85)) as u64;
        let mut b = node(&format!("node-{i}"))
            .cpu(&format!("{cpu_m}m"))
            .memory(&format!("{mem_gi}Gi"))
            .pods(110)
            .requested(&format!("{cpu_used}m"), &format!("{mem_used}Mi"))
            .pod_count(rng.random_range(5..60));
        let roll: f64 = rng.random();
        if roll < 0.10 {
            b = b
                .spot()
                .tainted(taint("cloud.google.com/gke-spot", "true", TaintEffect::NoSchedule));
        } else if roll < 0.12 {
            b = b.cordoned();
        } else if roll < 0.13 {
            b = b.not_ready();
        } else if roll < 0.18 {
            b = b.tainted(taint("maintenance", "", TaintEffect::PreferNoSchedule));
        }
        b
    }))
}

fn pods() -> Vec<PodSpec> {
    vec![
        pod().cpu("100m").memory("128Mi").build(),
        pod().cpu("250m").memory("512Mi").build(),
        pod().cpu("500m").memory("1Gi").build(),
        pod().cpu("1").memory("2Gi").build(),
        pod().cpu("2").memory("4Gi").build(),
        pod().build(),
        pod()
            .cpu("500m")
            .memory("1Gi")
            .tolerates(toleration("cloud.google.com/gke-spot", "true", None))
            .build(),
    ]
}

fn decisions(c: &mut Criterion) {
    let specs = pods();
    let mut group = c.benchmark_group("default");
    group.throughput(Throughput::Elements(1));
    for n in [1_000, 5_000] {
        let nodes = nodes(n);
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
    let nodes = nodes(5_000);
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
