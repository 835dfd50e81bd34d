//! `pareto_hv`: how much of the objective space a run's point dominates,
//! each objective scaled by the reference arm's mean. A run alone cannot
//! define it: the scale is the reference arm's mean over its seeds, which
//! only the summary of a scenario's run folders (every arm) knows, so
//! [`crate::summary::Summary`] computes it from each run's objectives and
//! this formula.

/// The fixed reference point in scaled units: twice the reference arm's
/// mean in every objective.
pub const HV_REFERENCE: f64 = 2.0;

/// Π max(0, 2 − xᵢ/refᵢ) over the objectives (cost_usd, failure_rate,
/// restarts); a component whose reference mean is 0 scales to 1 when xᵢ is
/// 0, else to 2. `None` when a value is not finite.
pub fn pareto_hv(x: [f64; 3], reference: [f64; 3]) -> Option<f64> {
    let mut volume = 1.0;
    for (xi, ri) in x.into_iter().zip(reference) {
        if !(xi.is_finite() && ri.is_finite()) {
            return None;
        }
        let scaled = if ri == 0.0 {
            if xi == 0.0 { 1.0 } else { HV_REFERENCE }
        } else {
            xi / ri
        };
        volume *= (HV_REFERENCE - scaled).max(0.0);
    }
    Some(volume)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_built_fronts_with_known_volumes() {
        let reference = [8.0, 0.25, 400.0];
        // at the reference mean: the unit cube
        assert_eq!(pareto_hv(reference, reference), Some(1.0));
        // at half in every objective: 1.5³
        assert_eq!(pareto_hv([4.0, 0.125, 200.0], reference), Some(1.5f64.powi(3)));
        // at the origin: the whole box 2³
        assert_eq!(pareto_hv([0.0, 0.0, 0.0], reference), Some(8.0));
        // beyond 2× in one objective: nothing dominated
        assert_eq!(pareto_hv([4.0, 0.6, 200.0], reference), Some(0.0));
        assert_eq!(pareto_hv([16.0, 0.25, 400.0], reference), Some(0.0));
        // mixed: 1.5 × 1 × 0.5
        assert_eq!(pareto_hv([4.0, 0.25, 600.0], reference), Some(0.75));
    }

    #[test]
    fn a_zero_reference_mean_scales_to_one_or_two() {
        // the reference arm never restarts: a run without restarts is as good
        // as it (1), one with any restart is at the reference point (2)
        assert_eq!(pareto_hv([8.0, 0.25, 0.0], [8.0, 0.25, 0.0]), Some(1.0));
        assert_eq!(pareto_hv([8.0, 0.25, 3.0], [8.0, 0.25, 0.0]), Some(0.0));
        assert_eq!(pareto_hv([4.0, 0.25, 0.0], [8.0, 0.25, 0.0]), Some(1.5));
        assert_eq!(pareto_hv([f64::NAN, 0.25, 0.0], [8.0, 0.25, 0.0]), None);
    }
}
