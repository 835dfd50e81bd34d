//! The claims table: every row of every claim whose scenario is among the
//! inputs, tested against every baseline, Holm-adjusted as one family, and
//! judged by [`super::VERDICT_RULE`].

use super::ClaimsError;
use super::effect::{Effect, Side, effect};
use super::input::ScenarioValues;
use super::mapping::{BASELINES, CLAIMS, ClaimSpec, HEADLINE_BASELINE, Role, RowSpec};
use super::verdict::{Outcome, Verdict, verdict};
use crate::definitions::Better;
use crate::stats::{ALPHA, BOOTSTRAP_RESAMPLES, holm};
use crate::summary::key_hash;
use schedlab_core::rng::{purpose, stream};

/// The key of the claims' random streams after [`purpose::STATISTICS`]
/// (the summary's own streams use 1 to 4).
const STREAM_CLAIMS: u64 = 5;

/// One row against one baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub baseline: String,
    /// the baseline's mean; `None` when it is missing or no run of it
    /// defines the metric
    pub baseline_side: Option<Side>,
    pub effect: Option<Effect>,
    /// Holm-adjusted over the whole table's family; 1 for a tied test
    pub p_holm: Option<f64>,
    pub outcome: Outcome,
    /// why the row is undefined against this baseline
    pub missing: Option<String>,
}

/// One metric of a claim on one of its scenarios.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub scenario: &'static str,
    pub spec: &'static RowSpec,
    pub better: Better,
    /// the judged arm's mean; `None` when it is missing or no run of it
    /// defines the metric
    pub arm_side: Option<Side>,
    /// parallel to [`ClaimResult::baselines`]
    pub cells: Vec<Cell>,
}

/// A claim's verdict against one baseline, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct BaselineVerdict {
    pub baseline: String,
    pub verdict: Verdict,
    pub reasons: Vec<String>,
}

/// One claim, judged.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimResult {
    pub spec: &'static ClaimSpec,
    /// `default` (unless it is the judged arm), then the other baselines that
    /// some scenario of the claim has, in [`BASELINES`] order
    pub baselines: Vec<String>,
    /// per scenario of the claim (present or not), per metric
    pub rows: Vec<Row>,
    /// parallel to `baselines`
    pub verdicts: Vec<BaselineVerdict>,
}

impl ClaimResult {
    /// The claim's verdict: the one against `default`.
    pub fn headline(&self) -> Option<&BaselineVerdict> {
        self.verdicts.iter().find(|v| v.baseline == HEADLINE_BASELINE)
    }
    /// The verdicts against the other baselines.
    pub fn others(&self) -> impl Iterator<Item = &BaselineVerdict> {
        self.verdicts.iter().filter(|v| v.baseline != HEADLINE_BASELINE)
    }
}

/// What the table says about a scenario it was computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioFacts {
    pub scenario: String,
    pub stats_seed: u64,
    pub incomplete: Option<String>,
    pub arms: Vec<String>,
}

/// Every claim with a scenario among the inputs.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimsTable {
    /// the judged arm
    pub arm: String,
    /// the inputs that some claim is tested on, by name
    pub scenarios: Vec<ScenarioFacts>,
    pub claims: Vec<ClaimResult>,
    /// the tests in the Holm family: defined and not tied
    pub family_size: usize,
}

impl ClaimsTable {
    /// No claim's scenario among the inputs: reports then say nothing.
    pub fn is_empty(&self) -> bool {
        self.claims.is_empty()
    }
}

fn code(s: &str) -> String {
    format!("`{s}`")
}

/// Why `row` of `scenario` cannot be tested against `baseline`, if it cannot.
fn missing(input: Option<&ScenarioValues>, scenario: &str, arm: &str, baseline: &str, metric: &str) -> Option<String> {
    let Some(input) = input else {
        return Some(format!("no run folder of scenario {}", code(scenario)));
    };
    for side in [arm, baseline] {
        match input.arm(side) {
            None => return Some(format!("{} is not an arm of {}", code(side), code(scenario))),
            Some(a) => {
                let values: Vec<Option<f64>> = a
                    .metrics
                    .get(metric)
                    .map(|v| v.iter().map(|(_, x)| *x).collect())
                    .unwrap_or_default();
                if Side::of(&values).is_none() {
                    return Some(format!(
                        "no run of {} defines {} in {}",
                        code(side),
                        code(metric),
                        code(scenario)
                    ));
                }
            }
        }
    }
    None
}

fn side_of(input: Option<&ScenarioValues>, arm: &str, row: &RowSpec) -> Option<Side> {
    let values: Vec<Option<f64>> = input?
        .arm(arm)?
        .metrics
        .get(row.metric)?
        .iter()
        .map(|(_, x)| x.map(|x| row.value(x)))
        .collect();
    Side::of(&values)
}

fn defined(input: &ScenarioValues, arm: &str, row: &RowSpec) -> Vec<f64> {
    input
        .arm(arm)
        .and_then(|a| a.metrics.get(row.metric))
        .map(|v| v.iter().filter_map(|(_, x)| x.map(|x| row.value(x))).collect())
        .unwrap_or_default()
}

fn outcome(effect: Option<&Effect>, p_holm: Option<f64>, better: Better) -> Outcome {
    let (Some(e), Some(p)) = (effect, p_holm) else {
        return Outcome::Undefined;
    };
    if p >= ALPHA || e.cliffs_delta == 0.0 {
        return Outcome::NoDifference;
    }
    match (better, e.cliffs_delta < 0.0) {
        (Better::Lower, true) | (Better::Higher, false) => Outcome::Better,
        (Better::Lower, false) | (Better::Higher, true) => Outcome::Worse,
        (Better::Neither, _) => Outcome::NoDifference,
    }
}

fn reasons(claim: &ClaimResult, column: usize, verdict: Verdict) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    fn push(out: &mut Vec<String>, s: String) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    for row in &claim.rows {
        if let Some(why) = &row.cells[column].missing {
            push(&mut out, why.clone());
        }
    }
    if !out.is_empty() {
        return out;
    }
    for want in [Outcome::Better, Outcome::Worse] {
        let rows: Vec<String> = claim
            .rows
            .iter()
            .filter(|r| r.cells[column].outcome == want)
            .map(|r| {
                format!(
                    "{} {} on {}",
                    r.spec.role.as_str(),
                    code(&r.spec.label()),
                    code(r.scenario)
                )
            })
            .collect();
        if !rows.is_empty() {
            push(
                &mut out,
                format!("significantly {}: {}", want.as_str(), rows.join(", ")),
            );
        }
    }
    if out.is_empty() && verdict == Verdict::NotShown {
        push(&mut out, "no row differs significantly".to_string());
    }
    out
}

impl ClaimsTable {
    /// Tests `arm` against each baseline on every row of every claim that has
    /// a scenario among `inputs`. The bootstrap of a row against a baseline
    /// draws from a stream of its scenario's statistics seed keyed by the
    /// metric, the baseline and the arm, so the table is the same for the same
    /// inputs in any order.
    pub fn evaluate(inputs: &[ScenarioValues], arm: &str) -> Result<ClaimsTable, ClaimsError> {
        if arm.trim().is_empty() {
            return Err(ClaimsError::EmptyArm);
        }
        for (i, s) in inputs.iter().enumerate() {
            if inputs[..i].iter().any(|t| t.scenario == s.scenario) {
                return Err(ClaimsError::DuplicateScenario {
                    scenario: s.scenario.clone(),
                });
            }
        }
        let find = |name: &str| inputs.iter().find(|s| s.scenario == name);
        let mut claims = Vec::new();
        for spec in CLAIMS {
            let present: Vec<&ScenarioValues> = spec.scenarios.iter().filter_map(|s| find(s)).collect();
            if present.is_empty() {
                continue;
            }
            let baselines: Vec<String> = BASELINES
                .iter()
                .filter(|b| **b != arm && (**b == HEADLINE_BASELINE || present.iter().any(|s| s.arm(b).is_some())))
                .map(|b| b.to_string())
                .collect();
            let mut rows = Vec::new();
            for &scenario in spec.scenarios {
                let input = find(scenario);
                for row in spec.rows.iter().filter(|r| r.applies_to(scenario)) {
                    let better = row.better()?;
                    let cells = baselines
                        .iter()
                        .map(|b| {
                            let why = missing(input, scenario, arm, b, row.metric);
                            let effect = match (input, &why) {
                                (Some(input), None) => {
                                    let mut rng = stream(
                                        input.stats_seed,
                                        &[
                                            purpose::STATISTICS,
                                            STREAM_CLAIMS,
                                            key_hash(row.metric),
                                            key_hash(b),
                                            key_hash(arm),
                                        ],
                                    );
                                    effect(
                                        &defined(input, arm, row),
                                        &defined(input, b, row),
                                        BOOTSTRAP_RESAMPLES,
                                        &mut rng,
                                    )
                                }
                                _ => None,
                            };
                            Cell {
                                baseline: b.clone(),
                                baseline_side: side_of(input, b, row),
                                missing: why.or_else(|| {
                                    effect
                                        .is_none()
                                        .then(|| format!("{} cannot be tested", code(row.metric)))
                                }),
                                effect,
                                p_holm: None,
                                outcome: Outcome::Undefined,
                            }
                        })
                        .collect();
                    rows.push(Row {
                        scenario,
                        spec: row,
                        better,
                        arm_side: side_of(input, arm, row),
                        cells,
                    });
                }
            }
            claims.push(ClaimResult {
                spec,
                baselines,
                rows,
                verdicts: Vec::new(),
            });
        }

        // Holm over every test of the table: one family
        let cells = || claims.iter().flat_map(|c| &c.rows).flat_map(|r| &r.cells);
        let p: Vec<Option<f64>> = cells()
            .map(|c| c.effect.filter(|e| !e.tied).map(|e| e.test.p))
            .collect();
        let family_size = p.iter().flatten().count();
        let mut adjusted = holm(&p).into_iter();
        for claim in &mut claims {
            for row in &mut claim.rows {
                for cell in &mut row.cells {
                    let adj = adjusted.next().flatten();
                    cell.p_holm = cell.effect.map(|e| if e.tied { 1.0 } else { adj.unwrap_or(1.0) });
                    cell.outcome = outcome(cell.effect.as_ref(), cell.p_holm, row.better);
                }
            }
            for column in 0..claim.baselines.len() {
                let outcomes: Vec<(Role, Outcome)> = claim
                    .rows
                    .iter()
                    .map(|r| (r.spec.role, r.cells[column].outcome))
                    .collect();
                let v = verdict(&outcomes);
                let why = reasons(claim, column, v);
                claim.verdicts.push(BaselineVerdict {
                    baseline: claim.baselines[column].clone(),
                    verdict: v,
                    reasons: why,
                });
            }
        }

        let used: Vec<&str> = CLAIMS
            .iter()
            .filter(|c| claims.iter().any(|r| r.spec.number == c.number))
            .flat_map(|c| c.scenarios.iter().copied())
            .collect();
        let mut scenarios: Vec<ScenarioFacts> = inputs
            .iter()
            .filter(|s| used.contains(&s.scenario.as_str()))
            .map(|s| ScenarioFacts {
                scenario: s.scenario.clone(),
                stats_seed: s.stats_seed,
                incomplete: s.incomplete.clone(),
                arms: s.arms.iter().map(|a| a.arm.clone()).collect(),
            })
            .collect();
        scenarios.sort_by(|a, b| a.scenario.cmp(&b.scenario));
        Ok(ClaimsTable {
            arm: arm.to_string(),
            scenarios,
            claims,
            family_size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::input::ArmValues;
    use std::collections::BTreeMap;

    /// Every metric of every claim equal to 1 on every seed (tied: never
    /// significant), except the `(metric, values)` given.
    fn arm(name: &str, seeds: usize, set: &[(&str, &[Option<f64>])]) -> ArmValues {
        let mut metrics = BTreeMap::new();
        for row in CLAIMS.iter().flat_map(|c| c.rows) {
            let values = (1..=seeds as u64).map(|s| (s, Some(1.0))).collect();
            metrics.insert(row.metric.to_string(), values);
        }
        for (metric, values) in set {
            let v = values.iter().enumerate().map(|(i, x)| (i as u64 + 1, *x)).collect();
            metrics.insert(metric.to_string(), v);
        }
        ArmValues {
            arm: name.to_string(),
            metrics,
        }
    }

    fn scenario(name: &str, arms: Vec<ArmValues>) -> ScenarioValues {
        ScenarioValues {
            scenario: name.to_string(),
            stats_seed: 42,
            incomplete: None,
            arms,
        }
    }

    fn some(v: &[f64]) -> Vec<Option<f64>> {
        v.iter().map(|x| Some(*x)).collect()
    }

    const LOW: [f64; 8] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    const HIGH: [f64; 8] = [11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0];

    fn claim(table: &ClaimsTable, n: u8) -> &ClaimResult {
        table.claims.iter().find(|c| c.spec.number == n).unwrap()
    }

    fn headline(table: &ClaimsTable, n: u8) -> (Verdict, String) {
        let v = claim(table, n).headline().unwrap();
        (v.verdict, v.reasons.join("; "))
    }

    /// Pressure with `default` and an `agmarl` whose nodes in use and failure
    /// rate are as given.
    fn pressure(nodes: &[f64], failure_rate: &[f64]) -> ScenarioValues {
        scenario(
            "pressure",
            vec![
                arm(
                    "default",
                    8,
                    &[("nodes_in_use_mean", &some(&HIGH)), ("failure_rate", &some(&[5.0; 8]))],
                ),
                arm(
                    "agmarl",
                    8,
                    &[
                        ("nodes_in_use_mean", &some(nodes)),
                        ("failure_rate", &some(failure_rate)),
                    ],
                ),
            ],
        )
    }

    #[test]
    fn supported_when_better_on_every_primary_row_and_worse_on_none() {
        let t = ClaimsTable::evaluate(&[pressure(&LOW, &[5.0; 8])], "agmarl").unwrap();
        assert_eq!(headline(&t, 1).0, Verdict::Supported, "{:?}", headline(&t, 1));
        assert!(headline(&t, 1).1.contains("better: primary `nodes_in_use_mean`"));
        let row = &claim(&t, 1).rows[0];
        let cell = &row.cells[0];
        assert_eq!(cell.outcome, Outcome::Better);
        assert_eq!(cell.effect.unwrap().diff, -10.0);
        assert_eq!(row.arm_side.unwrap().mean, 4.5);
        assert_eq!(cell.baseline_side.unwrap().mean, 14.5);
        // better on the guard too is still supported
        let t = ClaimsTable::evaluate(&[pressure(&LOW, &[1.0; 8])], "agmarl").unwrap();
        assert_eq!(headline(&t, 1).0, Verdict::Supported);
    }

    #[test]
    fn a_worse_guard_or_an_insignificant_primary_is_not_shown() {
        let t = ClaimsTable::evaluate(&[pressure(&LOW, &[9.0; 8])], "agmarl").unwrap();
        let (v, why) = headline(&t, 1);
        assert_eq!(v, Verdict::NotShown);
        assert!(why.contains("worse: guard `failure_rate`"), "{why}");
        let t = ClaimsTable::evaluate(&[pressure(&HIGH, &[5.0; 8])], "agmarl").unwrap();
        let (v, why) = headline(&t, 1);
        assert_eq!(v, Verdict::NotShown);
        assert!(why.contains("no row differs significantly"), "{why}");
    }

    #[test]
    fn contradicted_when_worse_on_a_primary_row_and_better_on_none() {
        let worse: Vec<f64> = HIGH.iter().map(|x| x + 10.0).collect();
        let t = ClaimsTable::evaluate(&[pressure(&worse, &[5.0; 8])], "agmarl").unwrap();
        assert_eq!(headline(&t, 1).0, Verdict::Contradicted, "{:?}", headline(&t, 1));
        // better on the guard: mixed, not shown
        let t = ClaimsTable::evaluate(&[pressure(&worse, &[1.0; 8])], "agmarl").unwrap();
        assert_eq!(headline(&t, 1).0, Verdict::NotShown);
    }

    #[test]
    fn a_missing_scenario_arm_or_undefined_metric_is_not_shown_and_says_why() {
        // only pressure: claims 1, 3 and 4 apply (3 and 4 also need churn), claim 2 not at all
        let t = ClaimsTable::evaluate(&[pressure(&LOW, &[5.0; 8])], "agmarl").unwrap();
        let numbers: Vec<u8> = t.claims.iter().map(|c| c.spec.number).collect();
        assert_eq!(numbers, [1, 3, 4]);
        for n in [3, 4] {
            let (v, why) = headline(&t, n);
            assert_eq!(v, Verdict::NotShown);
            assert!(why.contains("no run folder of scenario `churn`"), "{why}");
        }
        // the arm is missing
        let mut s = pressure(&LOW, &[5.0; 8]);
        s.arms.retain(|a| a.arm != "agmarl");
        let t = ClaimsTable::evaluate(&[s], "agmarl").unwrap();
        let (v, why) = headline(&t, 1);
        assert_eq!(v, Verdict::NotShown);
        assert!(why.contains("`agmarl` is not an arm of `pressure`"), "{why}");
        // default is missing: its verdict is still there, not shown
        let mut s = pressure(&LOW, &[5.0; 8]);
        s.arms[0].arm = "binpack".into();
        let t = ClaimsTable::evaluate(&[s], "agmarl").unwrap();
        assert_eq!(claim(&t, 1).baselines, ["default", "binpack"]);
        let (v, why) = headline(&t, 1);
        assert_eq!(v, Verdict::NotShown);
        assert!(why.contains("`default` is not an arm of `pressure`"), "{why}");
        assert_eq!(claim(&t, 1).verdicts[1].verdict, Verdict::Supported);
        // no run of the arm defines a primary metric
        let s = scenario(
            "pressure",
            vec![
                arm("default", 8, &[("nodes_in_use_mean", &some(&HIGH))]),
                arm("agmarl", 8, &[("nodes_in_use_mean", &[None; 8])]),
            ],
        );
        let t = ClaimsTable::evaluate(&[s], "agmarl").unwrap();
        let (v, why) = headline(&t, 1);
        assert_eq!(v, Verdict::NotShown);
        assert!(
            why.contains("no run of `agmarl` defines `nodes_in_use_mean` in `pressure`"),
            "{why}"
        );
        assert_eq!(claim(&t, 1).rows[0].cells[0].outcome, Outcome::Undefined);
        // an undefined guard leaves it not shown too
        let s = scenario(
            "pressure",
            vec![
                arm(
                    "default",
                    8,
                    &[("nodes_in_use_mean", &some(&HIGH)), ("failure_rate", &[None; 8])],
                ),
                arm("agmarl", 8, &[("nodes_in_use_mean", &some(&LOW))]),
            ],
        );
        let t = ClaimsTable::evaluate(&[s], "agmarl").unwrap();
        assert_eq!(headline(&t, 1).0, Verdict::NotShown);
    }

    #[test]
    fn holm_runs_over_the_whole_table() {
        // 4 runs a side, all apart: p = 2/70 each, significant alone
        let (low, high) = (some(&[1.0, 2.0, 3.0, 4.0]), some(&[11.0, 12.0, 13.0, 14.0]));
        let alone = scenario(
            "pressure",
            vec![
                arm("default", 4, &[("nodes_in_use_mean", &high)]),
                arm("agmarl", 4, &[("nodes_in_use_mean", &low)]),
            ],
        );
        let t = ClaimsTable::evaluate(&[alone], "agmarl").unwrap();
        assert_eq!(t.family_size, 1, "tied tests are not in the family");
        let cell = &claim(&t, 1).rows[0].cells[0];
        assert!((cell.p_holm.unwrap() - 2.0 / 70.0).abs() < 1e-12);
        assert_eq!(headline(&t, 1).0, Verdict::Supported);
        // a second such test in another claim and scenario doubles it past 0.05
        let pressure = scenario(
            "pressure",
            vec![
                arm("default", 4, &[("nodes_in_use_mean", &high)]),
                arm("agmarl", 4, &[("nodes_in_use_mean", &low)]),
            ],
        );
        let churn = scenario(
            "churn",
            vec![
                arm("default", 4, &[("oom_pressure_events", &high)]),
                arm("agmarl", 4, &[("oom_pressure_events", &low)]),
            ],
        );
        let t = ClaimsTable::evaluate(&[pressure, churn], "agmarl").unwrap();
        assert_eq!(t.family_size, 2);
        let cell = &claim(&t, 1).rows[0].cells[0];
        assert!((cell.effect.unwrap().test.p - 2.0 / 70.0).abs() < 1e-12);
        assert!((cell.p_holm.unwrap() - 4.0 / 70.0).abs() < 1e-12);
        assert_eq!(cell.outcome, Outcome::NoDifference);
        assert_eq!(headline(&t, 1).0, Verdict::NotShown);
        // tied tests show Holm p 1
        assert_eq!(claim(&t, 1).rows[1].cells[0].p_holm, Some(1.0));
    }

    #[test]
    fn baselines_other_arms_order_and_errors() {
        let all = scenario(
            "churn",
            ["load-aware", "agmarl", "default", "random", "binpack", "agmarl-nognn"]
                .iter()
                .map(|a| arm(a, 3, &[]))
                .collect(),
        );
        let t = ClaimsTable::evaluate(std::slice::from_ref(&all), "agmarl").unwrap();
        assert_eq!(claim(&t, 2).baselines, ["default", "binpack", "load-aware"]);
        // another arm judged the same way; the judged arm is never its own baseline
        let t = ClaimsTable::evaluate(std::slice::from_ref(&all), "agmarl-nognn").unwrap();
        assert_eq!(t.arm, "agmarl-nognn");
        assert_eq!(claim(&t, 2).baselines, ["default", "binpack", "load-aware"]);
        let t = ClaimsTable::evaluate(std::slice::from_ref(&all), "binpack").unwrap();
        assert_eq!(claim(&t, 2).baselines, ["default", "load-aware"]);
        let t = ClaimsTable::evaluate(std::slice::from_ref(&all), "default").unwrap();
        assert!(claim(&t, 2).headline().is_none());
        // inputs in any order give the same table
        let p = pressure(&LOW, &[5.0; 8]);
        let a = ClaimsTable::evaluate(&[p.clone(), all.clone()], "agmarl").unwrap();
        let b = ClaimsTable::evaluate(&[all.clone(), p.clone()], "agmarl").unwrap();
        assert_eq!(a.claims, b.claims);
        // no claim scenario: nothing
        let other = scenario("mixed", vec![arm("default", 3, &[])]);
        assert!(ClaimsTable::evaluate(&[other], "agmarl").unwrap().is_empty());
        assert!(matches!(
            ClaimsTable::evaluate(&[p.clone(), p], "agmarl"),
            Err(ClaimsError::DuplicateScenario { .. })
        ));
        assert!(matches!(ClaimsTable::evaluate(&[all], " "), Err(ClaimsError::EmptyArm)));
    }
}
