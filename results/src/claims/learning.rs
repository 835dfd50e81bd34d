//! What learning adds: the judged arm against each of its controls on the
//! training objective's own metrics (PREREGISTRATION.md, "What learning
//! must show", H2 and "Selection and restraint", with amendment 2). Two
//! Holm families per control:
//!
//! - *registered*: one test per scenario and metric, each arm sampled by its
//!   unit of replication (training runs where it has several, else seeds);
//! - *pooled* (amendment 2): one test per metric, whose units are the
//!   training runs (or seeds), each the mean over the scenarios of its mean
//!   there divided by `default`'s mean on that scenario; a scenario where
//!   `default`'s mean is 0 or undefined is left out of that metric for
//!   every arm. It exists because five runs against five cannot reject in a
//!   family of 27 tests.

use super::effect::{Effect, Sample, Side, effect};
use super::input::{ArmValues, ScenarioValues};
use super::mapping::{HEADLINE_BASELINE, controls_of};
use super::table::{outcome, streams};
use super::verdict::Outcome;
use crate::definitions::{Better, METRICS as DEFINITIONS};
use crate::stats::{BOOTSTRAP_RESAMPLES, holm, mean};
use crate::summary::key_hash;
use std::collections::BTreeMap;

/// The training objective's own outcomes, as registered for H2.
pub const METRICS: [&str; 3] = ["cost_usd", "failures_per_running_pod_hour", "oom_pressure_events"];

/// What one test compares.
#[derive(Debug, Clone, PartialEq)]
pub enum Scope {
    /// one scenario's values
    Scenario(String),
    /// the scenarios' values over `default`'s mean, averaged per unit
    Pooled {
        /// the scenarios that entered the mean
        scenarios: Vec<String>,
        /// those left out: `default`'s mean there is 0 or undefined
        left_out: Vec<String>,
    },
}

/// The judged arm against one control on one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct LearningTest {
    pub scope: Scope,
    pub metric: &'static str,
    pub better: Better,
    pub arm_side: Option<Side>,
    pub control_side: Option<Side>,
    pub effect: Option<Effect>,
    pub p_holm: Option<f64>,
    pub outcome: Outcome,
}

/// One Holm family: every test of the judged arm against one control,
/// registered or pooled.
#[derive(Debug, Clone, PartialEq)]
pub struct LearningFamily {
    pub control: String,
    pub pooled: bool,
    pub tests: Vec<LearningTest>,
}

impl LearningFamily {
    /// Tests whose p entered the Holm adjustment (defined and not tied).
    pub fn size(&self) -> usize {
        self.tests.iter().filter(|t| t.effect.is_some_and(|e| !e.tied)).count()
    }

    /// The Holm family's name as the reports print it.
    pub fn title(&self) -> String {
        let kind = if self.pooled {
            "pooled over scenarios (amendment 2)"
        } else {
            "per scenario (registered)"
        };
        format!("against `{}`, {kind}", self.control)
    }
}

fn better_of(metric: &str) -> Better {
    DEFINITIONS
        .iter()
        .find(|d| d.key == metric)
        .map_or(Better::Neither, |d| d.better)
}

/// The arm's values of `metric` keyed by its unit: the training run where it
/// has several in this scenario, else the seed.
fn unit_means(arm: &ArmValues, metric: &str) -> BTreeMap<String, (f64, usize)> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let Some(values) = arm.metrics.get(metric) else {
        return BTreeMap::new();
    };
    let by_run = arm.sample(metric, |v| v).by_run();
    for (i, (seed, v)) in values.iter().enumerate() {
        let Some(v) = v.filter(|v| v.is_finite()) else {
            continue;
        };
        let key = match arm.training_runs.get(i).and_then(|r| r.as_deref()) {
            Some(run) if by_run => run.to_string(),
            _ => format!("seed:{seed}"),
        };
        out.entry(key).or_default().push(v);
    }
    out.into_iter()
        .filter_map(|(k, v)| Some((k, (mean(&v)?, v.len()))))
        .collect()
}

/// Per unit of `arm`, the mean over `scenarios` (with `default`'s means)
/// of its mean there over `default`'s; and the side it makes.
fn pooled_units(inputs: &[(&ScenarioValues, f64)], arm: &str, metric: &str) -> (Vec<f64>, Option<Side>) {
    let mut per_unit: BTreeMap<String, (Vec<f64>, usize)> = BTreeMap::new();
    let mut by_run = false;
    for (input, reference) in inputs {
        let Some(a) = input.arm(arm) else { continue };
        by_run |= a.sample(metric, |v| v).by_run();
        for (key, (m, seeds)) in unit_means(a, metric) {
            let e = per_unit.entry(key).or_default();
            e.0.push(m / reference);
            e.1 += seeds;
        }
    }
    let units: Vec<f64> = per_unit.values().filter_map(|(v, _)| mean(v)).collect();
    // an arm sampled by seed has one unit per seed: n seeds, each a mean over
    // scenarios; by training run, the seeds are every run's over every scenario
    let seeds = if by_run {
        per_unit.values().map(|(_, s)| *s).sum()
    } else {
        units.len()
    };
    let side = mean(&units).map(|m| Side {
        n: units.len(),
        runs: if by_run { units.len() } else { 1 },
        seeds,
        undefined: 0,
        mean: m,
        by_run,
    });
    (units, side)
}

fn adjust(family: &mut LearningFamily) {
    let p: Vec<Option<f64>> = family
        .tests
        .iter()
        .map(|t| t.effect.filter(|e| !e.tied).map(|e| e.test.p))
        .collect();
    for (t, adj) in family.tests.iter_mut().zip(holm(&p)) {
        t.p_holm = t.effect.map(|e| if e.tied { 1.0 } else { adj.unwrap_or(1.0) });
        t.outcome = outcome(t.effect.as_ref(), t.p_holm, t.better);
    }
}

fn registered(inputs: &[&ScenarioValues], arm: &str, control: &str) -> LearningFamily {
    let mut tests = Vec::new();
    for input in inputs {
        let (Some(x), Some(y)) = (input.arm(arm), input.arm(control)) else {
            continue;
        };
        for metric in METRICS {
            let (sx, sy) = (x.sample(metric, |v| v), y.sample(metric, |v| v));
            let rng = streams(
                input.stats_seed,
                [key_hash("learning"), key_hash(metric), key_hash(control), key_hash(arm)],
            );
            tests.push(LearningTest {
                scope: Scope::Scenario(input.scenario.clone()),
                metric,
                better: better_of(metric),
                arm_side: Side::of(&sx),
                control_side: Side::of(&sy),
                effect: effect(&sx, &sy, BOOTSTRAP_RESAMPLES, rng),
                p_holm: None,
                outcome: Outcome::Undefined,
            });
        }
    }
    let mut family = LearningFamily {
        control: control.to_string(),
        pooled: false,
        tests,
    };
    adjust(&mut family);
    family
}

fn pooled(inputs: &[&ScenarioValues], arm: &str, control: &str) -> LearningFamily {
    let both: Vec<&ScenarioValues> = inputs
        .iter()
        .copied()
        .filter(|s| s.arm(arm).is_some() && s.arm(control).is_some())
        .collect();
    let stats_seed = both.first().map_or(0, |s| s.stats_seed);
    let mut tests = Vec::new();
    for metric in METRICS {
        let mut kept: Vec<(&ScenarioValues, f64)> = Vec::new();
        let mut left_out = Vec::new();
        for s in &both {
            let reference = s
                .arm(HEADLINE_BASELINE)
                .and_then(|d| mean(&d.sample(metric, |v| v).groups.concat()))
                .filter(|m| m.is_finite() && *m != 0.0);
            match reference {
                Some(r) => kept.push((s, r)),
                None => left_out.push(s.scenario.clone()),
            }
        }
        let (ux, side_x) = pooled_units(&kept, arm, metric);
        let (uy, side_y) = pooled_units(&kept, control, metric);
        let rng = streams(
            stats_seed,
            [
                key_hash("learning-pooled"),
                key_hash(metric),
                key_hash(control),
                key_hash(arm),
            ],
        );
        tests.push(LearningTest {
            scope: Scope::Pooled {
                scenarios: kept.iter().map(|(s, _)| s.scenario.clone()).collect(),
                left_out,
            },
            metric,
            better: better_of(metric),
            arm_side: side_x,
            control_side: side_y,
            effect: effect(&Sample::seeds(&ux), &Sample::seeds(&uy), BOOTSTRAP_RESAMPLES, rng),
            p_holm: None,
            outcome: Outcome::Undefined,
        });
    }
    let mut family = LearningFamily {
        control: control.to_string(),
        pooled: true,
        tests,
    };
    adjust(&mut family);
    family
}

/// Both families against every control of `arm` ([`controls_of`]) that
/// some input holds beside it, controls in that order; `inputs` sorted by
/// scenario.
pub fn compare(inputs: &[&ScenarioValues], arm: &str) -> Vec<LearningFamily> {
    let mut out = Vec::new();
    for control in controls_of(arm) {
        if !inputs.iter().any(|s| s.arm(arm).is_some() && s.arm(&control).is_some()) {
            continue;
        }
        out.push(registered(inputs, arm, &control));
        out.push(pooled(inputs, arm, &control));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(name: &str, runs: &[(Option<&str>, f64)]) -> ArmValues {
        let values: Vec<(u64, Option<f64>)> = runs
            .iter()
            .enumerate()
            .map(|(i, (_, v))| (i as u64 + 1, Some(*v)))
            .collect();
        ArmValues {
            arm: name.to_string(),
            metrics: METRICS.iter().map(|m| (m.to_string(), values.clone())).collect(),
            training_runs: runs.iter().map(|(r, _)| r.map(str::to_string)).collect(),
            preempts: Some(true),
        }
    }

    fn scenario(name: &str, arms: Vec<ArmValues>) -> ScenarioValues {
        ScenarioValues {
            scenario: name.to_string(),
            uses: Vec::new(),
            stats_seed: 7,
            incomplete: None,
            arms,
        }
    }

    /// five training runs of two seeds each, run r's values near `base + r`
    fn runs(prefix: &str, base: f64) -> Vec<(Option<&'static str>, f64)> {
        let names: [&'static str; 10] = [
            "seed:1000",
            "seed:2000",
            "seed:3000",
            "seed:4000",
            "seed:5000",
            "init:1000",
            "init:2000",
            "init:3000",
            "init:4000",
            "init:5000",
        ];
        let offset = if prefix == "seed" { 0 } else { 5 };
        (0..5)
            .flat_map(|r| {
                let v = base + r as f64 * 0.1;
                [(Some(names[offset + r]), v), (Some(names[offset + r]), v + 0.05)]
            })
            .collect()
    }

    fn seeds(base: f64) -> Vec<(Option<&'static str>, f64)> {
        (0..10).map(|i| (None, base + i as f64 * 0.01)).collect()
    }

    #[test]
    fn the_registered_family_cannot_reject_at_five_runs_against_five_but_the_pooled_one_can() {
        let inputs: Vec<ScenarioValues> = (0..9)
            .map(|i| {
                scenario(
                    &format!("s{i}"),
                    vec![
                        arm("default", &seeds(10.0)),
                        arm("agmarl", &runs("seed", 1.0)),
                        arm("agmarl-untrained", &runs("init", 5.0)),
                    ],
                )
            })
            .collect();
        let sorted: Vec<&ScenarioValues> = inputs.iter().collect();
        let families = compare(&sorted, "agmarl");
        assert_eq!(families.len(), 2, "one control, two families");
        let (reg, pool) = (&families[0], &families[1]);
        assert!(!reg.pooled && pool.pooled);
        assert_eq!((reg.tests.len(), reg.size()), (27, 27));
        for t in &reg.tests {
            let e = t.effect.unwrap();
            // every trained run below every twin: the smallest p of 5 against 5
            assert!((e.test.p - 2.0 / 252.0).abs() < 1e-12, "{}", e.test.p);
            assert_eq!(t.outcome, Outcome::NoDifference, "27 × 2/252 > 0.05");
            assert_eq!(t.arm_side.unwrap().n, 5);
        }
        assert_eq!(pool.tests.len(), 3);
        for t in &pool.tests {
            assert_eq!(t.outcome, Outcome::Better, "3 × 2/252 < 0.05");
            let side = t.arm_side.unwrap();
            assert_eq!((side.n, side.runs, side.seeds, side.by_run), (5, 5, 90, true));
            // run 0 of agmarl: (1.0 + 1.05) / 2 over default's mean 10.045
            let e = t.effect.unwrap();
            assert!(e.diff < 0.0);
            match &t.scope {
                Scope::Pooled { scenarios, left_out } => assert_eq!((scenarios.len(), left_out.len()), (9, 0)),
                Scope::Scenario(_) => panic!("pooled test with a scenario scope"),
            }
        }
        let side = pool.tests[0].arm_side.unwrap();
        let expected = (0..5).map(|r| (1.0 + r as f64 * 0.1 + 0.025) / 10.045).sum::<f64>() / 5.0;
        assert!((side.mean - expected).abs() < 1e-9, "{} vs {expected}", side.mean);
    }

    #[test]
    fn a_control_with_one_run_is_sampled_by_seed_and_a_zero_default_leaves_the_scenario_out() {
        let mut zero_default = arm("default", &seeds(0.0));
        for v in zero_default.metrics.values_mut() {
            for x in v.iter_mut() {
                x.1 = Some(0.0);
            }
        }
        let inputs = [
            scenario(
                "a",
                vec![
                    arm("default", &seeds(2.0)),
                    arm("agmarl", &runs("seed", 1.0)),
                    arm("agmarl-analytic", &seeds(1.0)),
                ],
            ),
            scenario(
                "b",
                vec![
                    zero_default,
                    arm("agmarl", &runs("seed", 1.0)),
                    arm("agmarl-analytic", &seeds(1.0)),
                ],
            ),
        ];
        let sorted: Vec<&ScenarioValues> = inputs.iter().collect();
        let families = compare(&sorted, "agmarl");
        assert_eq!(families.len(), 2);
        assert!(families.iter().all(|f| f.control == "agmarl-analytic"));
        let reg = &families[0];
        let t = &reg.tests[0];
        let (x, y) = (t.arm_side.unwrap(), t.control_side.unwrap());
        assert_eq!((x.n, x.by_run, y.n, y.by_run), (5, true, 10, false));
        let pool = &families[1];
        match &pool.tests[0].scope {
            Scope::Pooled { scenarios, left_out } => {
                assert_eq!(scenarios, &["a".to_string()]);
                assert_eq!(left_out, &["b".to_string()]);
            }
            Scope::Scenario(_) => panic!("pooled test with a scenario scope"),
        }
        let y = pool.tests[0].control_side.unwrap();
        // ten units, one per seed, whatever the number of scenarios
        assert_eq!((y.n, y.seeds, y.by_run), (10, 10, false));
    }

    #[test]
    fn no_control_no_family() {
        let inputs = [scenario(
            "a",
            vec![arm("default", &seeds(2.0)), arm("agmarl", &runs("seed", 1.0))],
        )];
        let sorted: Vec<&ScenarioValues> = inputs.iter().collect();
        assert!(compare(&sorted, "agmarl").is_empty());
    }

    #[test]
    fn an_ablation_is_compared_with_its_own_twin_only() {
        let inputs = [scenario(
            "a",
            vec![
                arm("default", &seeds(2.0)),
                arm("agmarl-nognn", &runs("seed", 1.0)),
                arm("agmarl-nognn-untrained", &runs("init", 5.0)),
                // the full method's controls stand beside agmarl, not beside its ablations
                arm("agmarl-untrained", &runs("init", 0.0)),
                arm("agmarl-analytic", &seeds(0.0)),
            ],
        )];
        let sorted: Vec<&ScenarioValues> = inputs.iter().collect();
        let families = compare(&sorted, "agmarl-nognn");
        assert_eq!(families.len(), 2);
        assert!(families.iter().all(|f| f.control == "agmarl-nognn-untrained"));
        assert_eq!(
            families[1].title(),
            "against `agmarl-nognn-untrained`, pooled over scenarios (amendment 2)"
        );
        // trained below its twin on every run: the pooled family rejects (3 × 2/252 < 0.05)
        assert!(families[1].tests.iter().all(|t| t.outcome == Outcome::Better));
        // and agmarl, absent here, has no family
        assert!(compare(&sorted, "agmarl").is_empty());
    }
}
