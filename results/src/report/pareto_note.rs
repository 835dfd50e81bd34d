//! The sentence report.html says about the Pareto front.

use crate::pareto::{ParetoEntry, ParetoStatus};

/// Which arms are on the front and, for each dominated arm, which arms
/// dominate it; arms with an undefined objective are named apart.
pub fn pareto_note(entries: &[ParetoEntry]) -> String {
    let mut front = Vec::new();
    let mut dominated = Vec::new();
    let mut undefined = Vec::new();
    for e in entries {
        match &e.status {
            ParetoStatus::OnFront => front.push(e.point.arm.clone()),
            ParetoStatus::Dominated { by } => dominated.push(format!("{} (by {})", e.point.arm, by.join(", "))),
            ParetoStatus::Undefined => undefined.push(e.point.arm.clone()),
        }
    }
    if front.is_empty() && dominated.is_empty() {
        return "No arm has a mean cost, failure rate and restart count, so there is no Pareto front.".to_string();
    }
    let mut note = format!(
        "Over the arms' means of cost (USD), failure rate and restarts, all lower-better: on the front {}.",
        front.join(", ")
    );
    if dominated.is_empty() {
        note.push_str(" No arm is dominated.");
    } else {
        note.push_str(&format!(" Dominated: {}.", dominated.join("; ")));
    }
    if !undefined.is_empty() {
        note.push_str(&format!(
            " Not placed (an objective is undefined): {}.",
            undefined.join(", ")
        ));
    }
    note
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pareto::{ParetoPoint, pareto_front};

    fn point(arm: &str, cost: f64, rate: f64, restarts: Option<f64>) -> ParetoPoint {
        ParetoPoint {
            arm: arm.to_string(),
            cost_usd: Some(cost),
            failure_rate: Some(rate),
            restarts,
        }
    }

    #[test]
    fn names_the_front_and_who_dominates_whom() {
        let note = pareto_note(&pareto_front(&[
            point("default", 2.0, 0.1, Some(5.0)),
            point("binpack", 1.0, 0.2, Some(5.0)),
            point("random", 3.0, 0.3, Some(9.0)),
            point("odd", 1.0, 0.1, None),
        ]));
        assert!(note.contains("on the front default, binpack."), "{note}");
        assert!(note.contains("random (by default, binpack)"), "{note}");
        assert!(note.contains("Not placed (an objective is undefined): odd."), "{note}");
        assert!(pareto_note(&[]).contains("no Pareto front"));
        assert!(pareto_note(&pareto_front(&[point("a", 1.0, 0.0, Some(0.0))])).contains("No arm is dominated"));
    }
}
