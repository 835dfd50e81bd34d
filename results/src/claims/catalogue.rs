//! The claim/role catalogue (interface 1 of the session's plan): the paper's
//! claims by name and number, and the roles in which a scenario may test
//! each; and [`uses_of`], which reads a run folder's
//! `resolved_scenario.claims` against it. The catalogue's home is
//! `schedlab_core::claims`; until that lands on main, this module holds the
//! same names. Switch: replace everything above [`uses_of`] (and its
//! `names` helper's callers) by
//! `pub use schedlab_core::claims::{ClaimName, ClaimRole, ClaimUse, roles};`
//! and keep [`uses_of`] and the tests.

use serde::{Deserialize, Serialize};
use std::fmt;

/// One of the paper's claims, by its name in scenario files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimName {
    Packing,
    Restraint,
    Decoupling,
    Pareto,
    Scaling,
}

/// The part a scenario plays in testing a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimRole {
    CascadingPressure,
    ChurnFaults,
    VaryingRequests,
    Stress,
    StressFaults,
    SizeSeries,
}

/// A scenario's declaration that it tests `claim` in `role`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ClaimUse {
    pub claim: ClaimName,
    pub role: ClaimRole,
}

impl ClaimName {
    pub const ALL: [ClaimName; 5] = [
        ClaimName::Packing,
        ClaimName::Restraint,
        ClaimName::Decoupling,
        ClaimName::Pareto,
        ClaimName::Scaling,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ClaimName::Packing => "packing",
            ClaimName::Restraint => "restraint",
            ClaimName::Decoupling => "decoupling",
            ClaimName::Pareto => "pareto",
            ClaimName::Scaling => "scaling",
        }
    }

    /// The claim's number in the paper's order.
    pub fn number(self) -> u8 {
        match self {
            ClaimName::Packing => 1,
            ClaimName::Restraint => 2,
            ClaimName::Decoupling => 3,
            ClaimName::Pareto => 4,
            ClaimName::Scaling => 5,
        }
    }
}

impl ClaimRole {
    pub const ALL: [ClaimRole; 6] = [
        ClaimRole::CascadingPressure,
        ClaimRole::ChurnFaults,
        ClaimRole::VaryingRequests,
        ClaimRole::Stress,
        ClaimRole::StressFaults,
        ClaimRole::SizeSeries,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ClaimRole::CascadingPressure => "cascading-pressure",
            ClaimRole::ChurnFaults => "churn-faults",
            ClaimRole::VaryingRequests => "varying-requests",
            ClaimRole::Stress => "stress",
            ClaimRole::StressFaults => "stress-faults",
            ClaimRole::SizeSeries => "size-series",
        }
    }
}

impl fmt::Display for ClaimName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ClaimRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The roles a scenario may declare for `claim`.
pub fn roles(claim: ClaimName) -> &'static [ClaimRole] {
    match claim {
        ClaimName::Packing => &[ClaimRole::CascadingPressure],
        ClaimName::Restraint => &[ClaimRole::ChurnFaults],
        ClaimName::Decoupling => &[ClaimRole::VaryingRequests],
        ClaimName::Pareto => &[ClaimRole::Stress, ClaimRole::StressFaults],
        ClaimName::Scaling => &[ClaimRole::SizeSeries],
    }
}

fn names<T: Copy>(all: &[T], name: fn(T) -> &'static str) -> String {
    all.iter().map(|x| name(*x)).collect::<Vec<_>>().join(", ")
}

impl std::str::FromStr for ClaimName {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ClaimName::ALL.into_iter().find(|c| c.as_str() == s).ok_or_else(|| {
            format!(
                "unknown claim {s:?}; the claims are {}",
                names(&ClaimName::ALL, ClaimName::as_str)
            )
        })
    }
}

impl std::str::FromStr for ClaimRole {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ClaimRole::ALL.into_iter().find(|r| r.as_str() == s).ok_or_else(|| {
            format!(
                "unknown role {s:?}; the roles are {}",
                names(&ClaimRole::ALL, ClaimRole::as_str)
            )
        })
    }
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
        let claim: ClaimName = field("claim")?.parse().map_err(|e| (format!("claims[{i}].claim"), e))?;
        let role: ClaimRole = field("role")?.parse().map_err(|e| (format!("claims[{i}].role"), e))?;
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
        assert!(why.contains("\"speed\"") && why.contains("packing, restraint"), "{why}");
        let (field, why) = uses_of(&json!({"claims": [{"claim": "pareto", "role": "calm"}]})).unwrap_err();
        assert_eq!(field, "claims[0].role");
        assert!(why.contains("\"calm\""), "{why}");
        let (field, why) = uses_of(&json!({"claims": [{"claim": "packing", "role": "stress"}]})).unwrap_err();
        assert_eq!(field, "claims[0].role");
        assert!(why.contains("cascading-pressure"), "{why}");
        assert_eq!(
            uses_of(&json!({"claims": {"claim": "packing"}})).unwrap_err().0,
            "claims"
        );
    }
}
