//! What the claims are computed from: per scenario its declared claims and
//! roles, its statistics seed, and per arm the per-run values of the metrics
//! the claims name, each with its training run, and whether the arm
//! preempts. Built from a [`Summary`] with its run folders (the records and
//! manifests), or from a summary.json that `schedlab` wrote.

use super::ClaimsError;
use super::catalogue::ClaimUse;
use super::effect::Sample;
use super::learning::METRICS as LEARNING_METRICS;
use super::mapping::claim_metrics;
use crate::definitions::{CORRELATIONS, METRICS};
use crate::run_folder::RunFolderData;
use crate::summary::{ArmSummary, Summary};
use serde_json::Value;
use std::collections::BTreeMap;

/// (seed, value) of every run of an arm, in seed order; `None` where the
/// metric is undefined in that run.
pub type SeedValues = Vec<(u64, Option<f64>)>;

/// The metrics the claims and the learning comparison name, each once.
fn table_metrics() -> Vec<&'static str> {
    let mut keys = claim_metrics();
    for m in LEARNING_METRICS {
        if !keys.contains(&m) {
            keys.push(m);
        }
    }
    keys
}

/// One arm of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmValues {
    pub arm: String,
    /// metric key -> per-run values, for the metrics the claims name
    pub metrics: BTreeMap<String, SeedValues>,
    /// the training run of each run, parallel to every metric's values;
    /// `None` where the run has none or it is unknown
    pub training_runs: Vec<Option<String>>,
    /// whether the arm preempts (`arm_facts.<arm>.preempts` of every folder
    /// holding it); `None`: unknown, or its folders disagree
    pub preempts: Option<bool>,
}

impl ArmValues {
    /// The values of `metric`, each mapped by `f`, grouped by training run.
    pub fn sample(&self, metric: &str, f: impl Fn(f64) -> f64) -> Sample {
        let Some(values) = self.metrics.get(metric) else {
            return Sample::default();
        };
        let pairs: Vec<(Option<&str>, Option<f64>)> = values
            .iter()
            .enumerate()
            .map(|(i, (_, v))| {
                let run = self.training_runs.get(i).and_then(|r| r.as_deref());
                (run, v.map(&f))
            })
            .collect();
        Sample::of(&pairs)
    }

    /// The distinct training runs of the arm.
    pub fn training_run_count(&self) -> usize {
        let mut runs: Vec<&Option<String>> = self.training_runs.iter().collect();
        runs.sort();
        runs.dedup();
        runs.len()
    }
}

/// One scenario's arms.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioValues {
    pub scenario: String,
    /// the claims the scenario declares, each with its role
    pub uses: Vec<ClaimUse>,
    /// the summary's statistics seed; the claims' bootstrap streams derive
    /// from it
    pub stats_seed: u64,
    /// "INCOMPLETE: n of m runs" when the values come from part of the runs
    pub incomplete: Option<String>,
    /// in the summary's arm order
    pub arms: Vec<ArmValues>,
}

impl ScenarioValues {
    pub fn arm(&self, name: &str) -> Option<&ArmValues> {
        self.arms.iter().find(|a| a.arm == name)
    }
}

/// A per-run correlation of `arm` as per-seed values; `None` for a key that
/// is not one.
fn correlation_values(arm: &ArmSummary, key: &str) -> Option<SeedValues> {
    let pick = |i: usize| -> Option<f64> {
        let (c, d) = (arm.correlations.get(i)?, arm.decoupling.get(i)?);
        match key {
            "mem_failure_pearson" => c.pearson.as_ref().map(|e| e.value),
            "mem_failure_spearman" => c.spearman.as_ref().map(|e| e.value),
            _ => d.partial.pearson.as_ref().map(|e| e.value),
        }
    };
    matches!(
        key,
        "mem_failure_pearson" | "mem_failure_spearman" | "mem_failure_partial_pearson"
    )
    .then(|| {
        arm.runs
            .iter()
            .enumerate()
            .map(|(i, r)| (r.seed, pick(i).filter(|v| v.is_finite())))
            .collect()
    })
}

impl ScenarioValues {
    /// The claims' metrics of every arm of `summary`, each run with its
    /// training run; no declared claims and no arm facts (see
    /// [`ScenarioValues::with_folder`]).
    pub fn from_summary(summary: &Summary, incomplete: Option<String>) -> Result<ScenarioValues, ClaimsError> {
        let mut arms = Vec::new();
        for arm in summary.arms() {
            let mut metrics = BTreeMap::new();
            for key in table_metrics() {
                let values = match arm.metric(key) {
                    Some(m) => m.values.clone(),
                    None => correlation_values(arm, key).ok_or(ClaimsError::UnknownMetric { metric: key })?,
                };
                metrics.insert(key.to_string(), values);
            }
            arms.push(ArmValues {
                arm: arm.arm.clone(),
                metrics,
                training_runs: arm.runs.iter().map(|r| r.training_run.clone()).collect(),
                preempts: None,
            });
        }
        Ok(ScenarioValues {
            scenario: summary.scenario().to_string(),
            uses: Vec::new(),
            stats_seed: summary.stats_seed(),
            incomplete,
            arms,
        })
    }

    /// The same with what the run folders say: the scenario's declared
    /// claims and each arm's facts.
    pub fn with_folder(mut self, data: &RunFolderData) -> ScenarioValues {
        self.uses = data.claims.clone();
        for arm in &mut self.arms {
            let facts: Vec<Option<bool>> = data
                .runs
                .iter()
                .filter(|r| r.arm == arm.arm)
                .map(|r| r.facts.as_ref().and_then(|f| f.preempts))
                .collect();
            arm.preempts = match facts.first() {
                Some(first) if facts.iter().all(|f| f == first) => *first,
                _ => None,
            };
        }
        self
    }

    /// The claims' metrics from a summary.json as `schedlab` writes it (per
    /// arm `metrics.<key>.values`, `correlations[].partial.pearson.value`),
    /// so that the claims of runs whose raw records are gone can still be
    /// computed. A summary.json holds neither the scenario's declared claims
    /// (give them as `uses`) nor arm facts or training runs (unknown); a
    /// metric it lacks (one added since it was written) is undefined in
    /// every run.
    pub fn from_summary_json(json: &Value, uses: Vec<ClaimUse>) -> Result<ScenarioValues, ClaimsError> {
        let bad = |what: String| ClaimsError::SummaryJson { what };
        let scenario = json["scenario"]
            .as_str()
            .ok_or_else(|| bad("no \"scenario\" string".into()))?;
        let stats_seed = json["stats_seed"]
            .as_u64()
            .ok_or_else(|| bad("no \"stats_seed\" integer".into()))?;
        let incomplete = json["incomplete"].as_str().map(str::to_string);
        let mut arms = Vec::new();
        for a in json["arms"].as_array().ok_or_else(|| bad("no \"arms\" array".into()))? {
            let arm = a["arm"].as_str().ok_or_else(|| bad("an arm without a name".into()))?;
            let seeds: Vec<u64> = a["seeds"]
                .as_array()
                .ok_or_else(|| bad(format!("arm {arm}: no \"seeds\" array")))?
                .iter()
                .map(|s| {
                    s.as_u64()
                        .ok_or_else(|| bad(format!("arm {arm}: a seed that is not an integer")))
                })
                .collect::<Result<_, _>>()?;
            let mut metrics = BTreeMap::new();
            for key in table_metrics() {
                let (list, path): (&Value, &[&str]) = if METRICS.iter().any(|d| d.key == key) {
                    (&a["metrics"][key]["values"], &["value"])
                } else if CORRELATIONS.iter().any(|d| d.key == key) {
                    let path: &[&str] = match key {
                        "mem_failure_pearson" => &["pearson", "value"],
                        "mem_failure_spearman" => &["spearman", "value"],
                        "mem_failure_partial_pearson" => &["partial", "pearson", "value"],
                        _ => return Err(ClaimsError::UnknownMetric { metric: key }),
                    };
                    (&a["correlations"], path)
                } else {
                    return Err(ClaimsError::UnknownMetric { metric: key });
                };
                let values = match list {
                    Value::Null => seeds.iter().map(|s| (*s, None)).collect(),
                    Value::Array(list) => {
                        let mut values = Vec::new();
                        for v in list {
                            let seed = v["seed"]
                                .as_u64()
                                .ok_or_else(|| bad(format!("arm {arm}: a value of {key} without a seed")))?;
                            let value = path.iter().fold(v, |v, p| &v[*p]);
                            values.push((seed, value.as_f64().filter(|x| x.is_finite())));
                        }
                        values.sort_by_key(|(s, _)| *s);
                        values
                    }
                    _ => return Err(bad(format!("arm {arm}: the per-seed values of {key} are not an array"))),
                };
                metrics.insert(key.to_string(), values);
            }
            let runs = metrics.values().map(Vec::len).max().unwrap_or(0);
            arms.push(ArmValues {
                arm: arm.to_string(),
                metrics,
                training_runs: vec![None; runs],
                preempts: None,
            });
        }
        Ok(ScenarioValues {
            scenario: scenario.to_string(),
            uses,
            stats_seed,
            incomplete,
            arms,
        })
    }
}
