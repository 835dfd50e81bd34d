//! Scenario params: their defaults, `--set` overrides, and their resolved values.

use crate::error::{ScenarioError, shown};
use crate::scalar::{Located, Scalar, format_number};
use std::collections::BTreeMap;

/// A param's value: a number, or a string (a duration, a quantity or plain text).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ParamValue {
    Number(f64),
    Text(String),
}

impl ParamValue {
    pub(crate) fn shown(&self) -> String {
        match self {
            ParamValue::Number(n) => format_number(*n),
            ParamValue::Text(s) => s.clone(),
        }
    }

    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self {
            ParamValue::Number(n) => number_json(*n),
            ParamValue::Text(s) => serde_json::Value::String(s.clone()),
        }
    }

    /// As if the value had been written in place of `${name}`.
    pub(crate) fn as_scalar(&self) -> Scalar {
        match self {
            ParamValue::Number(n) if n.fract() == 0.0 && n.abs() < 9e15 => Scalar::Int(*n as i64),
            ParamValue::Number(n) => Scalar::Float(*n),
            ParamValue::Text(s) => Scalar::Str(s.clone()),
        }
    }
}

/// A JSON number, integral where the value is whole.
pub(crate) fn number_json(n: f64) -> serde_json::Value {
    if n.fract() == 0.0 && n.abs() < 9e15 {
        serde_json::Value::from(n as i64)
    } else {
        serde_json::Number::from_f64(n).map_or(serde_json::Value::Null, serde_json::Value::Number)
    }
}

/// The params of a scenario, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Params {
    values: BTreeMap<String, ParamValue>,
}

fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Names the expression language keeps for itself.
const RESERVED: [&str; 5] = ["min", "max", "floor", "ceil", "round"];

impl Params {
    /// Reads the defaults written under `params:`.
    pub(crate) fn from_defaults(origin: &str, raw: &BTreeMap<String, Located>) -> Result<Params, ScenarioError> {
        let mut values = BTreeMap::new();
        for (name, v) in raw {
            let path = format!("params.{name}");
            if !is_identifier(name) || RESERVED.contains(&name.as_str()) {
                return Err(ScenarioError::invalid(
                    origin,
                    path,
                    Some(v.value.shown()),
                    format!(
                        "`{name}` cannot name a param: use letters, digits and _ (not starting with a digit), and not min, max, floor, ceil or round"
                    ),
                    v.loc,
                ));
            }
            let value = match &v.value {
                Scalar::Int(i) => ParamValue::Number(*i as f64),
                Scalar::Float(f) if f.is_finite() => ParamValue::Number(*f),
                Scalar::Str(s) => ParamValue::Text(s.clone()),
                other => {
                    return Err(ScenarioError::invalid(
                        origin,
                        path,
                        Some(other.shown()),
                        "a param's default must be a finite number or a string (a duration, a quantity or text)",
                        v.loc,
                    ));
                }
            };
            values.insert(name.clone(), value);
        }
        Ok(Params { values })
    }

    /// Applies `key=value` overrides; a number param only takes a number.
    pub(crate) fn apply_overrides(&mut self, origin: &str, overrides: &[String]) -> Result<(), ScenarioError> {
        for arg in overrides {
            let err = |reason: String| ScenarioError::Override {
                origin: origin.to_string(),
                arg: shown(arg),
                reason,
                known: self.known(),
            };
            let Some((key, value)) = arg.split_once('=') else {
                return Err(err("expected key=value".to_string()));
            };
            let key = key.trim();
            let Some(current) = self.values.get(key) else {
                return Err(err(format!("the scenario has no param `{key}`")));
            };
            let new = match current {
                ParamValue::Number(_) => match value.trim().parse::<f64>() {
                    Ok(n) if n.is_finite() => ParamValue::Number(n),
                    _ => {
                        return Err(err(format!(
                            "`{key}` is a number param, and `{}` is not a number",
                            shown(value)
                        )));
                    }
                },
                ParamValue::Text(_) => ParamValue::Text(value.to_string()),
            };
            tracing::debug!(param = key, value = %new.shown(), "param overridden");
            self.values.insert(key.to_string(), new);
        }
        Ok(())
    }

    pub(crate) fn get(&self, name: &str) -> Option<&ParamValue> {
        self.values.get(name)
    }

    /// "nodes=50, wave_gap=8m", or "none".
    pub(crate) fn known(&self) -> String {
        if self.values.is_empty() {
            return "none".to_string();
        }
        self.values
            .iter()
            .map(|(k, v)| format!("{k}={}", shown(&v.shown())))
            .collect::<Vec<_>>()
            .join(", ")
    }

    pub(crate) fn to_json(&self) -> BTreeMap<String, serde_json::Value> {
        self.values.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Params {
        let mut raw = BTreeMap::new();
        raw.insert("nodes".to_string(), Located::new(Scalar::Int(50), None));
        raw.insert("gap".to_string(), Located::new(Scalar::Str("8m".into()), None));
        Params::from_defaults("t", &raw).unwrap()
    }

    #[test]
    fn overrides_replace_defaults() {
        let mut p = defaults();
        p.apply_overrides("t", &["nodes=200".into(), "gap=2m".into()]).unwrap();
        assert_eq!(p.get("nodes"), Some(&ParamValue::Number(200.0)));
        assert_eq!(p.get("gap"), Some(&ParamValue::Text("2m".into())));
        assert_eq!(p.to_json()["nodes"], serde_json::json!(200));
    }

    #[test]
    fn bad_overrides_name_key_value_and_known_params() {
        let mut p = defaults();
        let e = p
            .apply_overrides("builtin:x", &["nodes=lots".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--set nodes=lots"), "{e}");
        assert!(e.contains("not a number"), "{e}");
        assert!(e.contains("gap=8m, nodes=50"), "{e}");
        let e = p
            .apply_overrides("builtin:x", &["nodez=3".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("no param `nodez`") && e.contains("known params"), "{e}");
        let e = p
            .apply_overrides("builtin:x", &["nodes".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("key=value"), "{e}");
    }

    #[test]
    fn rejects_bad_names_and_defaults() {
        let mut raw = BTreeMap::new();
        raw.insert("2x".to_string(), Located::new(Scalar::Int(1), None));
        assert!(Params::from_defaults("t", &raw).is_err());
        let mut raw = BTreeMap::new();
        raw.insert("on".to_string(), Located::new(Scalar::Bool(true), None));
        let e = Params::from_defaults("t", &raw).unwrap_err().to_string();
        assert!(e.contains("params.on = true"), "{e}");
    }
}
