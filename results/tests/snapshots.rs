//! Snapshot tests of the tables that users paste into papers, from fixed
//! hand-written records. The outputs carry no times or paths (nothing to
//! redact): a changed snapshot is a changed table. Review with
//! `cargo insta review` (or INSTA_UPDATE=always, then read the diff).

mod common;

use common::*;
use results::summary::{RunResult, Summary};

fn run(arm: &str, seed: u64, crashes: u32) -> RunResult {
    RunResult {
        arm: arm.to_string(),
        seed,
        training_run: None,
        metrics: metrics_of(&synthetic_run(seed, crashes)).expect("synthetic runs are consistent"),
        correlations: None,
    }
}

/// Three arms: `default` and an arm that restarts more on every one of eight
/// seeds (enough for a difference to survive Holm over every metric), and
/// one whose name needs escaping that runs the hand-computed run once.
fn three_arms() -> Vec<RunResult> {
    let mut runs: Vec<RunResult> = (1..=8)
        .flat_map(|seed| {
            [
                run("default", seed, seed as u32 - 1),
                run("bin_pack", seed, seed as u32 + 12),
            ]
        })
        .collect();
    runs.push(RunResult {
        arm: "spread&50%".into(),
        seed: 1,
        training_run: None,
        metrics: metrics_of(&hand_run()).expect("the hand run is consistent"),
        correlations: None,
    });
    runs
}

#[test]
fn markdown_tables() {
    let s = Summary::new("churn_small", three_arms(), 42);
    insta::assert_snapshot!("markdown", s.to_markdown());
}

#[test]
fn latex_table() {
    let s = Summary::new("churn_small", three_arms(), 42);
    insta::assert_snapshot!("latex", s.to_latex());
}

#[test]
fn terminal_table() {
    let s = Summary::new("churn_small", three_arms(), 42);
    insta::assert_snapshot!("terminal", s.to_terminal_table());
}

#[test]
fn terminal_brief() {
    let s = Summary::new("churn_small", three_arms(), 42);
    let text = s.to_terminal_brief("All metrics: report.md, or --all-metrics");
    for line in text.lines() {
        assert!(line.chars().count() <= results::summary::MAX_WIDTH, "{line}");
    }
    insta::assert_snapshot!("brief", text);
}

#[test]
fn the_brief_wraps_many_arms_and_keeps_its_headline_short() {
    let names = [
        "default",
        "binpack",
        "cost-binpack",
        "target-load",
        "load-aware",
        "random",
        "agmarl",
        "agmarl-untrained",
        "agmarl-analytic",
        "agmarl-nognn",
        "agmarl-linear",
        "agmarl-nostress",
    ];
    let runs: Vec<RunResult> = names
        .iter()
        .enumerate()
        .flat_map(|(k, name)| (1..=8).map(move |seed| run(name, seed, seed as u32 + 3 * k as u32)))
        .collect();
    let s = Summary::new("churn_small", runs, 42);
    assert!(s.brief_headline().len() <= results::summary::MAX_HEADLINE);
    let tables = s.key_tables();
    assert!(tables.len() >= 2, "twelve arms do not fit one table of 120 columns");
    for table in &tables {
        for line in table.lines() {
            assert!(line.chars().count() <= results::summary::MAX_WIDTH, "{line}");
        }
    }
    // every arm is in exactly one table
    for name in names {
        let shown = tables.iter().filter(|t| t.contains(&format!(" {name} "))).count()
            + tables.iter().filter(|t| t.contains(&format!(" {name} (ref)"))).count();
        assert!(shown >= 1, "{name}");
    }
}
