//! The pre-registration (`evaluations/PREREGISTRATION.md`) the claims table
//! is computed under: its fenced `yaml prereg` block must say what
//! [`super::mapping`] does, word for word, and every report names the file
//! by its date and the SHA-256 of its bytes, so a reader can tell which
//! registered rules a table followed.

use super::ClaimsError;
use super::mapping::{
    Applies, BASELINES, CLAIMS, CONTROLS, DEFAULT_ARM, EVALUATION_SEEDS, HEADLINE_BASELINE, HOLM_FAMILY,
    PREREG_VERSION, REPLICATION_UNIT, TRAINING_SEEDS,
};
use super::table_d::TABLE_D;
use serde_json::{Map, Value, json};

/// Where the file lives in the repository.
pub const PREREGISTRATION_PATH: &str = "evaluations/PREREGISTRATION.md";

/// The file's bytes, built in.
pub const PREREGISTRATION: &str = include_str!("../../../evaluations/PREREGISTRATION.md");

const FENCE: &str = "```yaml prereg";

/// What a report says about the pre-registration it followed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registration {
    /// the block's `date`
    pub date: String,
    /// SHA-256 of the whole file, hex
    pub sha256: String,
}

/// The text of the last `yaml prereg` block (an amendment that changes the
/// mapping adds a new block after the first; the last one is in force).
fn block(text: &str) -> Option<&str> {
    let start = text.rfind(FENCE)? + FENCE.len();
    let body = &text[start..];
    let body = body.strip_prefix('\n').unwrap_or(body);
    let end = body.find("\n```")?;
    Some(&body[..end + 1])
}

/// The block parsed as a JSON value.
fn parse(text: &str) -> Result<Value, ClaimsError> {
    let yaml = block(text).ok_or_else(|| ClaimsError::Preregistration {
        field: "(the fenced block)".into(),
        detail: format!("no {FENCE} block"),
    })?;
    serde_saphyr::from_str(yaml).map_err(|e| ClaimsError::Preregistration {
        field: "(the fenced block)".into(),
        detail: format!("not YAML the check can read: {e}"),
    })
}

/// The code's mapping in the block's form (the `date` aside).
pub fn code_mapping() -> Value {
    let claims: Vec<Value> = CLAIMS
        .iter()
        .map(|c| {
            let rows: Vec<Value> = c
                .rows
                .iter()
                .map(|r| {
                    let mut row = Map::new();
                    row.insert("metric".into(), json!(r.metric));
                    row.insert("role".into(), json!(r.role.as_str()));
                    row.insert("better".into(), json!(crate::claims::better_name(r.direction.stated())));
                    if r.magnitude {
                        row.insert("magnitude".into(), json!(true));
                    }
                    row.insert(
                        "roles".into(),
                        json!(r.roles.iter().map(|x| x.as_str()).collect::<Vec<_>>()),
                    );
                    if r.applies == Applies::BothPreempt {
                        row.insert("applies".into(), json!("both-preempt"));
                    }
                    Value::Object(row)
                })
                .collect();
            let mut claim = Map::new();
            claim.insert("number".into(), json!(c.number));
            claim.insert("name".into(), json!(c.name.as_str()));
            if !c.regime.is_empty() {
                let regime: Vec<Value> = c
                    .regime
                    .iter()
                    .map(|g| {
                        json!({
                            "arm": g.arm,
                            "metric": g.metric,
                            "condition": g.condition.as_str(),
                            "roles": g.roles.iter().map(|x| x.as_str()).collect::<Vec<_>>(),
                        })
                    })
                    .collect();
                claim.insert("regime".into(), Value::Array(regime));
            }
            claim.insert("rows".into(), Value::Array(rows));
            if c.number == TABLE_D.claim {
                claim.insert("table_d".into(), TABLE_D.to_value());
            }
            Value::Object(claim)
        })
        .collect();
    json!({
        "version": PREREG_VERSION,
        "judged": DEFAULT_ARM,
        "controls": CONTROLS,
        "baselines": BASELINES,
        "headline_baseline": HEADLINE_BASELINE,
        "holm_family": HOLM_FAMILY,
        "replication_unit": REPLICATION_UNIT,
        "training_seeds": TRAINING_SEEDS,
        "evaluation_seeds": EVALUATION_SEEDS,
        "claims": claims,
    })
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "absent".to_string(), Value::to_string)
}

/// The first place where `file` and `code` differ: (field path, what each says).
fn first_difference(file: &Value, code: &Value, path: &str) -> Option<(String, String, String)> {
    let here = |p: &str| {
        if p.is_empty() {
            "(the block)".to_string()
        } else {
            p.to_string()
        }
    };
    match (file, code) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
            keys.dedup();
            for key in keys {
                let sub = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = first_difference(x, y, &sub) {
                            return Some(d);
                        }
                    }
                    (x, y) => return Some((sub, show(x), show(y))),
                }
            }
            None
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let sub = format!("{path}[{i}]");
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => {
                        if let Some(d) = first_difference(x, y, &sub) {
                            return Some(d);
                        }
                    }
                    (x, y) => return Some((sub, show(x), show(y))),
                }
            }
            None
        }
        (Value::Number(a), Value::Number(b)) if a.as_f64() == b.as_f64() => None,
        (a, b) if a == b => None,
        (a, b) => Some((here(path), a.to_string(), b.to_string())),
    }
}

/// Checks the pre-registration `text` against the code's mapping; returns
/// its date. `Err` names the first field where they disagree and both values.
pub fn check(text: &str) -> Result<String, ClaimsError> {
    let mut file = parse(text)?;
    let date = match file.as_object_mut().and_then(|o| o.remove("date")) {
        Some(Value::String(d)) => d,
        other => {
            return Err(ClaimsError::Preregistration {
                field: "date".into(),
                detail: format!("{} is not a date", show(other.as_ref())),
            });
        }
    };
    match first_difference(&file, &code_mapping(), "") {
        None => Ok(date),
        Some((field, in_file, in_code)) => Err(ClaimsError::Preregistration {
            field,
            detail: format!("the pre-registration says {in_file}, the code's claims mapping says {in_code}"),
        }),
    }
}

/// The built-in pre-registration, checked: its date and digest.
pub fn registration() -> Result<Registration, ClaimsError> {
    Ok(Registration {
        date: check(PREREGISTRATION)?,
        sha256: schedlab_core::digest::sha256_hex(PREREGISTRATION.as_bytes()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pre-registration check: the committed file's block is the code's mapping.
    #[test]
    fn the_code_mapping_is_the_pre_registered_one() {
        let r = registration().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.date, "2026-12-07");
        assert_eq!(r.sha256.len(), 64);
        assert_eq!(r.sha256, schedlab_core::digest::sha256_hex(PREREGISTRATION.as_bytes()));
    }

    /// The pre-registration with `from` replaced by `to` once in the block in force.
    fn in_force(from: &str, to: &str) -> String {
        let at = PREREGISTRATION.rfind(FENCE).unwrap();
        let (before, block) = PREREGISTRATION.split_at(at);
        assert!(block.contains(from), "{from}");
        format!("{before}{}", block.replacen(from, to, 1))
    }

    /// The check fails, naming the field and both values, whenever the two differ.
    #[test]
    fn the_check_fails_when_the_mapping_differs() {
        let cases = [
            // a direction flipped
            (
                "{metric: nodes_in_use_mean, role: primary, better: lower,",
                "{metric: nodes_in_use_mean, role: primary, better: higher,",
                "claims[0].rows[0].better",
            ),
            // a guard made primary
            (
                "{metric: goodput_pod_hours, role: guard,",
                "{metric: goodput_pod_hours, role: primary,",
                "claims[1].rows[4].role",
            ),
            // the preemption condition dropped
            (", applies: both-preempt}", "}", "claims[1].rows[3].applies"),
            // the magnitude guard made signed
            (", magnitude: true,", ",", "claims[2].rows[1].magnitude"),
            // a role added
            (
                "roles: [stress-faults]}",
                "roles: [stress, stress-faults]}",
                "claims[3].rows[2].roles[0]",
            ),
            // the regime's arm
            (
                "{arm: default, metric:",
                "{arm: binpack, metric:",
                "claims[2].regime[0].arm",
            ),
            // the arms
            ("judged: agmarl\n", "judged: agmarl-nognn\n", "judged"),
            (
                "controls: [agmarl-untrained, agmarl-analytic]",
                "controls: [agmarl-untrained]",
                "controls[1]",
            ),
            (
                "headline_baseline: default",
                "headline_baseline: binpack",
                "headline_baseline",
            ),
            (
                "holm_family: table-judged-baseline",
                "holm_family: table",
                "holm_family",
            ),
            // a row added to claim 5
            ("    rows: []", "    rows: [{metric: cost_usd}]", "claims[4].rows[0]"),
            // a field the code does not know
            ("version: 1\n", "version: 1\nextra: 2\n", "extra"),
            // table D's numbers
            (
                "resamples: 2000,",
                "resamples: 1000,",
                "claims[4].table_d.primary.resamples",
            ),
            (
                "metrics: [cost_usd, failures_per_running_pod_hour]",
                "metrics: [cost_usd]",
                "claims[4].table_d.guards.metrics[1]",
            ),
            ("foil: drs\n", "foil: drs-agmarl-reward\n", "claims[4].table_d.foil"),
        ];
        for (from, to, field) in cases {
            let changed = in_force(from, to);
            let err = check(&changed).expect_err(field);
            match &err {
                ClaimsError::Preregistration { field: f, .. } => assert_eq!(f, field, "{err}"),
                other => panic!("{other}"),
            }
            assert!(err.to_string().contains(PREREGISTRATION_PATH), "{err}");
        }
        // a row moved: rows are compared in order
        let tmp = in_force("{metric: cost_rate_cv,", "{metric: TMP,");
        let at = tmp.rfind(FENCE).unwrap();
        let swapped = format!(
            "{}{}",
            &tmp[..at],
            tmp[at..]
                .replacen("{metric: pareto_hv,", "{metric: cost_rate_cv,", 1)
                .replacen("{metric: TMP,", "{metric: pareto_hv,", 1)
        );
        assert!(check(&swapped).is_err());
        // a block before the one in force says nothing
        let first = PREREGISTRATION.find(FENCE).unwrap();
        let old = format!(
            "{}{}",
            &PREREGISTRATION[..first],
            PREREGISTRATION[first..].replacen("holm_family: table-judged-baseline", "holm_family: table", 1)
        );
        assert!(check(&old).is_ok());
        assert!(check("no block here").is_err());
    }

    #[test]
    fn the_last_block_is_the_one_in_force() {
        let text = "a\n```yaml prereg\nx: 1\n```\nb\n```yaml prereg\ny: 2\n```\n";
        assert_eq!(block(text), Some("y: 2\n"));
    }
}
