//! The claims section rendered from small synthetic summaries in every
//! format the reports write: terminal, Markdown, LaTeX, HTML and JSON say the
//! same verdicts, and a summary.json gives the same table as its summary.

#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use results::claims::{ClaimsTable, ScenarioValues, Verdict};
use results::summary::{RunResult, Summary};

fn run(arm: &str, seed: u64, crashes: u32) -> RunResult {
    RunResult {
        arm: arm.to_string(),
        seed,
        training_run: None,
        metrics: metrics_of(&synthetic_run(seed, crashes)).expect("synthetic runs are consistent"),
    }
}

/// `default`, `binpack` and an `agmarl` that crashes more on every one of
/// eight seeds.
fn summary(scenario: &str) -> Summary {
    let runs = (1..=8)
        .flat_map(|seed| {
            [
                run("default", seed, seed as u32 - 1),
                run("binpack", seed, seed as u32),
                run("agmarl", seed, seed as u32 + 12),
            ]
        })
        .collect();
    Summary::new(scenario, runs, 7)
}

fn table(scenarios: &[&str], arm: &str) -> ClaimsTable {
    let values: Vec<ScenarioValues> = scenarios
        .iter()
        .map(|s| ScenarioValues::from_summary(&summary(s), None).unwrap())
        .collect();
    ClaimsTable::evaluate(&values, arm).unwrap()
}

#[test]
fn every_format_holds_the_section() {
    let t = table(&["churn", "pressure"], "agmarl");
    assert_eq!(t.claims.len(), 4);
    let (term, md, tex, html, json) = (t.to_terminal(), t.to_markdown(), t.to_latex(), t.to_html(), t.to_json());
    assert!(term.starts_with("Claims\n"));
    assert!(md.starts_with("## Claims\n"));
    assert!(tex.contains("\\section*{Claims}") && tex.contains("\\toprule") && tex.contains("\\bottomrule"));
    assert!(html.starts_with("<h2 id=\"claims\">Claims</h2>") && html.contains("<table>"));
    assert!(!html.contains("<script"));
    for claim in &t.claims {
        let title = format!("Claim {}: {}", claim.spec.number, claim.spec.title);
        for (name, text) in [("terminal", &term), ("markdown", &md), ("latex", &tex), ("html", &html)] {
            assert!(text.contains(&title), "{name} lacks {title}");
        }
        let headline = claim.headline().unwrap().verdict;
        let j = &json["claims"][usize::from(claim.spec.number) - 1];
        assert_eq!(j["verdict"], headline.as_str());
        assert_eq!(j["verdicts"][0]["baseline"], "default");
        assert_eq!(j["verdicts"][1]["baseline"], "binpack");
        let line = format!("Verdict against `default`: {}", headline.as_str().to_uppercase());
        assert!(term.contains(&line) && md.contains(&line), "{line}");
        for row in claim.rows.iter() {
            assert!(md.contains(&format!("`{}`", row.spec.label())), "{}", row.spec.label());
        }
    }
    // agmarl crashes more on every seed: worse on restarts and failures of both scenarios
    let claim4 = &json["claims"][3];
    let restarts = claim4["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "restarts" && r["scenario"] == "churn")
        .unwrap();
    assert_eq!(restarts["vs"][0]["outcome"], "worse");
    assert!(restarts["vs"][0]["diff_of_means"].as_f64().unwrap() > 0.0);
    assert!(restarts["vs"][0]["ci_low"].as_f64().unwrap() > 0.0);
    // the synthetic runs have no node faults: the cost swing under faults is undefined, so not shown
    assert_eq!(claim4["verdict"], Verdict::NotShown.as_str());
    assert!(
        claim4["verdicts"][0]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("fault_cost_rate_cv"),
        "{claim4}"
    );
    // claim 3 shows both arms' own mean Pearson
    let pearson = &json["claims"][2]["rows"][0];
    assert_eq!(pearson["metric"], "mem_failure_pearson");
    assert_eq!(pearson["direction_from"], "claim");
    assert!(pearson["arm_values"]["mean"].is_number() || pearson["arm_values"].is_null());
    assert_eq!(json["holm_family_size"].as_u64(), Some(t.family_size as u64));
    // deterministic
    assert_eq!(table(&["churn", "pressure"], "agmarl").to_markdown(), md);
    assert_eq!(table(&["pressure", "churn"], "agmarl").to_json(), json);
}

#[test]
fn a_summary_json_gives_the_table_of_its_summary() {
    let s = summary("churn");
    let from_summary = ScenarioValues::from_summary(&s, None).unwrap();
    let from_json = ScenarioValues::from_summary_json(&s.to_json()).unwrap();
    assert_eq!(from_summary, from_json);
    assert!(ScenarioValues::from_summary_json(&serde_json::json!({"scenario": "churn"})).is_err());
}

#[test]
fn another_arm_is_judged_the_same_way_and_other_scenarios_say_nothing() {
    let t = table(&["churn"], "binpack");
    assert_eq!(t.arm, "binpack");
    assert_eq!(t.claims[0].baselines, ["default"]);
    assert!(t.to_markdown().contains("`binpack` mean") || t.to_markdown().contains("binpack mean"));
    let none = table(&["mixed"], "agmarl");
    assert!(none.is_empty());
    assert_eq!(none.to_terminal(), "");
    assert_eq!(none.to_markdown(), "");
    assert_eq!(none.to_latex(), "");
    assert_eq!(none.to_html(), "");
    assert!(none.to_json().is_null());
}
