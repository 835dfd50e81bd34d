//! The claims table: every row of every claim that some input scenario
//! declares, on each such scenario, tested against every baseline; Holm
//! families per judged arm and baseline; judged by [`super::VERDICT_RULE`];
//! the controls judged the same way beside the judged arm.

use super::ClaimsError;
use super::catalogue::ClaimRole;
use super::effect::{Effect, Side, effect, mean_interval};
use super::input::{ArmValues, ScenarioValues};
use super::learning::{LearningFamily, compare};
use super::mapping::{
    Applies, BASELINES, CLAIMS, ClaimSpec, HEADLINE_BASELINE, RegimeSpec, Role, RowSpec, controls_of,
};
use super::prereg::{Registration, registration};
use super::verdict::{Outcome, Regime, Verdict, verdict};
use crate::definitions::Better;
use crate::stats::{ALPHA, BOOTSTRAP_RESAMPLES, Interval, holm};
use crate::summary::key_hash;
use schedlab_core::rng::{purpose, stream};

/// The key of the claims' random streams after [`purpose::STATISTICS`]
/// (the summary's own streams use 1 to 4).
const STREAM_CLAIMS: u64 = 5;
/// The regime rows' streams under [`STREAM_CLAIMS`].
const STREAM_REGIME: u64 = 6;

/// One row against one baseline.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub baseline: String,
    /// the baseline's mean; `None` when it is missing or no run of it
    /// defines the metric
    pub baseline_side: Option<Side>,
    pub effect: Option<Effect>,
    /// Holm-adjusted over the family of the judged arm and this baseline; 1
    /// for a tied test
    pub p_holm: Option<f64>,
    pub outcome: Outcome,
    /// why the row is undefined, or not applicable, against this baseline
    pub missing: Option<String>,
}

/// One metric of a claim on one scenario that declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub scenario: String,
    /// the role the scenario declares that the row covers
    pub scenario_role: ClaimRole,
    pub spec: &'static RowSpec,
    pub better: Better,
    /// the judged arm's mean; `None` when it is missing or no run of it
    /// defines the metric
    pub arm_side: Option<Side>,
    /// parallel to [`ClaimResult::baselines`]
    pub cells: Vec<Cell>,
}

/// A regime row on one scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct RegimeCheck {
    pub scenario: String,
    pub spec: &'static RegimeSpec,
    pub side: Option<Side>,
    /// the 95% bootstrap interval of the arm's mean
    pub ci: Option<Interval>,
    pub regime: Regime,
    /// why it is undefined
    pub missing: Option<String>,
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
    /// the scenarios declaring the claim, by name, each with its roles
    pub scenarios: Vec<(String, Vec<ClaimRole>)>,
    pub regime: Vec<RegimeCheck>,
    /// per scenario (by name), per row of the claim its roles cover
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
    /// Whether the claim's regime rows all hold.
    pub fn regime_state(&self) -> Regime {
        if self.regime.iter().any(|r| r.regime == Regime::NotReached) {
            Regime::NotReached
        } else if self.regime.iter().any(|r| r.regime == Regime::Undefined) {
            Regime::Undefined
        } else {
            Regime::Reached
        }
    }
}

/// The tests of one Holm family: one judged arm against one baseline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Family {
    pub baseline: String,
    /// defined, applicable and not tied
    pub size: usize,
}

/// One arm judged on every claim.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub arm: String,
    pub claims: Vec<ClaimResult>,
    /// in [`BASELINES`] order
    pub families: Vec<Family>,
}

impl Judgement {
    pub fn claim(&self, number: u8) -> Option<&ClaimResult> {
        self.claims.iter().find(|c| c.spec.number == number)
    }
}

/// What the table says about a scenario it was computed from.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioFacts {
    pub scenario: String,
    pub stats_seed: u64,
    pub incomplete: Option<String>,
    pub arms: Vec<String>,
    /// the declared claims, "claim/role"
    pub uses: Vec<String>,
}

/// Every claim some input declares, judged on the judged arm, with the
/// controls beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimsTable {
    /// the judged arm
    pub arm: String,
    /// the inputs that declare some claim, by name
    pub scenarios: Vec<ScenarioFacts>,
    pub claims: Vec<ClaimResult>,
    /// the judged arm's Holm families, in [`BASELINES`] order
    pub families: Vec<Family>,
    /// the controls the folders hold (not the judged arm), in
    /// [`controls_of`]'s order
    pub controls: Vec<Judgement>,
    /// the judged arm against each control on the training objective's
    /// metrics ([`super::learning`]): per control its registered family,
    /// then its pooled one
    pub learning: Vec<LearningFamily>,
    /// the pre-registration the table followed
    pub registration: Registration,
}

impl ClaimsTable {
    /// No claim declared by the inputs: reports then say nothing.
    pub fn is_empty(&self) -> bool {
        self.claims.is_empty()
    }
    /// The tests of all of the judged arm's families.
    pub fn family_size(&self) -> usize {
        self.families.iter().map(|f| f.size).sum()
    }
}

fn code(s: &str) -> String {
    format!("`{s}`")
}

/// Why `row` of `input` cannot be tested against `baseline`, if it cannot.
fn missing(input: &ScenarioValues, arm: &str, baseline: &str, row: &RowSpec) -> Option<String> {
    for side in [arm, baseline] {
        match input.arm(side) {
            None => return Some(format!("{} is not an arm of {}", code(side), code(&input.scenario))),
            Some(a) => {
                if Side::of(&a.sample(row.metric, |x| x)).is_none() {
                    return Some(format!(
                        "no run of {} defines {} in {}",
                        code(side),
                        code(row.metric),
                        code(&input.scenario)
                    ));
                }
            }
        }
    }
    None
}

/// For a row that needs both arms to preempt: `Ok(true)` when both do,
/// `Ok(false)` with why when one does not, `Err` with why when it is unknown.
fn both_preempt(input: &ScenarioValues, arm: &str, baseline: &str) -> Result<(), (Outcome, String)> {
    let facts = |a: &str| input.arm(a).and_then(|v| v.preempts);
    for side in [arm, baseline] {
        if facts(side) == Some(false) {
            return Err((
                Outcome::NotApplicable,
                format!("not applicable: {} does not preempt", code(side)),
            ));
        }
    }
    for side in [arm, baseline] {
        if facts(side).is_none() {
            return Err((
                Outcome::Undefined,
                format!(
                    "whether {} preempts is unknown in {} (no arm_facts in its run folders, or they disagree)",
                    code(side),
                    code(&input.scenario)
                ),
            ));
        }
    }
    Ok(())
}

pub(super) fn outcome(effect: Option<&Effect>, p_holm: Option<f64>, better: Better) -> Outcome {
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

fn push(out: &mut Vec<String>, s: String) {
    if !out.contains(&s) {
        out.push(s);
    }
}

/// "m [low, high]" of a regime row.
fn regime_numbers(r: &RegimeCheck) -> String {
    use crate::summary::format::plain;
    match (r.side, r.ci) {
        (Some(s), Some(ci)) => format!("{} [{}, {}]", plain(s.mean), plain(ci.low), plain(ci.high)),
        (Some(s), None) => format!("{} [n/a]", plain(s.mean)),
        _ => "n/a".to_string(),
    }
}

fn reasons(claim: &ClaimResult, column: usize, verdict: Verdict) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    if let Some(why) = claim.spec.without_rows {
        return vec![why.to_string()];
    }
    for r in &claim.regime {
        let what = format!(
            "{}'s mean {} on {} is {}",
            code(r.spec.arm),
            code(r.spec.metric),
            code(&r.scenario),
            regime_numbers(r)
        );
        match r.regime {
            Regime::NotReached => push(
                &mut out,
                format!("regime not reached: {what}, its interval not above 0"),
            ),
            Regime::Undefined => push(
                &mut out,
                format!("regime undefined: {}", r.missing.clone().unwrap_or(what)),
            ),
            Regime::Reached => {}
        }
    }
    let applicable: Vec<&Row> = claim
        .rows
        .iter()
        .filter(|r| r.cells[column].outcome != Outcome::NotApplicable)
        .collect();
    if applicable.is_empty() {
        push(&mut out, "no applicable row".to_string());
    }
    for row in &applicable {
        if let Some(why) = &row.cells[column].missing {
            push(&mut out, why.clone());
        }
    }
    if !out.is_empty() {
        return out;
    }
    for want in [Outcome::Better, Outcome::Worse] {
        let rows: Vec<String> = applicable
            .iter()
            .filter(|r| r.cells[column].outcome == want)
            .map(|r| {
                format!(
                    "{} {} on {}",
                    r.spec.role.as_str(),
                    code(&r.spec.label()),
                    code(&r.scenario)
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

/// The bootstrap streams of one row (or regime) of one scenario: keyed by
/// the quantity, the two arms and the stream's part, so the table is the
/// same for the same inputs in any order.
pub(super) fn streams(stats_seed: u64, keys: [u64; 4]) -> impl FnMut(u64) -> schedlab_core::rng::SimRng {
    move |k| {
        stream(
            stats_seed,
            &[
                purpose::STATISTICS,
                STREAM_CLAIMS,
                keys[0],
                keys[1],
                keys[2],
                keys[3],
                k,
            ],
        )
    }
}

fn side_of(a: Option<&ArmValues>, row: &RowSpec) -> Option<Side> {
    Side::of(&a?.sample(row.metric, |x| row.value(x)))
}

fn regime_check(input: &ScenarioValues, spec: &'static RegimeSpec) -> RegimeCheck {
    let sample = input
        .arm(spec.arm)
        .map(|a| a.sample(spec.metric, |x| x))
        .unwrap_or_default();
    let side = Side::of(&sample);
    let mut rng = streams(
        input.stats_seed,
        [STREAM_REGIME, key_hash(spec.metric), key_hash(spec.arm), 0],
    );
    let ci = side.and_then(|_| mean_interval(&sample, BOOTSTRAP_RESAMPLES, &mut rng(0), &mut rng(1)));
    let missing = match (input.arm(spec.arm), side, ci) {
        (None, _, _) => Some(format!("{} is not an arm of {}", code(spec.arm), code(&input.scenario))),
        (Some(_), None, _) => Some(format!(
            "no run of {} defines {} in {}",
            code(spec.arm),
            code(spec.metric),
            code(&input.scenario)
        )),
        (Some(_), Some(_), None) => Some(format!(
            "the interval of {}'s mean {} in {} cannot be computed",
            code(spec.arm),
            code(spec.metric),
            code(&input.scenario)
        )),
        _ => None,
    };
    let regime = match ci {
        None => Regime::Undefined,
        Some(ci) if ci.low > 0.0 => Regime::Reached,
        Some(_) => Regime::NotReached,
    };
    RegimeCheck {
        scenario: input.scenario.clone(),
        spec,
        side,
        ci,
        regime,
        missing,
    }
}

/// `arm` judged on every claim with rows that some input declares.
fn judge(inputs: &[&ScenarioValues], arm: &str) -> Result<Judgement, ClaimsError> {
    let mut claims = Vec::new();
    for spec in CLAIMS.iter().filter(|c| !c.rows.is_empty()) {
        let present: Vec<(&ScenarioValues, Vec<ClaimRole>)> = inputs
            .iter()
            .filter_map(|s| {
                let roles: Vec<ClaimRole> = s.uses.iter().filter(|u| u.claim == spec.name).map(|u| u.role).collect();
                (!roles.is_empty()).then_some((*s, roles))
            })
            .collect();
        if present.is_empty() {
            continue;
        }
        let baselines: Vec<String> = BASELINES
            .iter()
            .filter(|b| **b != arm && (**b == HEADLINE_BASELINE || present.iter().any(|(s, _)| s.arm(b).is_some())))
            .map(|b| b.to_string())
            .collect();
        let mut regime = Vec::new();
        for g in spec.regime {
            for (input, roles) in &present {
                if roles.iter().any(|r| g.roles.contains(r)) {
                    regime.push(regime_check(input, g));
                }
            }
        }
        let mut rows = Vec::new();
        for (input, roles) in &present {
            for row in spec.rows {
                let Some(&scenario_role) = roles.iter().find(|r| row.applies_to(**r)) else {
                    continue;
                };
                let better = row.better()?;
                let x = input
                    .arm(arm)
                    .map(|a| a.sample(row.metric, |v| row.value(v)))
                    .unwrap_or_default();
                let cells = baselines
                    .iter()
                    .map(|b| {
                        let mut why = missing(input, arm, b, row).map(|w| (Outcome::Undefined, w));
                        if why.is_none() && row.applies == Applies::BothPreempt {
                            why = both_preempt(input, arm, b).err();
                        }
                        let effect = match &why {
                            None => {
                                let y = input
                                    .arm(b)
                                    .map(|a| a.sample(row.metric, |v| row.value(v)))
                                    .unwrap_or_default();
                                effect(
                                    &x,
                                    &y,
                                    BOOTSTRAP_RESAMPLES,
                                    streams(
                                        input.stats_seed,
                                        [key_hash(&row.label()), key_hash(b), key_hash(arm), 1],
                                    ),
                                )
                            }
                            Some(_) => None,
                        };
                        let (outcome, missing) = match why {
                            Some((o, w)) => (o, Some(w)),
                            None if effect.is_none() => (
                                Outcome::Undefined,
                                Some(format!("{} cannot be tested", code(row.metric))),
                            ),
                            None => (Outcome::Undefined, None),
                        };
                        Cell {
                            baseline: b.clone(),
                            baseline_side: side_of(input.arm(b), row),
                            effect,
                            p_holm: None,
                            outcome,
                            missing,
                        }
                    })
                    .collect();
                rows.push(Row {
                    scenario: input.scenario.clone(),
                    scenario_role,
                    spec: row,
                    better,
                    arm_side: side_of(input.arm(arm), row),
                    cells,
                });
            }
        }
        claims.push(ClaimResult {
            spec,
            baselines,
            scenarios: present.iter().map(|(s, r)| (s.scenario.clone(), r.clone())).collect(),
            regime,
            rows,
            verdicts: Vec::new(),
        });
    }

    // Holm per baseline: every applicable test of `arm` against it in the table
    let mut families = Vec::new();
    for b in BASELINES {
        let in_family = |c: &Cell| c.baseline == *b && c.outcome != Outcome::NotApplicable;
        let p: Vec<Option<f64>> = claims
            .iter()
            .flat_map(|c| &c.rows)
            .flat_map(|r| &r.cells)
            .filter(|c| in_family(c))
            .map(|c| c.effect.filter(|e| !e.tied).map(|e| e.test.p))
            .collect();
        if p.is_empty() {
            continue;
        }
        families.push(Family {
            baseline: b.to_string(),
            size: p.iter().flatten().count(),
        });
        let mut adjusted = holm(&p).into_iter();
        for claim in &mut claims {
            for row in &mut claim.rows {
                for cell in row.cells.iter_mut().filter(|c| in_family(c)) {
                    let adj = adjusted.next().flatten();
                    cell.p_holm = cell.effect.map(|e| if e.tied { 1.0 } else { adj.unwrap_or(1.0) });
                    if cell.missing.is_none() {
                        cell.outcome = outcome(cell.effect.as_ref(), cell.p_holm, row.better);
                    }
                }
            }
        }
    }
    for claim in &mut claims {
        let regime = claim.regime_state();
        for column in 0..claim.baselines.len() {
            let outcomes: Vec<(Role, Outcome)> = claim
                .rows
                .iter()
                .map(|r| (r.spec.role, r.cells[column].outcome))
                .collect();
            let v = verdict(regime, &outcomes);
            let why = reasons(claim, column, v);
            claim.verdicts.push(BaselineVerdict {
                baseline: claim.baselines[column].clone(),
                verdict: v,
                reasons: why,
            });
        }
    }
    // a claim without rows is stated, not shown, beside the others
    if !claims.is_empty() {
        for spec in CLAIMS.iter().filter(|c| c.rows.is_empty()) {
            let baselines: Vec<String> = [HEADLINE_BASELINE]
                .iter()
                .filter(|b| **b != arm)
                .map(|b| b.to_string())
                .collect();
            let verdicts = baselines
                .iter()
                .map(|b| BaselineVerdict {
                    baseline: b.clone(),
                    verdict: Verdict::NotShown,
                    reasons: spec.without_rows.map(|w| vec![w.to_string()]).unwrap_or_default(),
                })
                .collect();
            claims.push(ClaimResult {
                spec,
                baselines,
                scenarios: Vec::new(),
                regime: Vec::new(),
                rows: Vec::new(),
                verdicts,
            });
        }
        claims.sort_by_key(|c| c.spec.number);
    }
    Ok(Judgement {
        arm: arm.to_string(),
        claims,
        families,
    })
}

impl ClaimsTable {
    /// Tests `arm` against each baseline on every row of every claim that an
    /// input declares, and each of its controls ([`controls_of`]) that an
    /// input holds the same way. Fails when the built-in pre-registration disagrees with
    /// the code's mapping.
    pub fn evaluate(inputs: &[ScenarioValues], arm: &str) -> Result<ClaimsTable, ClaimsError> {
        if arm.trim().is_empty() {
            return Err(ClaimsError::EmptyArm);
        }
        let registration = registration()?;
        for (i, s) in inputs.iter().enumerate() {
            if inputs[..i].iter().any(|t| t.scenario == s.scenario) {
                return Err(ClaimsError::DuplicateScenario {
                    scenario: s.scenario.clone(),
                });
            }
        }
        let mut sorted: Vec<&ScenarioValues> = inputs.iter().collect();
        sorted.sort_by(|a, b| a.scenario.cmp(&b.scenario));
        let judged = judge(&sorted, arm)?;
        let mut controls = Vec::new();
        if !judged.claims.is_empty() {
            for c in controls_of(arm) {
                if sorted.iter().any(|s| !s.uses.is_empty() && s.arm(&c).is_some()) {
                    controls.push(judge(&sorted, &c)?);
                }
            }
        }
        let scenarios: Vec<ScenarioFacts> = sorted
            .iter()
            .filter(|s| !s.uses.is_empty() && !judged.claims.is_empty())
            .map(|s| ScenarioFacts {
                scenario: s.scenario.clone(),
                stats_seed: s.stats_seed,
                incomplete: s.incomplete.clone(),
                arms: s.arms.iter().map(|a| a.arm.clone()).collect(),
                uses: s.uses.iter().map(|u| format!("{}/{}", u.claim, u.role)).collect(),
            })
            .collect();
        let learning = if judged.claims.is_empty() {
            Vec::new()
        } else {
            compare(&sorted, arm)
        };
        Ok(ClaimsTable {
            arm: arm.to_string(),
            scenarios,
            claims: judged.claims,
            families: judged.families,
            learning,
            controls,
            registration,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::catalogue::{ClaimName, ClaimUse};
    use crate::claims::mapping::claim_metrics;
    use std::collections::BTreeMap;

    /// Every metric of every claim equal to 1 on every seed (tied: never
    /// significant), except the `(metric, values)` given; preempting.
    fn arm(name: &str, seeds: usize, set: &[(&str, &[Option<f64>])]) -> ArmValues {
        let mut metrics = BTreeMap::new();
        for key in claim_metrics() {
            let values = (1..=seeds as u64).map(|s| (s, Some(1.0))).collect();
            metrics.insert(key.to_string(), values);
        }
        for (metric, values) in set {
            let v = values.iter().enumerate().map(|(i, x)| (i as u64 + 1, *x)).collect();
            metrics.insert(metric.to_string(), v);
        }
        ArmValues {
            arm: name.to_string(),
            metrics,
            training_runs: vec![None; seeds],
            preempts: Some(true),
        }
    }

    fn uses(list: &[(ClaimName, ClaimRole)]) -> Vec<ClaimUse> {
        list.iter().map(|&(claim, role)| ClaimUse { claim, role }).collect()
    }

    fn scenario(name: &str, declared: &[(ClaimName, ClaimRole)], arms: Vec<ArmValues>) -> ScenarioValues {
        ScenarioValues {
            scenario: name.to_string(),
            uses: uses(declared),
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
    const PACKING: (ClaimName, ClaimRole) = (ClaimName::Packing, ClaimRole::CascadingPressure);
    const RESTRAINT: (ClaimName, ClaimRole) = (ClaimName::Restraint, ClaimRole::ChurnFaults);
    const DECOUPLING: (ClaimName, ClaimRole) = (ClaimName::Decoupling, ClaimRole::VaryingRequests);

    fn claim(table: &ClaimsTable, n: u8) -> &ClaimResult {
        table.claims.iter().find(|c| c.spec.number == n).unwrap()
    }

    fn headline(table: &ClaimsTable, n: u8) -> (Verdict, String) {
        let v = claim(table, n).headline().unwrap();
        (v.verdict, v.reasons.join("; "))
    }

    /// A scenario declaring packing, with `default` and an `agmarl` whose
    /// nodes in use, utilisation of them and pending time are as given.
    fn packing(nodes: &[f64], util: &[f64], pending: &[f64]) -> ScenarioValues {
        scenario(
            "a-packing-scenario",
            &[PACKING],
            vec![
                arm(
                    "default",
                    8,
                    &[
                        ("nodes_in_use_mean", &some(&HIGH)),
                        ("cpu_util_in_use_mean", &some(&LOW)),
                        ("pending_time_mean_s", &some(&[5.0; 8])),
                    ],
                ),
                arm(
                    "agmarl",
                    8,
                    &[
                        ("nodes_in_use_mean", &some(nodes)),
                        ("cpu_util_in_use_mean", &some(util)),
                        ("pending_time_mean_s", &some(pending)),
                    ],
                ),
            ],
        )
    }

    #[test]
    fn supported_when_better_on_every_primary_row_and_worse_on_none() {
        let t = ClaimsTable::evaluate(&[packing(&LOW, &HIGH, &[5.0; 8])], "agmarl").unwrap();
        assert_eq!(headline(&t, 1).0, Verdict::Supported, "{:?}", headline(&t, 1));
        assert!(headline(&t, 1).1.contains("better: primary `nodes_in_use_mean`"));
        let row = &claim(&t, 1).rows[0];
        assert_eq!(
            (row.scenario.as_str(), row.scenario_role),
            ("a-packing-scenario", ClaimRole::CascadingPressure)
        );
        let cell = &row.cells[0];
        assert_eq!(cell.outcome, Outcome::Better);
        assert_eq!(cell.effect.unwrap().diff, -10.0);
        assert_eq!(row.arm_side.unwrap().mean, 4.5);
        assert_eq!(cell.baseline_side.unwrap().mean, 14.5);
        // only the declared claim has rows; claim 5 is stated beside it
        let numbers: Vec<u8> = t.claims.iter().map(|c| c.spec.number).collect();
        assert_eq!(numbers, [1, 5]);
        let (v, why) = headline(&t, 5);
        assert_eq!((v, why.as_str()), (Verdict::NotShown, CLAIMS[4].without_rows.unwrap()));
        assert_eq!(t.registration.sha256.len(), 64);
    }

    #[test]
    fn a_worse_guard_or_an_insignificant_primary_is_not_shown() {
        let t = ClaimsTable::evaluate(&[packing(&LOW, &HIGH, &[9.0; 8])], "agmarl").unwrap();
        let (v, why) = headline(&t, 1);
        assert_eq!(v, Verdict::NotShown);
        assert!(why.contains("worse: guard `pending_time_mean_s`"), "{why}");
        let t = ClaimsTable::evaluate(&[packing(&HIGH, &LOW, &[5.0; 8])], "agmarl").unwrap();
        let (v, why) = headline(&t, 1);
        assert_eq!(v, Verdict::NotShown);
        assert!(why.contains("no row differs significantly"), "{why}");
    }

    #[test]
    fn contradicted_when_worse_on_a_primary_row_and_better_on_none() {
        let worse: Vec<f64> = HIGH.iter().map(|x| x + 10.0).collect();
        let t = ClaimsTable::evaluate(&[packing(&worse, &LOW, &[5.0; 8])], "agmarl").unwrap();
        assert_eq!(headline(&t, 1).0, Verdict::Contradicted, "{:?}", headline(&t, 1));
        // better on the guard: mixed, not shown
        let t = ClaimsTable::evaluate(&[packing(&worse, &LOW, &[1.0; 8])], "agmarl").unwrap();
        assert_eq!(headline(&t, 1).0, Verdict::NotShown);
    }

    #[test]
    fn rows_follow_declared_roles_not_names() {
        // the same values under another name and no declaration: nothing
        let mut s = packing(&LOW, &HIGH, &[5.0; 8]);
        s.uses.clear();
        assert!(ClaimsTable::evaluate(&[s.clone()], "agmarl").unwrap().is_empty());
        // declared for pareto under stress: pareto_hv and cost_rate_cv, not fault_cost_rate_cv
        s.uses = uses(&[(ClaimName::Pareto, ClaimRole::Stress)]);
        let t = ClaimsTable::evaluate(&[s.clone()], "agmarl").unwrap();
        let metrics: Vec<&str> = claim(&t, 4).rows.iter().map(|r| r.spec.metric).collect();
        assert_eq!(metrics, ["pareto_hv", "cost_rate_cv"]);
        // both roles of one claim: each row once
        s.uses = uses(&[
            (ClaimName::Pareto, ClaimRole::Stress),
            (ClaimName::Pareto, ClaimRole::StressFaults),
        ]);
        let t = ClaimsTable::evaluate(&[s], "agmarl").unwrap();
        let metrics: Vec<&str> = claim(&t, 4).rows.iter().map(|r| r.spec.metric).collect();
        assert_eq!(metrics, ["pareto_hv", "cost_rate_cv", "fault_cost_rate_cv"]);
    }

    #[test]
    fn a_missing_arm_or_undefined_metric_is_not_shown_and_says_why() {
        let mut s = packing(&LOW, &HIGH, &[5.0; 8]);
        s.arms.retain(|a| a.arm != "agmarl");
        let t = ClaimsTable::evaluate(&[s], "agmarl").unwrap();
        let (v, why) = headline(&t, 1);
        assert_eq!(v, Verdict::NotShown);
        assert!(why.contains("`agmarl` is not an arm of `a-packing-scenario`"), "{why}");
        // default is missing: its verdict is still there, not shown
        let mut s = packing(&LOW, &HIGH, &[5.0; 8]);
        s.arms[0].arm = "binpack".into();
        let t = ClaimsTable::evaluate(&[s], "agmarl").unwrap();
        assert_eq!(claim(&t, 1).baselines, ["default", "binpack"]);
        assert_eq!(headline(&t, 1).0, Verdict::NotShown);
        assert_eq!(claim(&t, 1).verdicts[1].verdict, Verdict::Supported);
        // no run of the arm defines a primary metric
        let s = scenario(
            "p",
            &[PACKING],
            vec![
                arm("default", 8, &[("nodes_in_use_mean", &some(&HIGH))]),
                arm("agmarl", 8, &[("nodes_in_use_mean", &[None; 8])]),
            ],
        );
        let t = ClaimsTable::evaluate(&[s], "agmarl").unwrap();
        let (v, why) = headline(&t, 1);
        assert_eq!(v, Verdict::NotShown);
        assert!(
            why.contains("no run of `agmarl` defines `nodes_in_use_mean` in `p`"),
            "{why}"
        );
        assert_eq!(claim(&t, 1).rows[0].cells[0].outcome, Outcome::Undefined);
    }

    #[test]
    fn holm_runs_per_judged_arm_and_baseline() {
        // 4 runs a side, all apart: p = 2/70 each, significant alone
        let (low, high) = (some(&[1.0, 2.0, 3.0, 4.0]), some(&[11.0, 12.0, 13.0, 14.0]));
        let alone = scenario(
            "p",
            &[PACKING],
            vec![
                arm("default", 4, &[("nodes_in_use_mean", &high)]),
                arm("agmarl", 4, &[("nodes_in_use_mean", &low)]),
            ],
        );
        let t = ClaimsTable::evaluate(std::slice::from_ref(&alone), "agmarl").unwrap();
        assert_eq!(
            t.families,
            [Family {
                baseline: "default".into(),
                size: 1
            }],
            "tied tests are not in the family"
        );
        let cell = &claim(&t, 1).rows[0].cells[0];
        assert!((cell.p_holm.unwrap() - 2.0 / 70.0).abs() < 1e-12);
        // a second such test against default in another claim doubles it past 0.05
        let churn = scenario(
            "c",
            &[RESTRAINT],
            vec![
                arm("default", 4, &[("oom_pressure_events", &high)]),
                arm("agmarl", 4, &[("oom_pressure_events", &low)]),
            ],
        );
        let t = ClaimsTable::evaluate(&[alone.clone(), churn], "agmarl").unwrap();
        assert_eq!(t.families[0].size, 2);
        let cell = &claim(&t, 1).rows[0].cells[0];
        assert!((cell.p_holm.unwrap() - 4.0 / 70.0).abs() < 1e-12);
        assert_eq!(cell.outcome, Outcome::NoDifference);
        // a test against another baseline is another family: it changes nothing against default
        let mut with_binpack = alone.clone();
        with_binpack.arms.push(arm(
            "binpack",
            4,
            &[("nodes_in_use_mean", &high), ("cpu_util_in_use_mean", &low)],
        ));
        let t = ClaimsTable::evaluate(&[with_binpack], "agmarl").unwrap();
        let sizes: Vec<(&str, usize)> = t.families.iter().map(|f| (f.baseline.as_str(), f.size)).collect();
        assert_eq!(sizes, [("default", 1), ("binpack", 2)]);
        let row = &claim(&t, 1).rows[0];
        assert!((row.cells[0].p_holm.unwrap() - 2.0 / 70.0).abs() < 1e-12);
        assert!((row.cells[1].p_holm.unwrap() - 4.0 / 70.0).abs() < 1e-12);
    }

    /// A restraint scenario where `agmarl` binds critical pods faster and
    /// `default` preempts or not.
    fn restraint(agmarl_preempts: Option<bool>, default_preempts: Option<bool>) -> ScenarioValues {
        let mut s = scenario(
            "c",
            &[RESTRAINT],
            vec![
                arm(
                    "default",
                    8,
                    &[
                        ("oom_pressure_events", &some(&HIGH)),
                        ("critical_bind_p99_s", &some(&LOW)),
                    ],
                ),
                arm(
                    "agmarl",
                    8,
                    &[
                        ("oom_pressure_events", &some(&LOW)),
                        ("critical_bind_p99_s", &some(&HIGH)),
                    ],
                ),
            ],
        );
        s.arms[0].preempts = default_preempts;
        s.arms[1].preempts = agmarl_preempts;
        s
    }

    #[test]
    fn critical_pods_only_between_arms_that_both_preempt() {
        let critical = |t: &ClaimsTable| {
            claim(t, 2)
                .rows
                .iter()
                .find(|r| r.spec.metric == "critical_bind_p99_s")
                .unwrap()
                .cells[0]
                .clone()
        };
        // both preempt: the row counts, agmarl is worse on it
        let t = ClaimsTable::evaluate(&[restraint(Some(true), Some(true))], "agmarl").unwrap();
        assert_eq!(critical(&t).outcome, Outcome::Worse);
        assert_eq!(t.families[0].size, 2);
        assert_eq!(headline(&t, 2).0, Verdict::NotShown);
        // agmarl does not preempt: not applicable, outside the family and the verdict
        let t = ClaimsTable::evaluate(&[restraint(Some(false), Some(true))], "agmarl").unwrap();
        let cell = critical(&t);
        assert_eq!(cell.outcome, Outcome::NotApplicable);
        assert!(cell.missing.unwrap().contains("`agmarl` does not preempt"));
        assert_eq!(t.families[0].size, 1);
        let (v, why) = headline(&t, 2);
        assert_eq!(v, Verdict::NotShown, "better on one primary row of four: {why}");
        assert!(!why.contains("critical_bind_p99_s"), "{why}");
        // unknown facts: undefined, so not shown, saying why
        let t = ClaimsTable::evaluate(&[restraint(Some(true), None)], "agmarl").unwrap();
        assert_eq!(critical(&t).outcome, Outcome::Undefined);
        let (v, why) = headline(&t, 2);
        assert_eq!(v, Verdict::NotShown);
        assert!(why.contains("whether `default` preempts is unknown"), "{why}");
    }

    /// Decoupling: default's per-seed partial correlations and agmarl's.
    fn decoupling(default: &[f64], agmarl: &[f64]) -> ScenarioValues {
        scenario(
            "v",
            &[DECOUPLING],
            vec![
                arm("default", 8, &[("mem_failure_partial_pearson", &some(default))]),
                arm("agmarl", 8, &[("mem_failure_partial_pearson", &some(agmarl))]),
            ],
        )
    }

    #[test]
    fn the_regime_guard_turns_a_verdict_into_not_shown() {
        let positive = [0.30, 0.32, 0.35, 0.31, 0.29, 0.33, 0.34, 0.36];
        let near_zero = [0.01, -0.02, 0.0, 0.02, -0.01, 0.01, 0.0, -0.01];
        // default's r lies above 0: the rows decide, agmarl's is lower and not strongly negative
        let t = ClaimsTable::evaluate(&[decoupling(&positive, &near_zero)], "agmarl").unwrap();
        let c = claim(&t, 3);
        assert_eq!(c.regime.len(), 1);
        assert_eq!(c.regime[0].regime, Regime::Reached);
        assert!(c.regime[0].ci.unwrap().low > 0.0);
        assert_eq!(headline(&t, 3).0, Verdict::Supported, "{:?}", headline(&t, 3));
        // default's r straddles 0: not shown (regime not reached), whatever the rows say
        let straddling = [0.2, -0.2, 0.1, -0.1, 0.3, -0.3, 0.05, -0.05];
        let low = [-0.9; 8];
        let t = ClaimsTable::evaluate(&[decoupling(&straddling, &low)], "agmarl").unwrap();
        assert_eq!(claim(&t, 3).regime[0].regime, Regime::NotReached);
        let (v, why) = headline(&t, 3);
        assert_eq!(v, Verdict::NotShown);
        assert!(
            why.contains("regime not reached") && why.contains("`default`'s mean `mem_failure_partial_pearson` on `v`"),
            "{why}"
        );
        // no default: the regime is undefined
        let mut s = decoupling(&positive, &near_zero);
        s.arms[0].arm = "binpack".into();
        let t = ClaimsTable::evaluate(&[s], "agmarl").unwrap();
        assert_eq!(claim(&t, 3).regime[0].regime, Regime::Undefined);
        assert!(claim(&t, 3).verdicts.iter().all(|v| v.verdict == Verdict::NotShown));
        // the signed row: a strongly negative correlation is lower, and the guard catches its size
        let t = ClaimsTable::evaluate(&[decoupling(&positive, &[-0.9; 8])], "agmarl").unwrap();
        let rows = &claim(&t, 3).rows;
        assert_eq!(
            (rows[0].cells[0].outcome, rows[1].cells[0].outcome),
            (Outcome::Better, Outcome::Worse)
        );
        assert_eq!(headline(&t, 3).0, Verdict::NotShown);
    }

    #[test]
    fn several_training_runs_are_the_unit_of_the_judged_arm() {
        // agmarl: 3 training runs of 4 seeds each, default: 12 seeds
        let mut agmarl = arm(
            "agmarl",
            12,
            &[(
                "nodes_in_use_mean",
                &some(&[1.0, 2.0, 3.0, 4.0, 1.5, 2.5, 3.5, 4.5, 1.2, 2.2, 3.2, 4.2]),
            )],
        );
        agmarl.training_runs = (0..12).map(|i| Some(format!("seed:{}", 1000 * (i / 4 + 1)))).collect();
        let default = arm("default", 12, &[("nodes_in_use_mean", &some(&[20.0; 12]))]);
        let t = ClaimsTable::evaluate(&[scenario("p", &[PACKING], vec![default, agmarl])], "agmarl").unwrap();
        let row = &claim(&t, 1).rows[0];
        let side = row.arm_side.unwrap();
        assert!(side.by_run);
        assert_eq!((side.n, side.runs, side.seeds), (3, 3, 12));
        assert!(
            (side.mean - 8.2 / 3.0).abs() < 1e-12,
            "the mean of the run means 2.5, 3, 2.7: {}",
            side.mean
        );
        let e = row.cells[0].effect.unwrap();
        assert_eq!((e.test.n_x, e.test.n_y), (3, 12));
        // 3 runs against 12 seeds, all apart: p = 2/C(15, 3) = 2/455
        assert!((e.test.p - 2.0 / 455.0).abs() < 1e-12, "{}", e.test.p);
        assert_eq!(row.cells[0].baseline_side.unwrap().n, 12);
    }

    #[test]
    fn controls_are_judged_beside_the_arm_by_the_same_rule() {
        let mut s = packing(&LOW, &HIGH, &[5.0; 8]);
        // the analytic control is as good as agmarl; no untrained one in the folders
        let mut analytic = s.arm("agmarl").unwrap().clone();
        analytic.arm = "agmarl-analytic".into();
        s.arms.push(analytic);
        let t = ClaimsTable::evaluate(std::slice::from_ref(&s), "agmarl").unwrap();
        assert_eq!(t.controls.len(), 1);
        let control = &t.controls[0];
        assert_eq!(control.arm, "agmarl-analytic");
        assert_eq!(
            control.claim(1).unwrap().headline().unwrap().verdict,
            Verdict::Supported
        );
        assert_eq!(control.families[0].size, t.families[0].size);
        // the control is never the judged arm's baseline, nor its own control
        assert_eq!(claim(&t, 1).baselines, ["default"]);
        // the learning comparison: agmarl against the control, both families,
        // in every format the reports write
        assert_eq!(t.learning.len(), 2);
        assert!(t.learning.iter().all(|f| f.control == "agmarl-analytic"));
        assert_eq!((t.learning[0].pooled, t.learning[1].pooled), (false, true));
        let json = t.to_json();
        assert_eq!(json["learning"][1]["family"], "pooled");
        assert_eq!(json["learning"][0]["tests"][0]["metric"], "cost_usd");
        for text in [t.to_terminal(), t.to_markdown(), t.to_html(), t.to_latex()] {
            assert!(text.contains("What learning adds"), "{text}");
            assert!(
                text.contains("agmarl-analytic") && text.contains("pooled over scenarios (amendment 2)"),
                "{text}"
            );
        }
        // the terminal's brief block: a line per claim with the controls beside it, short lines
        let brief = t.to_terminal_brief("more: report.md");
        let lines: Vec<&str> = brief.lines().collect();
        assert_eq!(lines.len(), 2 + t.claims.len(), "{brief}");
        assert!(
            lines[1].contains("claim 1 (packing): SUPPORTED (agmarl-analytic supported)"),
            "{brief}"
        );
        assert!(
            lines.iter().all(|l| l.chars().count() <= crate::summary::MAX_WIDTH),
            "{brief}"
        );
        assert_eq!(lines.last(), Some(&"more: report.md"));
        let t = ClaimsTable::evaluate(std::slice::from_ref(&s), "agmarl-analytic").unwrap();
        assert!(t.controls.is_empty() && t.learning.is_empty());
    }

    #[test]
    fn baselines_order_and_errors() {
        let all = scenario(
            "c",
            &[RESTRAINT],
            ["load-aware", "agmarl", "default", "random", "binpack", "agmarl-nognn"]
                .iter()
                .map(|a| arm(a, 3, &[]))
                .collect(),
        );
        let t = ClaimsTable::evaluate(std::slice::from_ref(&all), "agmarl").unwrap();
        assert_eq!(claim(&t, 2).baselines, ["default", "binpack", "load-aware"]);
        let t = ClaimsTable::evaluate(std::slice::from_ref(&all), "binpack").unwrap();
        assert_eq!(claim(&t, 2).baselines, ["default", "load-aware"]);
        let t = ClaimsTable::evaluate(std::slice::from_ref(&all), "default").unwrap();
        assert!(claim(&t, 2).headline().is_none());
        // inputs in any order give the same table
        let p = packing(&LOW, &HIGH, &[5.0; 8]);
        let a = ClaimsTable::evaluate(&[p.clone(), all.clone()], "agmarl").unwrap();
        let b = ClaimsTable::evaluate(&[all.clone(), p.clone()], "agmarl").unwrap();
        assert_eq!(a, b);
        assert!(matches!(
            ClaimsTable::evaluate(&[p.clone(), p], "agmarl"),
            Err(ClaimsError::DuplicateScenario { .. })
        ));
        assert!(matches!(ClaimsTable::evaluate(&[all], " "), Err(ClaimsError::EmptyArm)));
    }
}
