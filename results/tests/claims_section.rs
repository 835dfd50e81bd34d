//! The claims section rendered from small synthetic summaries in every
//! format the reports write: terminal, Markdown, LaTeX, HTML and JSON say the
//! same verdicts, the controls' beside the judged arm's, and the
//! pre-registration's date and digest; a summary.json gives the same table as
//! its summary.

#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use results::claims::{ClaimName, ClaimRole, ClaimUse, ClaimsTable, ScenarioValues, Verdict};
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

/// `default`, `binpack`, an `agmarl` that crashes more on every one of
/// eight seeds, and its untrained control that crashes as much.
fn summary(scenario: &str) -> Summary {
    let runs = (1..=8)
        .flat_map(|seed| {
            [
                run("default", seed, seed as u32 - 1),
                run("binpack", seed, seed as u32),
                run("agmarl", seed, seed as u32 + 12),
                run("agmarl-untrained", seed, seed as u32 + 12),
            ]
        })
        .collect();
    Summary::new(scenario, runs, 7)
}

fn declared(scenario: &str) -> Vec<ClaimUse> {
    let u = |claim, role| ClaimUse { claim, role };
    match scenario {
        "a" => vec![
            u(ClaimName::Restraint, ClaimRole::ChurnFaults),
            u(ClaimName::Pareto, ClaimRole::StressFaults),
        ],
        "b" => vec![
            u(ClaimName::Packing, ClaimRole::CascadingPressure),
            u(ClaimName::Pareto, ClaimRole::Stress),
            u(ClaimName::Decoupling, ClaimRole::VaryingRequests),
        ],
        _ => Vec::new(),
    }
}

fn values(scenario: &str) -> ScenarioValues {
    let mut v = ScenarioValues::from_summary(&summary(scenario), None).unwrap();
    v.uses = declared(scenario);
    v
}

fn table(scenarios: &[&str], arm: &str) -> ClaimsTable {
    let values: Vec<ScenarioValues> = scenarios.iter().map(|s| values(s)).collect();
    ClaimsTable::evaluate(&values, arm).unwrap()
}

#[test]
fn every_format_holds_the_section() {
    let t = table(&["a", "b"], "agmarl");
    assert_eq!(t.claims.len(), 5);
    let (term, md, tex, html, json) = (t.to_terminal(), t.to_markdown(), t.to_latex(), t.to_html(), t.to_json());
    assert!(term.starts_with("Claims\n"));
    assert!(md.starts_with("## Claims\n"));
    assert!(tex.contains("\\section*{Claims}") && tex.contains("\\toprule") && tex.contains("\\bottomrule"));
    assert!(html.starts_with("<h2 id=\"claims\">Claims</h2>") && html.contains("<table>"));
    assert!(!html.contains("<script"));
    let sha = &t.registration.sha256;
    for (name, text) in [("terminal", &term), ("markdown", &md), ("latex", &tex), ("html", &html)] {
        assert!(
            text.contains(sha.as_str()) && text.contains("2026-12-07"),
            "{name} lacks the pre-registration"
        );
        assert!(text.contains("agmarl-untrained"), "{name} lacks the control");
    }
    assert_eq!(json["preregistration"]["sha256"], sha.as_str());
    assert_eq!(json["preregistration"]["date"], "2026-12-07");
    for claim in &t.claims {
        let title = format!(
            "Claim {} ({}): {}",
            claim.spec.number, claim.spec.name, claim.spec.title
        );
        for (name, text) in [("terminal", &term), ("markdown", &md), ("latex", &tex), ("html", &html)] {
            assert!(text.contains(&title), "{name} lacks {title}");
        }
        let headline = claim.headline().unwrap().verdict;
        let j = &json["claims"][usize::from(claim.spec.number) - 1];
        assert_eq!(j["verdict"], headline.as_str());
        assert_eq!(j["verdicts"][0]["baseline"], "default");
        let line = format!("Verdict against `default`: {}", headline.as_str().to_uppercase());
        assert!(term.contains(&line) && md.contains(&line), "{line}");
        for row in claim.rows.iter() {
            assert!(md.contains(&format!("`{}`", row.spec.label())), "{}", row.spec.label());
        }
        // the control's verdict beside it, computed the same way: it crashes as much
        let control = t.controls[0].claim(claim.spec.number).unwrap();
        let c = &json["controls"][0]["claims"][usize::from(claim.spec.number) - 1];
        assert_eq!(c["verdict"], control.headline().unwrap().verdict.as_str());
        assert_eq!(control.headline().unwrap().verdict, headline);
    }
    assert_eq!(json["controls"][0]["arm"], "agmarl-untrained");
    // agmarl crashes more on every seed: a worse pareto_hv on both scenarios
    let claim4 = &json["claims"][3];
    let hv = claim4["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "pareto_hv" && r["scenario"] == "a")
        .unwrap();
    assert_eq!(hv["vs"][0]["outcome"], "worse");
    assert!(hv["vs"][0]["ci_high"].as_f64().unwrap() < 0.0);
    assert_eq!(hv["arm_values"]["unit"], "seed");
    assert_eq!(hv["arm_values"]["seeds"], 8);
    // the synthetic runs have no node faults: fault_cost_rate_cv is undefined, so not shown
    assert_eq!(claim4["verdict"], Verdict::NotShown.as_str());
    assert!(
        claim4["verdicts"][0]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("fault_cost_rate_cv"),
        "{claim4}"
    );
    // claim 3: the regime row, then the signed row and its size
    let c3 = &json["claims"][2];
    assert_eq!(c3["regime"][0]["arm"], "default");
    assert_eq!(c3["rows"][0]["metric"], "mem_failure_partial_pearson");
    assert_eq!(c3["rows"][0]["direction_from"], "claim");
    assert_eq!(c3["rows"][1]["absolute_value"], true);
    assert_eq!(c3["verdict"], "not shown");
    // claim 5 has no rows
    assert!(
        json["claims"][4]["verdicts"][0]["reasons"][0]
            .as_str()
            .unwrap()
            .contains("table D")
    );
    assert_eq!(json["holm_family_size"].as_u64(), Some(t.family_size() as u64));
    // deterministic
    assert_eq!(table(&["a", "b"], "agmarl").to_markdown(), md);
    assert_eq!(table(&["b", "a"], "agmarl").to_json(), json);
}

#[test]
fn a_summary_json_gives_the_table_of_its_summary() {
    let s = summary("a");
    let from_summary = ScenarioValues::from_summary(&s, None).unwrap();
    let from_json = ScenarioValues::from_summary_json(&s.to_json(), Vec::new()).unwrap();
    assert_eq!(from_summary, from_json);
    assert!(ScenarioValues::from_summary_json(&serde_json::json!({"scenario": "a"}), Vec::new()).is_err());
}

#[test]
fn another_arm_is_judged_the_same_way_and_undeclared_scenarios_say_nothing() {
    let t = table(&["a"], "binpack");
    assert_eq!(t.arm, "binpack");
    assert_eq!(t.claims[0].baselines, ["default"]);
    assert!(t.to_markdown().contains("binpack mean"));
    let none = table(&["mixed"], "agmarl");
    assert!(none.is_empty());
    assert_eq!(none.to_terminal(), "");
    assert_eq!(none.to_markdown(), "");
    assert_eq!(none.to_latex(), "");
    assert_eq!(none.to_html(), "");
    assert!(none.to_json().is_null());
}
