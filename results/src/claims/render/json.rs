//! claims.json: every number of the claims table, beside the reports.

use crate::claims::effect::{Effect, Side};
use crate::claims::learning::{LearningFamily, Scope};
use crate::claims::prereg::PREREGISTRATION_PATH;
use crate::claims::table::{ClaimResult, Family, Judgement};
use crate::claims::{ClaimsTable, Outcome, VERDICT_RULE, better_name};
use crate::stats::{ALPHA, BOOTSTRAP_RESAMPLES, CONFIDENCE};
use serde_json::{Value, json};

fn num(x: Option<f64>) -> Value {
    x.filter(|v| v.is_finite()).map_or(Value::Null, Value::from)
}

fn side(s: Option<Side>) -> Value {
    s.map_or(Value::Null, |s| {
        json!({
            "n": s.n,
            "unit": if s.by_run { "training-run" } else { "seed" },
            "training_runs": s.runs,
            "seeds": s.seeds,
            "undefined": s.undefined,
            "mean": num(Some(s.mean)),
        })
    })
}

fn families(f: &[Family]) -> Value {
    Value::Array(
        f.iter()
            .map(|f| json!({"baseline": f.baseline, "size": f.size}))
            .collect(),
    )
}

/// One test's numbers into `v`, an object: the difference of means with its
/// interval, the p-values, ties, Cliff's delta and the outcome.
fn add_test(v: &mut Value, e: Option<Effect>, p_holm: Option<f64>, outcome: Outcome) {
    let fields = json!({
        "diff_of_means": num(e.map(|e| e.diff)),
        "ci_low": num(e.and_then(|e| e.ci).map(|ci| ci.low)),
        "ci_high": num(e.and_then(|e| e.ci).map(|ci| ci.high)),
        "p": num(e.map(|e| e.test.p)),
        "p_method": e.map(|e| e.test.method.as_str()),
        "p_holm": num(p_holm),
        "tied": e.map(|e| e.tied),
        "cliffs_delta": num(e.map(|e| e.cliffs_delta)),
        "outcome": outcome.as_str(),
    });
    if let (Value::Object(v), Value::Object(fields)) = (v, fields) {
        v.extend(fields);
    }
}

/// One arm's claims: per claim its verdicts, regime rows and every row
/// against every baseline.
fn claims(list: &[ClaimResult]) -> Value {
    let out: Vec<Value> = list
        .iter()
        .map(|claim| {
            let verdicts: Vec<Value> = claim
                .verdicts
                .iter()
                .map(|v| json!({"baseline": v.baseline, "verdict": v.verdict.as_str(), "reasons": v.reasons}))
                .collect();
            let regime: Vec<Value> = claim
                .regime
                .iter()
                .map(|r| {
                    json!({
                        "scenario": r.scenario,
                        "arm": r.spec.arm,
                        "metric": r.spec.metric,
                        "condition": r.spec.condition.as_str(),
                        "values": side(r.side),
                        "ci_low": num(r.ci.map(|c| c.low)),
                        "ci_high": num(r.ci.map(|c| c.high)),
                        "regime": r.regime,
                        "undefined_because": r.missing,
                    })
                })
                .collect();
            let rows: Vec<Value> = claim
                .rows
                .iter()
                .map(|row| {
                    let vs: Vec<Value> = row
                        .cells
                        .iter()
                        .map(|c| {
                            let mut v = json!({
                                "baseline": c.baseline,
                                "baseline_values": side(c.baseline_side),
                            });
                            add_test(&mut v, c.effect, c.p_holm, c.outcome);
                            v["undefined_because"] = json!(c.missing);
                            v
                        })
                        .collect();
                    json!({
                        "scenario": row.scenario,
                        "scenario_role": row.scenario_role.as_str(),
                        "metric": row.spec.metric,
                        "absolute_value": row.spec.magnitude,
                        "role": row.spec.role.as_str(),
                        "reading": row.spec.reading,
                        "better": better_name(row.better),
                        "direction_from": if row.spec.direction_from_claim() { "claim" } else { "definition" },
                        "applies": match row.spec.applies {
                            crate::claims::Applies::Always => "always",
                            crate::claims::Applies::BothPreempt => "both-preempt",
                        },
                        "arm_values": side(row.arm_side),
                        "vs": vs,
                    })
                })
                .collect();
            let scenarios: Vec<Value> = claim
                .scenarios
                .iter()
                .map(|(s, roles)| json!({"scenario": s, "roles": roles}))
                .collect();
            json!({
                "claim": claim.spec.number,
                "name": claim.spec.name.as_str(),
                "title": claim.spec.title,
                "paper": claim.spec.paper,
                "scenarios": scenarios,
                "verdict": claim.headline().map(|v| v.verdict.as_str()),
                "verdicts": verdicts,
                "regime": regime,
                "rows": rows,
            })
        })
        .collect();
    Value::Array(out)
}

/// Each family of the learning comparison with every test.
fn learning(list: &[LearningFamily]) -> Value {
    let out: Vec<Value> = list
        .iter()
        .map(|f| {
            let tests: Vec<Value> = f
                .tests
                .iter()
                .map(|t| {
                    let (scenario, pooled_over, left_out) = match &t.scope {
                        Scope::Scenario(s) => (Some(s.clone()), Value::Null, Value::Null),
                        Scope::Pooled { scenarios, left_out } => (None, json!(scenarios), json!(left_out)),
                    };
                    let mut v = json!({
                        "scenario": scenario,
                        "pooled_over": pooled_over,
                        "left_out": left_out,
                        "metric": t.metric,
                        "better": better_name(t.better),
                        "arm_values": side(t.arm_side),
                        "control_values": side(t.control_side),
                    });
                    add_test(&mut v, t.effect, t.p_holm, t.outcome);
                    v
                })
                .collect();
            json!({"control": f.control, "family": if f.pooled { "pooled" } else { "registered" }, "size": f.size(), "tests": tests})
        })
        .collect();
    Value::Array(out)
}

fn control(j: &Judgement) -> Value {
    json!({"arm": j.arm, "holm_families": families(&j.families), "claims": claims(&j.claims)})
}

impl ClaimsTable {
    /// The table as JSON: the pre-registration followed, the judged arm, the
    /// test's settings and the rule, the scenarios, per claim its verdicts
    /// and every row against every baseline, and the controls' the same way.
    /// `Value::Null` when no claim applies.
    pub fn to_json(&self) -> Value {
        if self.is_empty() {
            return Value::Null;
        }
        let scenarios: Vec<Value> = self
            .scenarios
            .iter()
            .map(|s| {
                json!({"scenario": s.scenario, "claims": s.uses, "stats_seed": s.stats_seed, "arms": s.arms, "incomplete": s.incomplete})
            })
            .collect();
        json!({
            "preregistration": {
                "path": PREREGISTRATION_PATH,
                "date": self.registration.date,
                "sha256": self.registration.sha256,
            },
            "arm": self.arm,
            "paper": "AGMARL-DKS, arXiv 2603.12031",
            "alpha": ALPHA,
            "confidence": CONFIDENCE,
            "bootstrap_resamples": BOOTSTRAP_RESAMPLES,
            "holm_families": families(&self.families),
            "holm_family_size": self.family_size(),
            "verdict_rule": VERDICT_RULE,
            "scenarios": scenarios,
            "claims": claims(&self.claims),
            "controls": self.controls.iter().map(control).collect::<Vec<_>>(),
            "learning": learning(&self.learning),
        })
    }
}
