//! claims.json: every number of the claims table, beside the reports.

use crate::claims::{ClaimsTable, VERDICT_RULE};
use crate::definitions::Better;
use crate::stats::{ALPHA, BOOTSTRAP_RESAMPLES, CONFIDENCE};
use serde_json::{Value, json};

fn num(x: Option<f64>) -> Value {
    x.filter(|v| v.is_finite()).map_or(Value::Null, Value::from)
}

impl ClaimsTable {
    /// The table as JSON: the judged arm, the test's settings and the rule,
    /// the scenarios, and per claim its verdicts and every row against every
    /// baseline. `Value::Null` when no claim applies.
    pub fn to_json(&self) -> Value {
        if self.is_empty() {
            return Value::Null;
        }
        let claims: Vec<Value> = self
            .claims
            .iter()
            .map(|claim| {
                let verdicts: Vec<Value> = claim
                    .verdicts
                    .iter()
                    .map(|v| json!({"baseline": v.baseline, "verdict": v.verdict.as_str(), "reasons": v.reasons}))
                    .collect();
                let rows: Vec<Value> = claim
                    .rows
                    .iter()
                    .map(|row| {
                        let side = |s: Option<crate::claims::effect::Side>| {
                            s.map_or(
                                Value::Null,
                                |s| json!({"n": s.n, "undefined": s.undefined, "mean": num(Some(s.mean))}),
                            )
                        };
                        let vs: Vec<Value> = row
                            .cells
                            .iter()
                            .map(|c| {
                                let e = c.effect;
                                json!({
                                    "baseline": c.baseline,
                                    "baseline_values": side(c.baseline_side),
                                    "diff_of_means": num(e.map(|e| e.diff)),
                                    "ci_low": num(e.and_then(|e| e.ci).map(|ci| ci.low)),
                                    "ci_high": num(e.and_then(|e| e.ci).map(|ci| ci.high)),
                                    "p": num(e.map(|e| e.test.p)),
                                    "p_method": e.map(|e| e.test.method.as_str()),
                                    "p_holm": num(c.p_holm),
                                    "tied": e.map(|e| e.tied),
                                    "cliffs_delta": num(e.map(|e| e.cliffs_delta)),
                                    "outcome": c.outcome.as_str(),
                                    "undefined_because": c.missing,
                                })
                            })
                            .collect();
                        json!({
                            "scenario": row.scenario,
                            "metric": row.spec.metric,
                            "absolute_value": row.spec.magnitude,
                            "role": row.spec.role.as_str(),
                            "reading": row.spec.reading,
                            "better": match row.better {
                                Better::Lower => "lower",
                                Better::Higher => "higher",
                                Better::Neither => "neither",
                            },
                            "direction_from": if row.spec.direction_from_claim() { "claim" } else { "definition" },
                            "arm_values": side(row.arm_side),
                            "vs": vs,
                        })
                    })
                    .collect();
                json!({
                    "claim": claim.spec.number,
                    "title": claim.spec.title,
                    "paper": claim.spec.paper,
                    "scenarios": claim.spec.scenarios,
                    "verdict": claim.headline().map(|v| v.verdict.as_str()),
                    "verdicts": verdicts,
                    "rows": rows,
                })
            })
            .collect();
        let scenarios: Vec<Value> = self
            .scenarios
            .iter()
            .map(|s| json!({"scenario": s.scenario, "stats_seed": s.stats_seed, "arms": s.arms, "incomplete": s.incomplete}))
            .collect();
        json!({
            "arm": self.arm,
            "paper": "AGMARL-DKS, arXiv 2603.12031",
            "alpha": ALPHA,
            "confidence": CONFIDENCE,
            "bootstrap_resamples": BOOTSTRAP_RESAMPLES,
            "holm_family_size": self.family_size,
            "verdict_rule": VERDICT_RULE,
            "scenarios": scenarios,
            "claims": claims,
        })
    }
}
