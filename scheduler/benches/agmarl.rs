//! Decision latency of the `agmarl` arm (bundled checkpoint) on one thread,
//! on clusters of 100, 1,000 and 5,000 partly filled nodes
//! (`scheduler::testing::synthetic_cluster`, the same clusters as the
//! `decisions` bench), for a mix of pod shapes.
//!
//! After criterion's estimates it times a loop of decisions itself and
//! prints p50 / p99 / max per size, since a scheduler's tail latency matters
//! more than its mean, and the process's peak RSS while deciding at that size
//! (cluster, scheduler and buffers; the peak mark is reset per size where
//! Linux allows it).
//!
//! The numeric kernels must run on one thread (as the harness runs them):
//! when `RAYON_NUM_THREADS` is not 1 the bench re-executes itself with
//! `RAYON_NUM_THREADS=1 CANDLE_NUM_THREADS=1`.
//!
//! ```text
//! cargo bench -p scheduler --bench agmarl
//! ```

use criterion::{BenchmarkId, Criterion, Throughput};
use scheduler::testing::{pending, synthetic_cluster, synthetic_pods, view};
use scheduler::{Scheduler, arm};
use std::hint::black_box;
use std::time::{Duration, Instant};

const SEED: u64 = 42;
const SIZES: [usize; 3] = [100, 1_000, 5_000];

fn agmarl() -> Box<dyn Scheduler> {
    match arm("agmarl", SEED) {
        Ok(s) => s,
        Err(e) => panic!("agmarl arm: {e}"),
    }
}

fn decisions(c: &mut Criterion) {
    let specs = synthetic_pods();
    let mut group = c.benchmark_group("agmarl");
    group.throughput(Throughput::Elements(1));
    for n in SIZES {
        let nodes = synthetic_cluster(n, SEED);
        let v = view(&nodes);
        group.bench_with_input(BenchmarkId::new("decision", n), &n, |b, _| {
            let mut scheduler = agmarl();
            let mut k = 0usize;
            b.iter(|| {
                k = (k + 1) % specs.len();
                black_box(scheduler.schedule(&pending(&specs[k]), black_box(&v)))
            });
        });
    }
    group.finish();
}

/// Resets the kernel's peak-RSS mark of this process (Linux: writing 5 to
/// `clear_refs`), so that the next [`peak_rss_mib`] covers what follows.
fn reset_peak_rss() {
    // not available everywhere (older kernels, other systems): then the
    // reported peak covers the whole process lifetime
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Peak resident set size of this process (`VmHWM`), in MiB.
fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

/// Times `iterations` decisions per size one by one and prints percentiles.
fn latency_report(quick: bool) {
    let specs = synthetic_pods();
    println!("agmarl decision latency, one thread (RAYON_NUM_THREADS=1, CANDLE_NUM_THREADS=1)");
    if quick {
        println!("(test mode: a few decisions per size, not a measurement)");
    }
    println!(
        "{:>6} {:>8} {:>10} {:>10} {:>10} {:>10} {:>14}",
        "nodes", "samples", "mean", "p50", "p99", "max", "peak RSS MiB"
    );
    for n in SIZES {
        reset_peak_rss();
        let nodes = synthetic_cluster(n, SEED);
        let v = view(&nodes);
        let mut scheduler = agmarl();
        let samples = if quick { 10 } else { (2_000_000 / n).clamp(1_000, 5_000) };
        for k in 0..(samples / 10).max(5) {
            black_box(scheduler.schedule(&pending(&specs[k % specs.len()]), &v));
        }
        let mut times: Vec<Duration> = (0..samples)
            .map(|k| {
                let p = pending(&specs[k % specs.len()]);
                let start = Instant::now();
                black_box(scheduler.schedule(&p, black_box(&v)));
                start.elapsed()
            })
            .collect();
        times.sort();
        let mean = times.iter().sum::<Duration>() / samples as u32;
        let ms = |d: Duration| format!("{:.3}ms", d.as_secs_f64() * 1e3);
        println!(
            "{:>6} {:>8} {:>10} {:>10} {:>10} {:>10} {:>14}",
            n,
            samples,
            ms(mean),
            ms(percentile(&times, 0.5)),
            ms(percentile(&times, 0.99)),
            ms(times[times.len() - 1]),
            peak_rss_mib().map_or("?".into(), |m| format!("{m:.1}")),
        );
    }
}

fn main() {
    let single = |var: &str| std::env::var(var).is_ok_and(|v| v == "1");
    if !(single("RAYON_NUM_THREADS") && single("CANDLE_NUM_THREADS")) {
        // the thread pools read these once at start-up: re-run with them set
        let exe = std::env::current_exe().expect("bench executable path");
        let status = std::process::Command::new(exe)
            .args(std::env::args_os().skip(1))
            .env("RAYON_NUM_THREADS", "1")
            .env("CANDLE_NUM_THREADS", "1")
            .status()
            .expect("re-running the bench single-threaded");
        std::process::exit(status.code().unwrap_or(1));
    }
    let args: Vec<String> = std::env::args().collect();
    // `cargo bench` passes --bench; without it (cargo test) criterion only
    // checks that each benchmark runs, and so does the latency loop
    let quick = !args.iter().any(|a| a == "--bench");
    let mut c = Criterion::default().configure_from_args();
    decisions(&mut c);
    c.final_summary();
    if !args.iter().any(|a| a == "--list") {
        latency_report(quick);
    }
}
