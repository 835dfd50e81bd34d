//! A label selector as a node affinity, so the real scheduler keeps a run's
//! pods on the nodes the run uses ([`super::NodeSource::Existing`]).

use crate::KubeError;
use k8s_openapi::api::core::v1 as core;

/// The node affinity that admits exactly the nodes `selector` matches
/// (label-selector syntax: `k=v`, `k==v`, `k!=v`, `k`, `!k`, `k in (a,b)`,
/// `k notin (a,b)`, joined by commas). None for the empty selector.
pub(crate) fn node_affinity(selector: &str) -> Result<Option<core::Affinity>, KubeError> {
    let requirements = parse(selector)?;
    if requirements.is_empty() {
        return Ok(None);
    }
    Ok(Some(core::Affinity {
        node_affinity: Some(core::NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(core::NodeSelector {
                node_selector_terms: vec![core::NodeSelectorTerm {
                    match_expressions: Some(requirements),
                    match_fields: None,
                }],
            }),
            preferred_during_scheduling_ignored_during_execution: None,
        }),
        ..Default::default()
    }))
}

fn bad(selector: &str, why: &str) -> KubeError {
    KubeError::Other(format!("node selector {selector:?}: {why}"))
}

fn requirement(key: &str, operator: &str, values: Vec<String>) -> core::NodeSelectorRequirement {
    core::NodeSelectorRequirement {
        key: key.to_string(),
        operator: operator.to_string(),
        values: (!values.is_empty()).then_some(values),
    }
}

/// Splits at the commas outside parentheses.
fn terms(selector: &str) -> Result<Vec<&str>, KubeError> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in selector.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&selector[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(bad(selector, "unbalanced parentheses"));
        }
    }
    if depth != 0 {
        return Err(bad(selector, "unbalanced parentheses"));
    }
    out.push(&selector[start..]);
    Ok(out)
}

fn key_ok(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

fn parse(selector: &str) -> Result<Vec<core::NodeSelectorRequirement>, KubeError> {
    if selector.trim().is_empty() {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for term in terms(selector)? {
        let term = term.trim();
        let key_checked = |key: &str| {
            let key = key.trim();
            if key_ok(key) {
                Ok(key.to_string())
            } else {
                Err(bad(selector, &format!("{key:?} is not a label key")))
            }
        };
        if let Some(key) = term.strip_prefix('!') {
            out.push(requirement(&key_checked(key)?, "DoesNotExist", vec![]));
        } else if let Some((key, value)) = term.split_once("!=") {
            out.push(requirement(&key_checked(key)?, "NotIn", vec![value.trim().to_string()]));
        } else if let Some((key, value)) = term.split_once("==").or_else(|| term.split_once('=')) {
            out.push(requirement(&key_checked(key)?, "In", vec![value.trim().to_string()]));
        } else if let Some(open) = term.find('(') {
            let (head, list) = term.split_at(open);
            let list = list
                .strip_prefix('(')
                .and_then(|l| l.strip_suffix(')'))
                .ok_or_else(|| bad(selector, &format!("{term:?}: a value list ends with ')'")))?;
            let values: Vec<String> = list
                .split(',')
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .collect();
            let mut words = head.split_whitespace();
            let (Some(key), Some(op), None) = (words.next(), words.next(), words.next()) else {
                return Err(bad(selector, &format!("{term:?}: expected `key in (...)`")));
            };
            let operator = match op {
                "in" => "In",
                "notin" => "NotIn",
                _ => return Err(bad(selector, &format!("{term:?}: unknown operator {op:?}"))),
            };
            if values.is_empty() {
                return Err(bad(selector, &format!("{term:?}: an empty value list")));
            }
            out.push(requirement(&key_checked(key)?, operator, values));
        } else {
            out.push(requirement(&key_checked(term)?, "Exists", vec![]));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(selector: &str) -> Vec<(String, String, Vec<String>)> {
        parse(selector)
            .unwrap()
            .into_iter()
            .map(|r| (r.key, r.operator, r.values.unwrap_or_default()))
            .collect()
    }

    fn t(k: &str, op: &str, vs: &[&str]) -> (String, String, Vec<String>) {
        (k.into(), op.into(), vs.iter().map(|v| v.to_string()).collect())
    }

    #[test]
    fn every_selector_form_becomes_a_requirement() {
        assert_eq!(
            ops("pool=a, zone==b,tier!=c,gpu,!spot, env in (x, y),team notin (z)"),
            vec![
                t("pool", "In", &["a"]),
                t("zone", "In", &["b"]),
                t("tier", "NotIn", &["c"]),
                t("gpu", "Exists", &[]),
                t("spot", "DoesNotExist", &[]),
                t("env", "In", &["x", "y"]),
                t("team", "NotIn", &["z"]),
            ]
        );
        assert!(node_affinity("  ").unwrap().is_none());
        assert!(node_affinity("a=b").unwrap().is_some());
    }

    #[test]
    fn garbage_is_an_error_naming_the_selector() {
        for s in ["a in (b", "a in ()", "a foo (b)", "a b", "=x", "a)b"] {
            let err = parse(s).unwrap_err().to_string();
            assert!(err.contains(&format!("{s:?}")), "{s}: {err}");
        }
    }
}
