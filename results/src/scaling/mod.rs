//! Table D of the pre-registration (amendment 9): claim 5, whether the
//! per-node agents scale where the monolithic foil does not. It reads run
//! folders of the same scenarios at several cluster sizes (and the foil's
//! training folders) and computes:
//!
//! - **D1, decision-time growth:** each arm's exponent b of `p99 ∝ N^b`
//!   ([`fit`]), with a 95% percentile interval from resampling the seeds
//!   within each size, and the interval of `b_foil − b_judged`: the judged
//!   arm is better when it lies above 0, worse when below;
//! - **D2, quality where both run:** cost and failures per running
//!   pod-hour, judged against foil, Mann–Whitney over seeds, Holm over
//!   every D2 test;
//! - **D4, training cost:** the foil's training folders, with the exponent of
//!   its wall time to converge in N (one run per size: no interval).
//!
//! D3 (the foil asked to run at a size it was not trained for) is a refusal
//! of `schedlab scenario`, recorded by the script that runs table D.

pub mod error;
pub mod fit;
pub mod input;
mod render;

pub use error::ScalingError;
pub use input::{Converged, RunPoint, SizeRuns, TrainingFacts, read_folder, read_training};

use crate::claims::TABLE_D;
use crate::claims::verdict::Outcome;
use crate::stats::cliffs_delta;
use crate::stats::{holm, mann_whitney, percentile_interval};
use crate::summary::key_hash;
use schedlab_core::rng::{purpose, stream};
use serde::Serialize;
use std::collections::BTreeMap;

/// Bootstrap resamples of D1 (as registered: [`TABLE_D`]).
pub const RESAMPLES: usize = TABLE_D.resamples;
/// D1's interval.
pub const CONFIDENCE: f64 = TABLE_D.confidence;
/// D2's significance level after Holm.
pub const ALPHA: f64 = TABLE_D.alpha;
/// Sizes an exponent needs.
pub const MIN_SIZES: usize = TABLE_D.min_sizes;
/// Seed of the resampling streams.
const STATS_SEED: u64 = 9;
/// Stream key (under `purpose::STATISTICS`).
const STREAM_SCALING: u64 = 0x7363_616c_6564; // "scaled"

/// One arm's exponent on one scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Exponent {
    pub arm: String,
    /// the sizes it ran at
    pub sizes: Vec<usize>,
    pub runs: usize,
    /// median p99 (ms) at each size
    pub p99_median_ms: Vec<f64>,
    pub exponent: Option<f64>,
    pub interval: Option<[f64; 2]>,
}

/// D1 on one scenario.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Growth {
    pub scenario: String,
    pub exponents: Vec<Exponent>,
    /// `b_foil − b_judged` and its interval
    pub difference: Option<f64>,
    pub difference_interval: Option<[f64; 2]>,
    pub outcome: Outcome,
}

/// One D2 test.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Quality {
    pub scenario: String,
    pub nodes: usize,
    pub metric: &'static str,
    pub judged_mean: Option<f64>,
    pub foil_mean: Option<f64>,
    pub cliffs_delta: Option<f64>,
    pub p: Option<f64>,
    pub p_holm: Option<f64>,
    pub outcome: Outcome,
}

/// Claim 5's verdict from D1 and D2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Supported,
    Contradicted,
    NotShown,
}

/// Table D.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScalingTable {
    pub judged: String,
    pub foil: String,
    pub growth: Vec<Growth>,
    pub quality: Vec<Quality>,
    /// every arm of the folders at every size, described
    pub arms: Vec<ArmAtSize>,
    pub training: Vec<TrainingFacts>,
    /// the judged arm's training, when known
    pub judged_training: Option<JudgedTraining>,
    /// per foil arm: the exponent of wall time to converge in N
    pub training_exponents: BTreeMap<String, Option<f64>>,
    pub verdict: Verdict,
    /// the registration it was computed under
    pub preregistration: Preregistration,
}

/// One arm at one size, described (not tested): issue "The monolithic
/// foil" asks for every arm beside the two the claim compares.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArmAtSize {
    pub scenario: String,
    pub nodes: usize,
    pub arm: String,
    pub runs: usize,
    pub cost_usd_mean: Option<f64>,
    pub failures_per_running_pod_hour_mean: Option<f64>,
    pub oom_pressure_events_mean: Option<f64>,
    /// medians over seeds of each run's p50 and p99
    pub decision_p50_median_ms: Option<f64>,
    pub decision_p99_median_ms: Option<f64>,
}

fn described(r: &SizeRuns) -> Vec<ArmAtSize> {
    let values = |points: &[RunPoint], get: fn(&RunPoint) -> Option<f64>| -> Vec<f64> {
        points.iter().filter_map(get).collect()
    };
    r.arms
        .iter()
        .map(|(arm, points)| ArmAtSize {
            scenario: r.scenario.clone(),
            nodes: r.nodes,
            arm: arm.clone(),
            runs: points.len(),
            cost_usd_mean: crate::stats::mean(&values(points, |p| p.cost_usd)),
            failures_per_running_pod_hour_mean: crate::stats::mean(&values(points, |p| {
                p.failures_per_running_pod_hour
            })),
            oom_pressure_events_mean: crate::stats::mean(&values(points, |p| p.oom_pressure_events)),
            decision_p50_median_ms: crate::stats::median(&values(points, |p| p.decision_p50_ms)),
            decision_p99_median_ms: crate::stats::median(&values(points, |p| p.decision_p99_ms)),
        })
        .collect()
}

/// The judged arm's one training, used at every size (D4's other side).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgedTraining {
    pub arm: String,
    /// the checkpoint: a file, or the bundled one's origin
    pub origin: String,
    /// the node counts of its training scenarios
    pub trained_at: Vec<usize>,
    pub parameters: u64,
    pub episodes: u64,
    pub transitions: u64,
    /// None when its sidecar does not say
    pub wall_seconds: Option<f64>,
}

/// Which registered rules table D followed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Preregistration {
    pub path: &'static str,
    /// the date of the block in force
    pub date: String,
    pub sha256: String,
}

fn p99_by_size(runs: &[&SizeRuns], arm: &str) -> fit::BySize {
    let mut by: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for r in runs {
        if let Some(points) = r.arms.get(arm) {
            let v: Vec<f64> = points.iter().filter_map(|p| p.decision_p99_ms).collect();
            if !v.is_empty() {
                by.entry(r.nodes).or_default().extend(v);
            }
        }
    }
    by.into_iter().collect()
}

fn exponent(arm: &str, by_size: &fit::BySize, rng: &mut impl rand::Rng) -> (Exponent, Vec<f64>) {
    let enough = by_size.len() >= MIN_SIZES;
    let point = if enough { fit::log_log_slope(by_size) } else { None };
    let replicates: Vec<f64> = if point.is_some() {
        (0..RESAMPLES)
            .filter_map(|_| fit::log_log_slope(&fit::resample(by_size, rng)))
            .collect()
    } else {
        Vec::new()
    };
    let interval = percentile_interval(&mut replicates.clone(), CONFIDENCE).map(|i| [i.low, i.high]);
    let medians = by_size.iter().filter_map(|(_, v)| crate::stats::median(v)).collect();
    (
        Exponent {
            arm: arm.to_string(),
            sizes: by_size.iter().map(|(n, _)| *n).collect(),
            runs: by_size.iter().map(|(_, v)| v.len()).sum(),
            p99_median_ms: medians,
            exponent: point,
            interval: if point.is_some() { interval } else { None },
        },
        replicates,
    )
}

fn growth(scenario: &str, runs: &[&SizeRuns], judged: &str, foil: &str) -> Growth {
    let key = key_hash(scenario);
    let mut rng_j = stream(
        STATS_SEED,
        &[purpose::STATISTICS, STREAM_SCALING, key, key_hash(judged)],
    );
    let mut rng_f = stream(STATS_SEED, &[purpose::STATISTICS, STREAM_SCALING, key, key_hash(foil)]);
    let (ej, rj) = exponent(judged, &p99_by_size(runs, judged), &mut rng_j);
    let (ef, rf) = exponent(foil, &p99_by_size(runs, foil), &mut rng_f);
    let difference = ef.exponent.zip(ej.exponent).map(|(f, j)| f - j);
    let mut diffs: Vec<f64> = rf.iter().zip(&rj).map(|(f, j)| f - j).collect();
    let interval = if difference.is_some() {
        percentile_interval(&mut diffs, CONFIDENCE).map(|i| [i.low, i.high])
    } else {
        None
    };
    let outcome = match interval {
        Some([low, _]) if low > 0.0 => Outcome::Better,
        Some([_, high]) if high < 0.0 => Outcome::Worse,
        Some(_) => Outcome::NoDifference,
        None => Outcome::Undefined,
    };
    Growth {
        scenario: scenario.to_string(),
        exponents: vec![ej, ef],
        difference,
        difference_interval: interval,
        outcome,
    }
}

fn quality(runs: &[&SizeRuns], judged: &str, foil: &str) -> Vec<Quality> {
    let mut tests = Vec::new();
    for r in runs {
        let (Some(j), Some(f)) = (r.arms.get(judged), r.arms.get(foil)) else {
            continue;
        };
        let metrics = TABLE_D.guards.iter().filter_map(|m| Some((*m, guard_value(m)?)));
        for (metric, get) in metrics {
            let x: Vec<f64> = j.iter().filter_map(get).collect();
            let y: Vec<f64> = f.iter().filter_map(get).collect();
            tests.push(Quality {
                scenario: r.scenario.clone(),
                nodes: r.nodes,
                metric,
                judged_mean: crate::stats::mean(&x),
                foil_mean: crate::stats::mean(&y),
                cliffs_delta: cliffs_delta(&x, &y),
                p: mann_whitney(&x, &y).map(|m| m.p),
                p_holm: None,
                outcome: Outcome::Undefined,
            });
        }
    }
    let adjusted = holm(&tests.iter().map(|t| t.p).collect::<Vec<_>>());
    for (t, p) in tests.iter_mut().zip(adjusted) {
        t.p_holm = p;
        // both metrics are better lower: a negative delta is the judged arm's lower values
        t.outcome = match (p, t.cliffs_delta) {
            (Some(p), Some(d)) if p < ALPHA && d < 0.0 => Outcome::Better,
            (Some(p), Some(d)) if p < ALPHA && d > 0.0 => Outcome::Worse,
            (Some(_), Some(_)) => Outcome::NoDifference,
            _ => Outcome::Undefined,
        };
    }
    tests
}

/// A D2 guard's value in a run, by the metric the registration names.
fn guard_value(metric: &str) -> Option<fn(&RunPoint) -> Option<f64>> {
    match metric {
        "cost_usd" => Some(|p| p.cost_usd),
        "failures_per_running_pod_hour" => Some(|p| p.failures_per_running_pod_hour),
        _ => None,
    }
}

/// Table D from the run folders `runs` (each one scenario at one size), the
/// foil's training folders and the judged arm's training, `judged` against
/// `foil`.
pub fn analyse(
    runs: &[SizeRuns],
    training: Vec<TrainingFacts>,
    judged_training: Option<JudgedTraining>,
    judged: &str,
    foil: &str,
) -> Result<ScalingTable, ScalingError> {
    // folders of one scenario at one size merge (a DRS arm needs a run of its
    // own per network); an arm in two of them is refused
    let mut merged: BTreeMap<(&str, usize), SizeRuns> = BTreeMap::new();
    let mut origin: BTreeMap<(&str, usize, &str), &str> = BTreeMap::new();
    for r in runs {
        for arm in r.arms.keys() {
            if let Some(first) = origin.insert((&r.scenario, r.nodes, arm), &r.folder) {
                return Err(ScalingError::Duplicate {
                    arm: arm.clone(),
                    scenario: r.scenario.clone(),
                    nodes: r.nodes,
                    first: first.to_string(),
                    second: r.folder.clone(),
                });
            }
        }
        let entry = merged.entry((&r.scenario, r.nodes)).or_insert_with(|| SizeRuns {
            folder: r.folder.clone(),
            scenario: r.scenario.clone(),
            nodes: r.nodes,
            arms: BTreeMap::new(),
        });
        entry.arms.extend(r.arms.iter().map(|(a, p)| (a.clone(), p.clone())));
    }
    let mut by_scenario: BTreeMap<&str, Vec<&SizeRuns>> = BTreeMap::new();
    for r in merged.values() {
        by_scenario.entry(&r.scenario).or_default().push(r);
    }
    for list in by_scenario.values_mut() {
        list.sort_by_key(|r| r.nodes);
    }
    let growth: Vec<Growth> = by_scenario
        .iter()
        .map(|(s, list)| growth(s, list, judged, foil))
        .collect();
    let all: Vec<&SizeRuns> = by_scenario.values().flatten().copied().collect();
    let quality = quality(&all, judged, foil);
    let every_arm: Vec<ArmAtSize> = all.iter().flat_map(|r| described(r)).collect();
    let mut training_exponents = BTreeMap::new();
    let mut arms: Vec<&str> = training.iter().map(|t| t.arm.as_str()).collect();
    arms.dedup();
    for arm in arms {
        let by_size: fit::BySize = training
            .iter()
            .filter(|t| t.arm == arm)
            .filter_map(|t| Some((t.nodes, vec![t.converged?.wall_seconds])))
            .collect();
        let e = (by_size.len() >= 2).then(|| fit::log_log_slope(&by_size)).flatten();
        training_exponents.insert(arm.to_string(), e);
    }
    let any = |o: Outcome| growth.iter().any(|g| g.outcome == o);
    let verdict = if !growth.is_empty()
        && growth.iter().all(|g| g.outcome == Outcome::Better)
        && !quality.iter().any(|q| q.outcome == Outcome::Worse)
    {
        Verdict::Supported
    } else if any(Outcome::Worse) && !any(Outcome::Better) {
        Verdict::Contradicted
    } else {
        Verdict::NotShown
    };
    let registration = crate::claims::prereg::registration()?;
    Ok(ScalingTable {
        preregistration: Preregistration {
            path: crate::claims::prereg::PREREGISTRATION_PATH,
            date: registration.date,
            sha256: registration.sha256,
        },
        judged: judged.to_string(),
        foil: foil.to_string(),
        growth,
        quality,
        arms: every_arm,
        training,
        judged_training,
        training_exponents,
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(scenario: &str, nodes: usize, arms: &[(&str, f64, f64)]) -> SizeRuns {
        SizeRuns {
            folder: format!("{scenario}-{nodes}"),
            scenario: scenario.into(),
            nodes,
            arms: arms
                .iter()
                .map(|(arm, p99, cost)| {
                    let points = (1..=10)
                        .map(|seed| RunPoint {
                            seed,
                            // a little spread so intervals have width
                            decision_p50_ms: Some(p99 / 2.0),
                            decision_p99_ms: Some(p99 * (1.0 + 0.01 * seed as f64)),
                            cost_usd: Some(cost + 0.01 * seed as f64),
                            failures_per_running_pod_hour: Some(1.0 + 0.01 * seed as f64),
                            oom_pressure_events: Some(seed as f64),
                        })
                        .collect();
                    (arm.to_string(), points)
                })
                .collect(),
        }
    }

    /// agmarl grows as N^0.2, drs as N^1.5; equal quality
    fn table(foil_exponent: f64) -> Vec<SizeRuns> {
        [10usize, 40, 160]
            .iter()
            .map(|&n| {
                let x = n as f64;
                size(
                    "churn",
                    n,
                    &[
                        ("agmarl", 0.05 * x.powf(0.2), 5.0),
                        ("drs", 0.01 * x.powf(foil_exponent), 5.0),
                    ],
                )
            })
            .collect()
    }

    #[test]
    fn a_foil_that_grows_faster_is_beaten_on_d1_and_equal_quality_keeps_the_guard() {
        let t = analyse(&table(1.5), Vec::new(), None, "agmarl", "drs").unwrap();
        let g = &t.growth[0];
        assert_eq!(g.exponents[0].sizes, vec![10, 40, 160]);
        assert!((g.exponents[0].exponent.unwrap() - 0.2).abs() < 0.01);
        assert!((g.exponents[1].exponent.unwrap() - 1.5).abs() < 0.01);
        let [low, high] = g.difference_interval.unwrap();
        assert!(low > 1.0 && high < 1.6, "{low} {high}");
        assert_eq!(g.outcome, Outcome::Better);
        assert_eq!(t.quality.len(), 6);
        assert!(t.quality.iter().all(|q| q.outcome == Outcome::NoDifference));
        assert_eq!(t.verdict, Verdict::Supported);
        // the same table computes to the same numbers
        assert_eq!(analyse(&table(1.5), Vec::new(), None, "agmarl", "drs").unwrap(), t);
    }

    #[test]
    fn a_foil_that_grows_slower_contradicts_and_two_sizes_say_nothing() {
        let t = analyse(&table(0.0), Vec::new(), None, "agmarl", "drs").unwrap();
        assert_eq!(t.growth[0].outcome, Outcome::Worse);
        assert_eq!(t.verdict, Verdict::Contradicted);
        let two: Vec<SizeRuns> = table(1.5).into_iter().take(2).collect();
        let t = analyse(&two, Vec::new(), None, "agmarl", "drs").unwrap();
        assert_eq!(t.growth[0].outcome, Outcome::Undefined);
        assert_eq!(t.growth[0].exponents[0].exponent, None);
        assert_eq!(t.verdict, Verdict::NotShown);
    }

    #[test]
    fn worse_quality_somewhere_keeps_the_claim_from_support() {
        let mut runs = table(1.5);
        // agmarl costs more at 160 nodes on every seed
        for p in runs[2].arms.get_mut("agmarl").unwrap() {
            p.cost_usd = p.cost_usd.map(|c| c + 10.0);
        }
        let t = analyse(&runs, Vec::new(), None, "agmarl", "drs").unwrap();
        assert_eq!(t.growth[0].outcome, Outcome::Better);
        assert!(t.quality.iter().any(|q| q.outcome == Outcome::Worse && q.nodes == 160));
        assert_eq!(t.verdict, Verdict::NotShown);
    }

    /// Every registered guard is read from the runs: none is skipped silently.
    #[test]
    fn every_registered_guard_has_a_value() {
        for g in TABLE_D.guards {
            assert!(guard_value(g).is_some(), "{g}");
        }
        assert_eq!(TABLE_D.primary, "decision_p99_ms");
    }

    #[test]
    fn one_arm_of_a_size_twice_is_refused() {
        let mut runs = table(1.5);
        let mut again = runs[0].clone();
        again.folder = "elsewhere".into();
        runs.push(again);
        let err = analyse(&runs, Vec::new(), None, "agmarl", "drs")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("arm agmarl of churn at 10 nodes") && err.contains("elsewhere"),
            "{err}"
        );
    }

    /// Another arm's folder at a size merges with the one there, and every
    /// arm is described at every size.
    #[test]
    fn folders_of_one_size_merge_and_every_arm_is_described() {
        let mut runs = table(1.5);
        runs.push(size("churn", 40, &[("drs-agmarl-reward", 0.5, 7.0)]));
        let t = analyse(&runs, Vec::new(), None, "agmarl", "drs").unwrap();
        assert_eq!(t.arms.len(), 7);
        let extra = t.arms.iter().find(|a| a.arm == "drs-agmarl-reward").unwrap();
        assert_eq!((extra.nodes, extra.runs), (40, 10));
        assert!((extra.cost_usd_mean.unwrap() - 7.055).abs() < 1e-9);
        assert_eq!(extra.decision_p50_median_ms, Some(0.25));
        assert!((extra.oom_pressure_events_mean.unwrap() - 5.5).abs() < 1e-9);
        // the claim's own rows do not change
        assert_eq!(t.verdict, Verdict::Supported);
        assert_eq!(t.quality.len(), 6);
        assert!(t.to_markdown().contains("| churn | 40 | drs-agmarl-reward | 10 |"));
    }
}
