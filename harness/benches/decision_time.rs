//! Decision time per arm on the path a `schedlab scenario` run takes: the
//! built-in `churn` scenario played by the simulator at 100, 1,000 and 5,000
//! nodes, each decision timed by the simulator around the policy call (the
//! `decision_times.json` of a run folder), with the bundled checkpoint for
//! `agmarl`. A static cluster would measure a best case (nothing changes
//! between decisions, so nothing needs recomputing); the simulator's
//! cluster changes as it does in a run. The records go to a JSON Lines file
//! through the run's own writer, as in a run: serialising them between
//! decisions takes the caches the decisions would otherwise keep warm.
//!
//! Prints, per size and arm, the decisions, the run's wall time and the
//! decision time p50 / p99 / max. The numeric kernels run on one thread, as
//! in `schedlab scenario`: when `RAYON_NUM_THREADS` is not 1 the bench
//! re-executes itself with `RAYON_NUM_THREADS=1 CANDLE_NUM_THREADS=1`.
//!
//! ```text
//! cargo bench -p harness --bench decision_time            # 35 simulated minutes per run
//! SCHEDLAB_BENCH_SIZES=1000 cargo bench -p harness --bench decision_time
//! SCHEDLAB_BENCH_SEEDS=5 SCHEDLAB_BENCH_SIZES=100 cargo bench -p harness --bench decision_time
//! ```
//!
//! With `SCHEDLAB_BENCH_SEEDS=K` it plays seeds 1..=K and prints, after the
//! rows of the seeds, their mean p50 and p99: what a report of
//! `schedlab scenario churn --seeds K` gives as `decision_time_p50_ms` and
//! `decision_time_p99_ms`. At 100 nodes a run makes about 9,000 decisions
//! of hundredths of a millisecond, so one seed's p99 (its 90 slowest) moves
//! by a quarter from run to run; the mean over seeds is the comparable
//! number.
//!
//! Without `--bench` (as `cargo test --benches` runs it) every run is cut to
//! two simulated minutes on small sizes: a check that the bench works, not a
//! measurement.

use schedlab_core::behaviour::ModelConfig;
use schedlab_core::sim::Sim;
use std::time::Instant;

const SIZES: [usize; 3] = [100, 1_000, 5_000];
const ARMS: [&str; 2] = ["default", "agmarl"];

fn sizes(quick: bool) -> Vec<usize> {
    if quick {
        return vec![20, 100];
    }
    match std::env::var("SCHEDLAB_BENCH_SIZES") {
        Ok(list) => list
            .split(',')
            .map(|s| match s.trim().parse() {
                Ok(n) => n,
                Err(_) => {
                    eprintln!("SCHEDLAB_BENCH_SIZES: {s:?} is not a node count");
                    std::process::exit(2);
                }
            })
            .collect(),
        Err(_) => SIZES.to_vec(),
    }
}

fn seeds() -> u64 {
    match std::env::var("SCHEDLAB_BENCH_SEEDS") {
        Ok(k) => match k.trim().parse() {
            Ok(k) if k >= 1 => k,
            _ => {
                eprintln!("SCHEDLAB_BENCH_SEEDS: {k:?} is not a seed count of at least 1");
                std::process::exit(2);
            }
        },
        Err(_) => 1,
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
    if args.iter().any(|a| a == "--list") {
        println!("decision_time: bench");
        return;
    }
    let quick = !args.iter().any(|a| a == "--bench");
    println!("decision time in simulator runs of `churn`, one thread");
    if quick {
        println!("(test mode: two simulated minutes, small sizes; not a measurement)");
    }
    println!(
        "{:>6} {:>8} {:>9} {:>9} {:>10} {:>10} {:>10}",
        "nodes", "arm", "decisions", "wall", "p50", "p99", "max"
    );
    for n in sizes(quick) {
        let mut overrides = vec![format!("nodes={n}")];
        if quick {
            overrides.push("duration=2m".into());
        }
        let scenario = match workloads::load("churn", &overrides) {
            Ok(s) => s,
            Err(e) => panic!("the built-in churn scenario at {n} nodes: {e}"),
        };
        for arm in ARMS {
            let (mut p50s, mut p99s) = (Vec::new(), Vec::new());
            for seed in 1..=seeds() {
                let (p50, p99) = play(&scenario, n, arm, seed);
                p50s.push(p50);
                p99s.push(p99);
            }
            if p50s.len() > 1 {
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
                println!(
                    "{:>6} {:>8} {:>9} {:>9} {:>9.3}ms {:>9.3}ms {:>10}",
                    n,
                    arm,
                    "mean",
                    "",
                    mean(&p50s),
                    mean(&p99s),
                    ""
                );
            }
        }
    }
}

/// Plays one seed of `scenario` with `arm`, prints its row and returns its
/// decision time p50 and p99 in milliseconds.
fn play(scenario: &workloads::Scenario, n: usize, arm: &str, seed: u64) -> (f64, f64) {
    let mut sim = match Sim::new(scenario.expand(seed), seed, ModelConfig::default()) {
        Ok(sim) => sim,
        Err(e) => panic!("churn at {n} nodes: {e}"),
    };
    let mut policy = match scheduler::arm(arm, seed) {
        Ok(p) => p,
        Err(e) => panic!("arm {arm}: {e}"),
    };
    let mut placer =
        |pod: &schedlab_core::PendingPod<'_>, view: &schedlab_core::ClusterView<'_>| policy.schedule(pod, view);
    let dir = tempfile::tempdir().expect("a temporary folder for the records");
    let mut sink = match results::records::JsonlSink::create(&dir.path().join("records.jsonl")) {
        Ok(sink) => sink,
        Err(e) => panic!("records file: {e}"),
    };
    let start = Instant::now();
    let end = sim.end();
    sim.run_until(end, &mut placer, &mut sink);
    let wall = start.elapsed();
    if let Err(e) = sink.finish() {
        panic!("records file: {e}");
    }
    let h = sim.decision_times();
    let ms = |ns: u64| ns as f64 / 1e6;
    println!(
        "{:>6} {:>8} {:>9} {:>8.1}s {:>9.3}ms {:>9.3}ms {:>9.3}ms  seed {seed}",
        n,
        arm,
        h.len(),
        wall.as_secs_f64(),
        ms(h.value_at_quantile(0.5)),
        ms(h.value_at_quantile(0.99)),
        ms(h.max()),
    );
    (ms(h.value_at_quantile(0.5)), ms(h.value_at_quantile(0.99)))
}
