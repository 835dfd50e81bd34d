//! A bounded fuzz run of every target with a fixed seed, in the test suite:
//! a regression in a parser's handling of odd input shows up here without a
//! fuzzing campaign. (`cargo run --release -p schedlab-fuzz -- all` runs
//! the long campaign; see the book's "Fuzzing", docs/src/bad-input.md.)
//!
//! Counts are sized to keep the whole file at about 30 s in a debug build
//! on two cores (the targets run in parallel, one test each). Inputs run
//! in-process: a crash that kills the process fails the test run anyway.

use schedlab_fuzz::driver::{self, Options, Report};
use schedlab_fuzz::{Target, expr, kubeconfig, records, scenario};
use std::time::Duration;

const SEED: u64 = 12;

fn run<T: Target>(target: &mut T, inputs: u64) -> Report {
    let opts = Options {
        seed: SEED,
        start: 0,
        inputs,
        // a debug build is about ten times slower than the release build the
        // 1 s limit of the campaign is meant for
        time_limit: Duration::from_secs(10),
        out_failures: None,
    };
    let report = driver::run(target, &opts, &mut |_| {});
    assert_eq!(report.tried, inputs);
    let failures: Vec<String> = report
        .failures
        .iter()
        .map(|f| {
            format!(
                "input {} {}: {}",
                f.index,
                f.kind.as_str(),
                schedlab_fuzz::oracle::short(&f.message)
            )
        })
        .collect();
    assert!(failures.is_empty(), "{}:\n{}", report.line(), failures.join("\n"));
    report
}

/// Enough inputs of each kind got past the parser to the checks behind it,
/// and enough were refused: the generators still resemble their formats.
fn assert_mixed(r: &Report) {
    assert!(r.accepted * 20 > r.tried, "too few accepted: {}", r.line());
    assert!(r.rejected * 4 > r.tried, "too few rejected: {}", r.line());
}

#[test]
fn scenarios() {
    let r = run(&mut scenario::Scenario::new().unwrap(), 1000);
    assert_mixed(&r);
}

#[test]
fn expressions() {
    let r = run(&mut expr::Expr::default(), 2000);
    assert_mixed(&r);
}

#[test]
fn kubeconfigs() {
    let r = run(&mut kubeconfig::Kubeconfig::new().unwrap(), 500);
    assert_mixed(&r);
}

#[test]
fn records_files() {
    let r = run(&mut records::Records::new().unwrap(), 400);
    assert_mixed(&r);
}
