//! The catalogue of the AGMARL-DKS paper's claims that the lab tests, and
//! the roles a scenario can play in testing them. It lives in the core so
//! that `workloads` (a scenario's `claims:` declaration) and `results` (the
//! claims table) read one list: a claim or role is spelled, numbered and
//! required of a scenario in exactly one place.
//!
//! | number | name | roles |
//! |---|---|---|
//! | 1 | `packing` | `cascading-pressure` |
//! | 2 | `restraint` | `churn-faults` |
//! | 3 | `decoupling` | `varying-requests` |
//! | 4 | `pareto` | `stress`, `stress-faults` |
//! | 5 | `scaling` | `size-series` |

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One of the paper's claims, by the name the lab gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimName {
    /// 1: smart packing gives higher utilisation and throughput without starvation
    Packing,
    /// 2: restraint keeps head-room, prevents cascades, isolates hot-spots
    Restraint,
    /// 3: placement decouples a pod's failures from its memory request
    Decoupling,
    /// 4: a better Pareto balance of cost and reliability under stress
    Pareto,
    /// 5: per-node agents scale where monolithic agents do not
    Scaling,
}

/// The part a scenario plays in testing a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimRole {
    /// work that completes and queues while resources run short
    CascadingPressure,
    /// churn with node faults: head-room and cascades matter
    ChurnFaults,
    /// memory requests that vary between pods of one workload
    VaryingRequests,
    /// a cluster under stress without node faults
    Stress,
    /// a cluster under stress with node faults
    StressFaults,
    /// one scenario at several sizes
    SizeSeries,
}

/// What a role needs of a scenario before its rows can mean anything; a
/// declaration whose scenario lacks it is refused at load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Requirement {
    /// some phase fails, degrades or loses nodes
    NodeFaults,
    /// some template's memory request is drawn per pod, not one constant
    VaryingMemoryRequests,
}

impl Requirement {
    /// How an error message names it: "role churn-faults needs node faults".
    pub fn describe(self) -> &'static str {
        match self {
            Requirement::NodeFaults => "node faults",
            Requirement::VaryingMemoryRequests => "memory requests that vary between pods of one workload",
        }
    }
}

/// A claim and the role a scenario plays for it: one entry of a
/// scenario's `claims:` list and of `resolved_scenario.claims`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "UncheckedUse")]
pub struct ClaimUse {
    pub claim: ClaimName,
    pub role: ClaimRole,
}

/// A use as read, before its role is checked against its claim, so that a
/// hand-edited manifest cannot pair a claim with another claim's role.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UncheckedUse {
    claim: ClaimName,
    role: ClaimRole,
}

impl TryFrom<UncheckedUse> for ClaimUse {
    type Error = ClaimError;
    fn try_from(u: UncheckedUse) -> Result<Self, Self::Error> {
        if u.role.claim() == u.claim {
            Ok(ClaimUse {
                claim: u.claim,
                role: u.role,
            })
        } else {
            Err(ClaimError::RoleNotOfClaim {
                claim: u.claim,
                role: u.role.to_string(),
            })
        }
    }
}

/// A claim or role name that is not in the catalogue, or a role that does
/// not belong to the claim it is given for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    #[error("unknown claim `{name}` (known claims: {})", ClaimName::known())]
    UnknownClaim { name: String },
    #[error("unknown role `{name}` (known roles: {})", ClaimRole::known())]
    UnknownRole { name: String },
    #[error("claim {claim} has no role `{role}` (its roles: {})", join(roles(*claim)))]
    RoleNotOfClaim { claim: ClaimName, role: String },
}

fn join<T: fmt::Display>(items: &[T]) -> String {
    items.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}

impl ClaimName {
    /// Every claim, in the paper's order.
    pub const ALL: [ClaimName; 5] = [
        ClaimName::Packing,
        ClaimName::Restraint,
        ClaimName::Decoupling,
        ClaimName::Pareto,
        ClaimName::Scaling,
    ];

    /// The claim's number in the paper's list (1-based).
    pub fn number(self) -> u8 {
        match self {
            ClaimName::Packing => 1,
            ClaimName::Restraint => 2,
            ClaimName::Decoupling => 3,
            ClaimName::Pareto => 4,
            ClaimName::Scaling => 5,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            ClaimName::Packing => "packing",
            ClaimName::Restraint => "restraint",
            ClaimName::Decoupling => "decoupling",
            ClaimName::Pareto => "pareto",
            ClaimName::Scaling => "scaling",
        }
    }

    /// The roles a scenario may play for this claim.
    pub fn roles(self) -> &'static [ClaimRole] {
        roles(self)
    }

    /// "packing, restraint, ...": for error messages.
    pub fn known() -> String {
        join(&Self::ALL)
    }
}

impl ClaimRole {
    /// Every role, grouped by claim in the paper's order.
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

    /// The claim this role belongs to (every role belongs to exactly one).
    pub fn claim(self) -> ClaimName {
        match self {
            ClaimRole::CascadingPressure => ClaimName::Packing,
            ClaimRole::ChurnFaults => ClaimName::Restraint,
            ClaimRole::VaryingRequests => ClaimName::Decoupling,
            ClaimRole::Stress | ClaimRole::StressFaults => ClaimName::Pareto,
            ClaimRole::SizeSeries => ClaimName::Scaling,
        }
    }

    /// What a scenario must have to play this role, if anything.
    pub fn requirement(self) -> Option<Requirement> {
        match self {
            ClaimRole::ChurnFaults | ClaimRole::StressFaults => Some(Requirement::NodeFaults),
            ClaimRole::VaryingRequests => Some(Requirement::VaryingMemoryRequests),
            ClaimRole::CascadingPressure | ClaimRole::Stress | ClaimRole::SizeSeries => None,
        }
    }

    /// "cascading-pressure, churn-faults, ...": for error messages.
    pub fn known() -> String {
        join(&Self::ALL)
    }
}

/// The roles a scenario may play for `claim`.
pub fn roles(claim: ClaimName) -> &'static [ClaimRole] {
    match claim {
        ClaimName::Packing => &[ClaimRole::CascadingPressure],
        ClaimName::Restraint => &[ClaimRole::ChurnFaults],
        ClaimName::Decoupling => &[ClaimRole::VaryingRequests],
        ClaimName::Pareto => &[ClaimRole::Stress, ClaimRole::StressFaults],
        ClaimName::Scaling => &[ClaimRole::SizeSeries],
    }
}

impl ClaimUse {
    /// The use of `claim` in `role`, from their names: unknown names and a
    /// role of another claim are errors that list what would be accepted.
    pub fn parse(claim: &str, role: &str) -> Result<ClaimUse, ClaimError> {
        let claim: ClaimName = claim.parse()?;
        let role_parsed: ClaimRole = role.parse().map_err(|_| ClaimError::RoleNotOfClaim {
            claim,
            role: role.to_string(),
        })?;
        if role_parsed.claim() != claim {
            return Err(ClaimError::RoleNotOfClaim {
                claim,
                role: role.to_string(),
            });
        }
        Ok(ClaimUse {
            claim,
            role: role_parsed,
        })
    }
}

impl FromStr for ClaimName {
    type Err = ClaimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|c| c.as_str() == s)
            .ok_or_else(|| ClaimError::UnknownClaim { name: s.to_string() })
    }
}

impl FromStr for ClaimRole {
    type Err = ClaimError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| ClaimError::UnknownRole { name: s.to_string() })
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

impl fmt::Display for ClaimUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.claim, self.role)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_strings_and_serde() {
        for c in ClaimName::ALL {
            assert_eq!(c.as_str().parse::<ClaimName>(), Ok(c));
            assert_eq!(serde_json::to_value(c).unwrap(), serde_json::json!(c.as_str()));
            assert_eq!(
                serde_json::from_value::<ClaimName>(serde_json::json!(c.as_str())).unwrap(),
                c
            );
        }
        for r in ClaimRole::ALL {
            assert_eq!(r.as_str().parse::<ClaimRole>(), Ok(r));
            assert_eq!(serde_json::to_value(r).unwrap(), serde_json::json!(r.as_str()));
            assert_eq!(
                serde_json::from_value::<ClaimRole>(serde_json::json!(r.as_str())).unwrap(),
                r
            );
        }
    }

    #[test]
    fn the_catalogue_is_the_fixed_table() {
        let table: Vec<(u8, &str, Vec<&str>)> = ClaimName::ALL
            .iter()
            .map(|c| (c.number(), c.as_str(), c.roles().iter().map(|r| r.as_str()).collect()))
            .collect();
        assert_eq!(
            table,
            vec![
                (1, "packing", vec!["cascading-pressure"]),
                (2, "restraint", vec!["churn-faults"]),
                (3, "decoupling", vec!["varying-requests"]),
                (4, "pareto", vec!["stress", "stress-faults"]),
                (5, "scaling", vec!["size-series"]),
            ]
        );
    }

    #[test]
    fn every_claim_has_a_role_and_every_role_one_claim() {
        for c in ClaimName::ALL {
            assert!(!roles(c).is_empty(), "{c} has no role");
            for r in roles(c) {
                assert_eq!(r.claim(), c);
            }
        }
        for r in ClaimRole::ALL {
            let owners = ClaimName::ALL.iter().filter(|c| roles(**c).contains(&r)).count();
            assert_eq!(owners, 1, "{r} belongs to {owners} claims");
        }
    }

    #[test]
    fn requirements_are_the_ones_the_roles_need() {
        assert_eq!(ClaimRole::ChurnFaults.requirement(), Some(Requirement::NodeFaults));
        assert_eq!(ClaimRole::StressFaults.requirement(), Some(Requirement::NodeFaults));
        assert_eq!(
            ClaimRole::VaryingRequests.requirement(),
            Some(Requirement::VaryingMemoryRequests)
        );
        for r in [ClaimRole::CascadingPressure, ClaimRole::Stress, ClaimRole::SizeSeries] {
            assert_eq!(r.requirement(), None, "{r}");
        }
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let e = "packign".parse::<ClaimName>().unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown claim `packign` (known claims: packing, restraint, decoupling, pareto, scaling)"
        );
        let e = "stres".parse::<ClaimRole>().unwrap_err().to_string();
        assert_eq!(
            e,
            "unknown role `stres` (known roles: cascading-pressure, churn-faults, varying-requests, stress, stress-faults, size-series)"
        );
    }

    #[test]
    fn a_role_of_another_claim_lists_the_claims_roles() {
        assert_eq!(
            ClaimUse::parse("pareto", "stress-faults"),
            Ok(ClaimUse {
                claim: ClaimName::Pareto,
                role: ClaimRole::StressFaults
            })
        );
        let e = ClaimUse::parse("pareto", "churn-faults").unwrap_err().to_string();
        assert_eq!(
            e,
            "claim pareto has no role `churn-faults` (its roles: stress, stress-faults)"
        );
        let e = ClaimUse::parse("packing", "nonsense").unwrap_err().to_string();
        assert_eq!(
            e,
            "claim packing has no role `nonsense` (its roles: cascading-pressure)"
        );
        assert!(matches!(
            ClaimUse::parse("nope", "stress"),
            Err(ClaimError::UnknownClaim { .. })
        ));
    }

    #[test]
    fn a_claim_use_reads_and_writes_the_manifest_form() {
        let u: ClaimUse = serde_json::from_str(r#"{"claim": "packing", "role": "cascading-pressure"}"#).unwrap();
        assert_eq!(u.to_string(), "packing/cascading-pressure");
        assert_eq!(
            serde_json::to_value(u).unwrap(),
            serde_json::json!({"claim": "packing", "role": "cascading-pressure"})
        );
        assert!(serde_json::from_str::<ClaimUse>(r#"{"claim": "packing", "role": "x"}"#).is_err());
        let e = serde_json::from_str::<ClaimUse>(r#"{"claim": "packing", "role": "stress"}"#).unwrap_err();
        assert!(e.to_string().contains("claim packing has no role `stress`"), "{e}");
    }
}
