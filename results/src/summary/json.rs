//! summary.json: every statistic and every per-seed value behind the tables.

use super::{Summary, VS_REFERENCE, VsReference};
use crate::definitions::{ACROSS_SEEDS, CORRELATIONS, METRICS};
use crate::pareto::OBJECTIVES;
use crate::stats::{ALPHA, BOOTSTRAP_RESAMPLES, CONFIDENCE, Estimate};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// A JSON number, or null where undefined (JSON has no NaN).
fn num(x: Option<f64>) -> Value {
    x.filter(|v| v.is_finite()).map_or(Value::Null, Value::from)
}

fn vs_reference(c: Option<&VsReference>) -> Value {
    match c {
        None => Value::Null,
        Some(c) => json!({
            "u": num(Some(c.test.u)),
            "n": c.test.n_x,
            "n_reference": c.test.n_y,
            "p": num(Some(c.test.p)),
            "p_method": c.test.method,
            "p_holm": num(Some(c.p_holm)),
            "cliffs_delta": num(Some(c.cliffs_delta)),
            "a12": num(Some(c.a12)),
            "significant": c.significant,
            "holm_family_size": c.family_size,
        }),
    }
}

// The document is serialised from these views, not built as a
// `serde_json::Value` first: a Value spends about 700 bytes on each small
// object, so the per-seed values alone took ~90 KB a run, and a summary of
// thousands of runs gigabytes. Each view's fields are in the alphabetical
// order a Value's map writes them in, so the text is the same.

/// A finite number, or null (JSON has no NaN).
#[derive(Debug, Serialize)]
struct Num(Option<f64>);

fn number(x: Option<f64>) -> Num {
    Num(x.filter(|v| v.is_finite()))
}

#[derive(Debug, Serialize)]
struct EstimateView {
    ci_high: Num,
    ci_low: Num,
    undefined_resamples: usize,
    value: Num,
}

fn estimate(e: Option<&Estimate>) -> Option<EstimateView> {
    e.map(|e| EstimateView {
        ci_high: number(e.ci.map(|c| c.high)),
        ci_low: number(e.ci.map(|c| c.low)),
        undefined_resamples: e.undefined_resamples,
        value: number(Some(e.value)),
    })
}

#[derive(Debug, Serialize)]
struct SeedValue {
    seed: u64,
    value: Num,
}

#[derive(Debug, Serialize)]
struct MetricView<'a> {
    better: &'a crate::definitions::Better,
    ci_high: Num,
    ci_low: Num,
    mean: Num,
    median: Num,
    n: usize,
    std: Num,
    undefined: usize,
    unit: &'a str,
    values: Vec<SeedValue>,
    vs_reference: Value,
}

#[derive(Debug, Serialize)]
struct TemplateView<'a> {
    n: usize,
    name: &'a str,
    pearson: Option<EstimateView>,
    spearman: Option<EstimateView>,
    workload: u32,
}

#[derive(Debug, Serialize)]
struct PartialView {
    n: usize,
    pearson: Option<EstimateView>,
    templates: usize,
}

#[derive(Debug, Serialize)]
struct CorrelationView<'a> {
    n: usize,
    partial: PartialView,
    pearson: Option<EstimateView>,
    resamples: usize,
    seed: u64,
    spearman: Option<EstimateView>,
    templates: Vec<TemplateView<'a>>,
}

/// A run's decision-time facts beside its metrics: how many, and whether
/// they were charged to virtual time (then they shaped the records too).
#[derive(Debug, Serialize)]
struct DecisionTimesView {
    charged: bool,
    decisions: u64,
}

#[derive(Debug, Serialize)]
struct RunView<'a> {
    binds: u64,
    cluster_samples: u64,
    decision_times: Option<DecisionTimesView>,
    end_s: f64,
    nodes: u32,
    sched_latency_ms_hdr_v2_base64: &'a str,
    seed: u64,
}

#[derive(Debug, Serialize)]
struct ArmView<'a> {
    arm: &'a str,
    correlations: Vec<CorrelationView<'a>>,
    metrics: BTreeMap<&'a str, MetricView<'a>>,
    runs: Vec<RunView<'a>>,
    seeds: Vec<u64>,
}

/// summary.json as written: [`Summary::json_document`].
#[derive(Debug, Serialize)]
pub struct SummaryDocument<'a> {
    alpha: f64,
    arms: Vec<ArmView<'a>>,
    bootstrap_resamples: usize,
    confidence: f64,
    definitions: Value,
    /// "INCOMPLETE: n of m runs", for a partial report
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<String>,
    pareto: Value,
    reference: Option<&'a str>,
    scenario: &'a str,
    /// the runs a partial report leaves out, with why
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_runs: Option<Value>,
    stats_seed: u64,
}

impl SummaryDocument<'_> {
    /// The document as serde_json's pretty text, with a final line break.
    pub fn to_pretty_text(&self) -> Result<String, serde_json::Error> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        Ok(text)
    }
}

fn metric_view(m: &super::MetricStats) -> MetricView<'_> {
    let e = m.estimate;
    MetricView {
        better: &m.def.better,
        ci_high: number(e.map(|e| e.ci.high)),
        ci_low: number(e.map(|e| e.ci.low)),
        mean: number(e.map(|e| e.mean)),
        median: number(m.median),
        n: e.map_or(0, |e| e.n),
        std: number(e.and_then(|e| e.std)),
        undefined: m.undefined,
        unit: m.def.unit,
        values: m
            .values
            .iter()
            .map(|&(seed, value)| SeedValue {
                seed,
                value: number(value),
            })
            .collect(),
        vs_reference: vs_reference(m.vs_reference.as_ref()),
    }
}

fn arm_view(arm: &super::ArmSummary) -> ArmView<'_> {
    let correlations = arm
        .runs
        .iter()
        .zip(&arm.correlations)
        .zip(&arm.decoupling)
        .map(|((run, c), d)| CorrelationView {
            n: c.n,
            partial: PartialView {
                n: d.partial.n,
                pearson: estimate(d.partial.pearson.as_ref()),
                templates: d.partial.groups,
            },
            pearson: estimate(c.pearson.as_ref()),
            resamples: c.resamples,
            seed: run.seed,
            spearman: estimate(c.spearman.as_ref()),
            templates: d
                .templates
                .iter()
                .map(|t| TemplateView {
                    n: t.estimate.n,
                    name: &t.name,
                    pearson: estimate(t.estimate.pearson.as_ref()),
                    spearman: estimate(t.estimate.spearman.as_ref()),
                    workload: t.workload.0,
                })
                .collect(),
        })
        .collect();
    let runs = arm
        .runs
        .iter()
        .map(|run| RunView {
            binds: run.metrics.binds,
            cluster_samples: run.metrics.samples.cluster_samples,
            decision_times: run.metrics.decision_times.as_ref().map(|d| DecisionTimesView {
                charged: d.charged,
                decisions: d.decisions,
            }),
            end_s: run.metrics.end.as_secs_f64(),
            nodes: run.metrics.samples.nodes,
            sched_latency_ms_hdr_v2_base64: run.metrics.sched_latency_ms.base64(),
            seed: run.seed,
        })
        .collect();
    ArmView {
        arm: &arm.arm,
        correlations,
        metrics: arm.metrics.iter().map(|m| (m.def.key, metric_view(m))).collect(),
        runs,
        seeds: arm.seeds(),
    }
}

impl Summary {
    /// Per arm and metric the statistics, the comparison with the reference
    /// arm and every per-seed value; the Pareto front; per run
    /// the memory/failure correlations with n and intervals (pooled, partial
    /// for the template, within each template), decision-time facts, and the
    /// scheduling-latency histogram (HdrHistogram V2, base64); the
    /// definitions of everything. Serialise it ([`SummaryDocument::to_pretty_text`])
    /// rather than turn it into a `Value`, for a summary of many runs.
    pub fn json_document(&self) -> SummaryDocument<'_> {
        SummaryDocument {
            alpha: ALPHA,
            arms: self.arms().iter().map(arm_view).collect(),
            bootstrap_resamples: BOOTSTRAP_RESAMPLES,
            confidence: CONFIDENCE,
            definitions: json!({
                "metrics": METRICS,
                "correlations": CORRELATIONS,
                "across_seeds": ACROSS_SEEDS,
                "vs_reference": VS_REFERENCE,
            }),
            incomplete: None,
            pareto: json!({
                "objectives": OBJECTIVES,
                "arms": self.pareto(),
            }),
            reference: self.reference(),
            scenario: self.scenario(),
            skipped_runs: None,
            stats_seed: self.stats_seed(),
        }
    }

    /// [`Summary::json_document`] as a `Value`, for reading it in code.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self.json_document()).unwrap_or(Value::Null)
    }
}
