//! `claims`: which of the paper's claims the scenario tests, in which role,
//! checked against the catalogue (`schedlab_core::claims`) and against what
//! each role needs of a scenario.

use super::dist::varies;
use crate::error::ScenarioError;
use crate::model::{Phase, PhaseKind, Template};
use crate::raw::RawClaim;
use crate::value::Resolver;
use schedlab_core::claims::{ClaimName, ClaimRole, ClaimUse, Requirement};

pub(crate) fn claims(
    r: &Resolver<'_>,
    raw: &[RawClaim],
    templates: &[Template],
    phases: &[Phase],
) -> Result<Vec<ClaimUse>, ScenarioError> {
    let mut out: Vec<ClaimUse> = Vec::with_capacity(raw.len());
    for (i, c) in raw.iter().enumerate() {
        let path = format!("claims[{i}]");
        let claim_path = format!("{path}.claim");
        let name = r.text(&c.claim, &claim_path)?;
        let claim: ClaimName = name.parse().map_err(|_| {
            r.error(
                &claim_path,
                &c.claim,
                name.clone(),
                format!("unknown claim (known claims: {})", ClaimName::known()),
            )
        })?;
        if let Some(j) = out.iter().position(|u| u.claim == claim) {
            return Err(r.error(
                &claim_path,
                &c.claim,
                name,
                format!("declared twice (also claims[{j}]); a scenario plays one role per claim"),
            ));
        }
        let role_path = format!("{path}.role");
        let role_name = r.text(&c.role, &role_path)?;
        let its_roles = || claim.roles().iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ");
        let role = role_name
            .parse::<ClaimRole>()
            .ok()
            .filter(|role| role.claim() == claim)
            .ok_or_else(|| {
                r.error(
                    &role_path,
                    &c.role,
                    role_name.clone(),
                    format!("not a role of claim {claim} (its roles: {})", its_roles()),
                )
            })?;
        if let Some(need) = role.requirement()
            && let Some(missing) = lacks(need, templates, phases)
        {
            return Err(r.error(
                &role_path,
                &c.role,
                role_name,
                format!(
                    "role {role} needs {}; this scenario has none ({missing})",
                    need.describe()
                ),
            ));
        }
        out.push(ClaimUse { claim, role });
    }
    Ok(out)
}

/// What the scenario lacks to meet `need`, said so a user sees what to add.
fn lacks(need: Requirement, templates: &[Template], phases: &[Phase]) -> Option<&'static str> {
    let met = match need {
        Requirement::NodeFaults => phases.iter().any(|p| {
            matches!(
                p.kind,
                PhaseKind::FailNodes(_)
                    | PhaseKind::DegradeNodes(_)
                    | PhaseKind::LoseNodes(_)
                    | PhaseKind::ZoneOutage { .. }
            )
        }),
        Requirement::VaryingMemoryRequests => templates.iter().any(|t| t.sizing.memory.as_ref().is_some_and(varies)),
    };
    if met {
        return None;
    }
    Some(match need {
        Requirement::NodeFaults => "no fail_nodes, degrade_nodes, lose_nodes or zone_outage phase",
        Requirement::VaryingMemoryRequests => {
            "no template draws its memory request per pod from a distribution that varies"
        }
    })
}
