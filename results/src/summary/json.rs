//! summary.json: every statistic and every per-seed value behind the tables.

use super::{Summary, VS_REFERENCE, VsReference};
use crate::decision_time::DecisionTimeFacts;
use crate::definitions::{ACROSS_SEEDS, CORRELATIONS, METRICS};
use crate::pareto::OBJECTIVES;
use crate::stats::{ALPHA, BOOTSTRAP_RESAMPLES, CONFIDENCE, Estimate};
use serde_json::{Map, Value, json};

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

fn estimate(e: Option<&Estimate>) -> Value {
    match e {
        None => Value::Null,
        Some(e) => json!({
            "value": num(Some(e.value)),
            "ci_low": num(e.ci.map(|c| c.low)),
            "ci_high": num(e.ci.map(|c| c.high)),
            "undefined_resamples": e.undefined_resamples,
        }),
    }
}

/// A run's decision-time facts beside its metrics: how many, and whether
/// they were charged to virtual time (then they shaped the records too).
fn decision_times(d: &DecisionTimeFacts) -> Value {
    json!({ "decisions": d.decisions, "charged": d.charged })
}

impl Summary {
    /// Per arm and metric the statistics, the comparison with the reference
    /// arm and every per-seed value; the Pareto front; per run
    /// the memory/failure correlations with n and intervals (pooled, partial
    /// for the template, within each template), decision-time facts, and the
    /// scheduling-latency histogram (HdrHistogram V2, base64); the
    /// definitions of everything.
    pub fn to_json(&self) -> Value {
        let arms: Vec<Value> = self
            .arms()
            .iter()
            .map(|arm| {
                let mut metrics = Map::new();
                for m in &arm.metrics {
                    let e = m.estimate;
                    let values: Vec<Value> = m
                        .values
                        .iter()
                        .map(|(seed, v)| json!({ "seed": seed, "value": num(*v) }))
                        .collect();
                    metrics.insert(
                        m.def.key.to_string(),
                        json!({
                            "unit": m.def.unit,
                            "better": m.def.better,
                            "n": e.map_or(0, |e| e.n),
                            "undefined": m.undefined,
                            "mean": num(e.map(|e| e.mean)),
                            "std": num(e.and_then(|e| e.std)),
                            "ci_low": num(e.map(|e| e.ci.low)),
                            "ci_high": num(e.map(|e| e.ci.high)),
                            "median": num(m.median),
                            "vs_reference": vs_reference(m.vs_reference.as_ref()),
                            "values": values,
                        }),
                    );
                }
                let correlations: Vec<Value> = arm
                    .runs
                    .iter()
                    .zip(&arm.correlations)
                    .zip(&arm.decoupling)
                    .map(|((run, c), d)| {
                        let templates: Vec<Value> = d
                            .templates
                            .iter()
                            .map(|t| {
                                json!({
                                    "workload": t.workload.0,
                                    "name": t.name,
                                    "n": t.estimate.n,
                                    "pearson": estimate(t.estimate.pearson.as_ref()),
                                    "spearman": estimate(t.estimate.spearman.as_ref()),
                                })
                            })
                            .collect();
                        json!({
                            "seed": run.seed,
                            "n": c.n,
                            "resamples": c.resamples,
                            "pearson": estimate(c.pearson.as_ref()),
                            "spearman": estimate(c.spearman.as_ref()),
                            "partial": {
                                "n": d.partial.n,
                                "templates": d.partial.groups,
                                "pearson": estimate(d.partial.pearson.as_ref()),
                            },
                            "templates": templates,
                        })
                    })
                    .collect();
                let runs: Vec<Value> = arm
                    .runs
                    .iter()
                    .map(|run| {
                        let histogram = run
                            .metrics
                            .sched_latency_histogram_base64()
                            .map_err(|e| tracing::warn!(arm = %arm.arm, seed = run.seed, error = %e, "latency histogram not serialised"))
                            .ok();
                        json!({
                            "seed": run.seed,
                            "end_s": run.metrics.end.as_secs_f64(),
                            "nodes": run.metrics.samples.nodes,
                            "cluster_samples": run.metrics.samples.cluster_samples,
                            "binds": run.metrics.binds,
                            "sched_latency_ms_hdr_v2_base64": histogram,
                            "decision_times": run.metrics.decision_times.as_ref().map(decision_times),
                        })
                    })
                    .collect();
                json!({
                    "arm": arm.arm,
                    "seeds": arm.seeds(),
                    "metrics": metrics,
                    "correlations": correlations,
                    "runs": runs,
                })
            })
            .collect();
        json!({
            "scenario": self.scenario(),
            "stats_seed": self.stats_seed(),
            "confidence": CONFIDENCE,
            "bootstrap_resamples": BOOTSTRAP_RESAMPLES,
            "alpha": ALPHA,
            "reference": self.reference(),
            "arms": arms,
            "pareto": {
                "objectives": OBJECTIVES,
                "arms": self.pareto(),
            },
            "definitions": {
                "metrics": METRICS,
                "correlations": CORRELATIONS,
                "across_seeds": ACROSS_SEEDS,
                "vs_reference": VS_REFERENCE,
            },
        })
    }
}
