//! A scenario's `claims:` declaration: good declarations survive into the
//! resolved scenario, and each bad one is one line naming the field and value.

mod common;

use common::BASE;
use schedlab_core::{ClaimName, ClaimRole, ClaimUse};
use workloads::parse_str;

/// BASE with a node fault (or not), a web template whose memory request is
/// drawn (or not), and `claims` appended.
fn scenario(faults: bool, drawn: bool, claims: &str) -> String {
    let mut s = BASE.to_string();
    if drawn {
        s = s.replace(
            "requests: {cpu: 100m, memory: 128Mi}",
            "requests: {cpu: 100m, memory: {lognormal: {median: 128Mi, sigma: 0.4}}}",
        );
    }
    if faults {
        s.push_str("  - at: 5m\n    fail_nodes: {count: 1, recover_after: 5m}\n");
    }
    s.push_str(claims);
    s
}

fn err(text: &str) -> String {
    let msg = parse_str("my.yaml", text)
        .expect_err("the declaration should be rejected")
        .to_string();
    assert!(!msg.contains('\n'), "not one line: {msg}");
    assert!(msg.starts_with("scenario my.yaml: "), "no origin: {msg}");
    msg
}

#[test]
fn good_declarations_survive_into_the_resolved_scenario() {
    let text = scenario(
        true,
        true,
        "claims:\n  - {claim: restraint, role: churn-faults}\n  - {claim: pareto, role: stress-faults}\n  - {claim: decoupling, role: varying-requests}\n",
    );
    let s = parse_str("my.yaml", &text).unwrap();
    let want = vec![
        ClaimUse {
            claim: ClaimName::Restraint,
            role: ClaimRole::ChurnFaults,
        },
        ClaimUse {
            claim: ClaimName::Pareto,
            role: ClaimRole::StressFaults,
        },
        ClaimUse {
            claim: ClaimName::Decoupling,
            role: ClaimRole::VaryingRequests,
        },
    ];
    assert_eq!(s.claims(), want.as_slice());
    let resolved = s.resolved();
    assert_eq!(
        resolved["claims"],
        serde_json::json!([
            {"claim": "restraint", "role": "churn-faults"},
            {"claim": "pareto", "role": "stress-faults"},
            {"claim": "decoupling", "role": "varying-requests"},
        ])
    );
    // the resolved scenario loads again with the same claims
    let again = parse_str("resolved.json", &resolved.to_string()).unwrap();
    assert_eq!(again.claims(), want.as_slice());
}

#[test]
fn no_declaration_is_an_empty_list() {
    let s = parse_str("my.yaml", BASE).unwrap();
    assert!(s.claims().is_empty());
    assert_eq!(s.resolved()["claims"], serde_json::json!([]));
}

#[test]
fn roles_without_requirements_need_nothing() {
    let text = scenario(
        false,
        false,
        "claims:\n  - {claim: packing, role: cascading-pressure}\n  - {claim: pareto, role: stress}\n  - {claim: scaling, role: size-series}\n",
    );
    assert_eq!(parse_str("my.yaml", &text).unwrap().claims().len(), 3);
}

#[test]
fn an_unknown_claim_lists_the_known_ones() {
    let msg = err(&scenario(false, false, "claims:\n  - {claim: packign, role: stress}\n"));
    assert!(
        msg.contains(
            "claims[0].claim = packign: unknown claim (known claims: packing, restraint, decoupling, pareto, scaling)"
        ),
        "{msg}"
    );
}

#[test]
fn a_role_of_another_claim_lists_the_claims_roles() {
    let msg = err(&scenario(
        true,
        false,
        "claims:\n  - {claim: pareto, role: churn-faults}\n",
    ));
    assert!(
        msg.contains("claims[0].role = churn-faults: not a role of claim pareto (its roles: stress, stress-faults)"),
        "{msg}"
    );
    let msg = err(&scenario(
        false,
        false,
        "claims:\n  - {claim: packing, role: presure}\n",
    ));
    assert!(
        msg.contains("claims[0].role = presure: not a role of claim packing (its roles: cascading-pressure)"),
        "{msg}"
    );
}

#[test]
fn the_same_claim_twice_is_refused() {
    let msg = err(&scenario(
        true,
        false,
        "claims:\n  - {claim: pareto, role: stress}\n  - {claim: restraint, role: churn-faults}\n  - {claim: pareto, role: stress-faults}\n",
    ));
    assert!(
        msg.contains("claims[2].claim = pareto: declared twice (also claims[0])"),
        "{msg}"
    );
}

#[test]
fn a_role_whose_requirement_is_not_met_says_what_is_missing() {
    let msg = err(&scenario(
        false,
        false,
        "claims:\n  - {claim: restraint, role: churn-faults}\n",
    ));
    assert!(
        msg.contains("claims[0].role = churn-faults: role churn-faults needs node faults; this scenario has none"),
        "{msg}"
    );
    let msg = err(&scenario(
        false,
        false,
        "claims:\n  - {claim: pareto, role: stress-faults}\n",
    ));
    assert!(msg.contains("role stress-faults needs node faults"), "{msg}");
    let msg = err(&scenario(
        true,
        false,
        "claims:\n  - {claim: decoupling, role: varying-requests}\n",
    ));
    assert!(
        msg.contains(
            "claims[0].role = varying-requests: role varying-requests needs memory requests that vary between pods of one workload; this scenario has none"
        ),
        "{msg}"
    );
    // a memory request written as a distribution that cannot vary does not count
    let constant = scenario(
        false,
        false,
        "claims:\n  - {claim: decoupling, role: varying-requests}\n",
    )
    .replace("memory: 128Mi}", "memory: {uniform: {min: 128Mi, max: 128Mi}}}");
    assert!(err(&constant).contains("role varying-requests needs"));
    // lost spot nodes and zone outages are node faults too
    let lost = format!(
        "{BASE}  - at: 1m\n    lose_nodes: {{rate_per_node_hour: 1, for: 5m, replace_after: 2m}}\nclaims:\n  - {{claim: restraint, role: churn-faults}}\n"
    );
    parse_str("my.yaml", &lost).unwrap();
}

#[test]
fn unknown_fields_of_an_entry_are_errors() {
    let msg = err(&scenario(false, false, "claims:\n  - {claim: pareto, rol: stress}\n"));
    assert!(msg.contains("rol"), "{msg}");
}
