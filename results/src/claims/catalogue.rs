//! The claim/role catalogue of `schedlab_core::claims` (the paper's claims
//! by name and number, and the roles in which a scenario may test each),
//! and [`uses_of`], which reads a run folder's `resolved_scenario.claims`
//! against it.

pub use schedlab_core::claims::{ClaimName, ClaimRole, ClaimUse, roles};

/// `items` by name, comma-separated.
fn names<T: Copy>(items: &[T], name: fn(T) -> &'static str) -> String {
    items.iter().map(|&i| name(i)).collect::<Vec<_>>().join(", ")
}

/// A resolved scenario's `claims` (an array of `{"claim", "role"}`; absent
/// or null: none), checked against the catalogue. `Err` names the field
/// (`claims[i].claim`, `claims[i].role`) and says what is wrong with it.
pub fn uses_of(resolved_scenario: &serde_json::Value) -> Result<Vec<ClaimUse>, (String, String)> {
    let list = match resolved_scenario.get("claims") {
        None | Some(serde_json::Value::Null) => return Ok(Vec::new()),
        Some(serde_json::Value::Array(list)) => list,
        Some(other) => return Err(("claims".into(), format!("{other} is not an array of {{claim, role}}"))),
    };
    let mut out = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let field = |name: &str| -> Result<&str, (String, String)> {
            entry.get(name).and_then(|v| v.as_str()).ok_or_else(|| {
                (
                    format!("claims[{i}].{name}"),
                    format!("missing or not a string in {entry}"),
                )
            })
        };
        let claim: ClaimName = field("claim")?
            .parse()
            .map_err(|e: schedlab_core::claims::ClaimError| (format!("claims[{i}].claim"), e.to_string()))?;
        let role: ClaimRole = field("role")?
            .parse()
            .map_err(|e: schedlab_core::claims::ClaimError| (format!("claims[{i}].role"), e.to_string()))?;
        if !roles(claim).contains(&role) {
            return Err((
                format!("claims[{i}].role"),
                format!(
                    "role {role} is not one of claim {claim}'s ({})",
                    names(roles(claim), ClaimRole::as_str)
                ),
            ));
        }
        let u = ClaimUse { claim, role };
        if !out.contains(&u) {
            out.push(u);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_numbers_and_roles_are_the_catalogue() {
        let got: Vec<(u8, &str, Vec<&str>)> = ClaimName::ALL
            .iter()
            .map(|c| (c.number(), c.as_str(), roles(*c).iter().map(|r| r.as_str()).collect()))
            .collect();
        assert_eq!(
            got,
            [
                (1, "packing", vec!["cascading-pressure"]),
                (2, "restraint", vec!["churn-faults"]),
                (3, "decoupling", vec!["varying-requests"]),
                (4, "pareto", vec!["stress", "stress-faults"]),
                (5, "scaling", vec!["size-series"]),
            ]
        );
        // serde names are the same
        assert_eq!(
            serde_json::to_value(ClaimRole::StressFaults).unwrap(),
            json!("stress-faults")
        );
    }

    #[test]
    fn a_declaration_is_read_and_bad_entries_are_named() {
        let ok = json!({"claims": [{"claim": "pareto", "role": "stress"}, {"claim": "packing", "role": "cascading-pressure"}]});
        assert_eq!(
            uses_of(&ok).unwrap(),
            [
                ClaimUse {
                    claim: ClaimName::Pareto,
                    role: ClaimRole::Stress
                },
                ClaimUse {
                    claim: ClaimName::Packing,
                    role: ClaimRole::CascadingPressure
                }
            ]
        );
        assert!(uses_of(&json!({"nodes": 4})).unwrap().is_empty());
        assert!(uses_of(&json!({"claims": []})).unwrap().is_empty());
        let (field, why) = uses_of(&json!({"claims": [{"claim": "speed", "role": "stress"}]})).unwrap_err();
        assert_eq!(field, "claims[0].claim");
        assert!(why.contains("`speed`") && why.contains("packing, restraint"), "{why}");
        let (field, why) = uses_of(&json!({"claims": [{"claim": "pareto", "role": "calm"}]})).unwrap_err();
        assert_eq!(field, "claims[0].role");
        assert!(why.contains("`calm`"), "{why}");
        let (field, why) = uses_of(&json!({"claims": [{"claim": "packing", "role": "stress"}]})).unwrap_err();
        assert_eq!(field, "claims[0].role");
        assert!(why.contains("cascading-pressure"), "{why}");
        assert_eq!(
            uses_of(&json!({"claims": {"claim": "packing"}})).unwrap_err().0,
            "claims"
        );
    }
}
