//! What the claims are computed from: per scenario and arm, the per-seed
//! values of the metrics the claims name, and the scenario's statistics
//! seed. Built from a [`Summary`] (the run folders' records) or from a
//! summary.json that `schedlab` wrote.

use super::ClaimsError;
use super::mapping::CLAIMS;
use crate::definitions::{CORRELATIONS, METRICS};
use crate::summary::{ArmSummary, Summary};
use serde_json::Value;
use std::collections::BTreeMap;

/// (seed, value) of every run of an arm, in seed order; `None` where the
/// metric is undefined in that run.
pub type SeedValues = Vec<(u64, Option<f64>)>;

/// One arm of a scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct ArmValues {
    pub arm: String,
    /// metric key -> per-seed values, for the metrics the claims name
    pub metrics: BTreeMap<String, SeedValues>,
}

/// One scenario's arms.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioValues {
    pub scenario: String,
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

/// The metric keys the claims name, each once.
fn claim_metrics() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for row in CLAIMS.iter().flat_map(|c| c.rows) {
        if !out.contains(&row.metric) {
            out.push(row.metric);
        }
    }
    out
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
    /// The claims' metrics of every arm of `summary`.
    pub fn from_summary(summary: &Summary, incomplete: Option<String>) -> Result<ScenarioValues, ClaimsError> {
        let mut arms = Vec::new();
        for arm in summary.arms() {
            let mut metrics = BTreeMap::new();
            for key in claim_metrics() {
                let values = match arm.metric(key) {
                    Some(m) => m.values.clone(),
                    None => correlation_values(arm, key).ok_or(ClaimsError::UnknownMetric { metric: key })?,
                };
                metrics.insert(key.to_string(), values);
            }
            arms.push(ArmValues {
                arm: arm.arm.clone(),
                metrics,
            });
        }
        Ok(ScenarioValues {
            scenario: summary.scenario().to_string(),
            stats_seed: summary.stats_seed(),
            incomplete,
            arms,
        })
    }

    /// The same from a summary.json as `schedlab` writes it (per arm
    /// `metrics.<key>.values` and `correlations[].pearson.value`), so that
    /// the claims of runs whose raw records are gone can still be computed.
    pub fn from_summary_json(json: &Value) -> Result<ScenarioValues, ClaimsError> {
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
            let mut metrics = BTreeMap::new();
            for key in claim_metrics() {
                let (list, field) = if METRICS.iter().any(|d| d.key == key) {
                    (&a["metrics"][key]["values"], None)
                } else if CORRELATIONS.iter().any(|d| d.key == key) {
                    let field = match key {
                        "mem_failure_pearson" => "pearson",
                        "mem_failure_spearman" => "spearman",
                        _ => return Err(ClaimsError::UnknownMetric { metric: key }),
                    };
                    (&a["correlations"], Some(field))
                } else {
                    return Err(ClaimsError::UnknownMetric { metric: key });
                };
                let list = list
                    .as_array()
                    .ok_or_else(|| bad(format!("arm {arm}: no per-seed values of {key}")))?;
                let mut values = Vec::new();
                for v in list {
                    let seed = v["seed"]
                        .as_u64()
                        .ok_or_else(|| bad(format!("arm {arm}: a value of {key} without a seed")))?;
                    let value = match field {
                        None => &v["value"],
                        Some(f) => &v[f]["value"],
                    };
                    values.push((seed, value.as_f64().filter(|x| x.is_finite())));
                }
                values.sort_by_key(|(s, _)| *s);
                metrics.insert(key.to_string(), values);
            }
            arms.push(ArmValues {
                arm: arm.to_string(),
                metrics,
            });
        }
        Ok(ScenarioValues {
            scenario: scenario.to_string(),
            stats_seed,
            incomplete,
            arms,
        })
    }
}
