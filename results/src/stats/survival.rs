//! Kaplan–Meier quantiles of right-censored times: a time-to-event
//! distribution in which some subjects never had the event (a pod never
//! bound), so their times are only known to exceed the censoring time.

/// One subject: the time observed and whether it is the event's time (true)
/// or a censoring time (false: the event had not happened by then).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    pub time: u64,
    pub event: bool,
}

/// The `q`-quantile of the Kaplan–Meier estimate of the time-to-event
/// distribution: the smallest event time t at which the estimated
/// S(t) = Π over event times t_i ≤ t of (1 − d_i / n_i) is at most 1 − q,
/// d_i being the events at t_i and n_i the subjects whose time is at least
/// t_i (a subject censored at t_i is still at risk at t_i: events come
/// before censorings at equal times). `None` for an empty sample, a `q`
/// outside (0, 1], or when the estimate never falls to 1 − q because too
/// many subjects are censored. Without censoring it is the nearest-rank
/// quantile of the times.
pub fn kaplan_meier_quantile(observations: &[Observation], q: f64) -> Option<u64> {
    if observations.is_empty() || !(q > 0.0 && q <= 1.0) {
        return None;
    }
    let mut sorted = observations.to_vec();
    sorted.sort_by_key(|o| o.time);
    let mut at_risk = sorted.len() as f64;
    let mut survival = 1.0f64;
    let mut i = 0;
    while i < sorted.len() {
        let t = sorted[i].time;
        let (mut events, mut all) = (0u64, 0u64);
        while i < sorted.len() && sorted[i].time == t {
            events += u64::from(sorted[i].event);
            all += 1;
            i += 1;
        }
        if events > 0 {
            survival *= 1.0 - events as f64 / at_risk;
            // The tolerance keeps a product such as 99/100 · 98/99 · …
            // that lands a rounding error above 1 − q from moving one
            // event later (as in `nearest_rank`).
            if survival <= 1.0 - q + 1e-9 {
                return Some(t);
            }
        }
        at_risk -= all as f64;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::nearest_rank;

    fn ev(time: u64) -> Observation {
        Observation { time, event: true }
    }
    fn cens(time: u64) -> Observation {
        Observation { time, event: false }
    }

    #[test]
    fn without_censoring_it_is_the_nearest_rank_quantile() {
        let obs: Vec<Observation> = (1..=100).map(ev).collect();
        let sorted: Vec<f64> = (1..=100).map(f64::from).collect();
        for q in [0.01, 0.5, 0.95, 0.99, 1.0] {
            assert_eq!(
                kaplan_meier_quantile(&obs, q).map(|t| t as f64),
                nearest_rank(&sorted, q),
                "q {q}"
            );
        }
    }

    #[test]
    fn censored_subjects_leave_the_risk_set() {
        // events at 1, 3, 4; censored at 2 and 5. S(1) = 4/5; at 3 three at
        // risk: S(3) = 4/5 · 2/3 = 8/15; at 4 two: S(4) = 8/15 · 1/2 = 4/15.
        let obs = [ev(1), cens(2), ev(3), ev(4), cens(5)];
        assert_eq!(kaplan_meier_quantile(&obs, 0.2), Some(1));
        assert_eq!(kaplan_meier_quantile(&obs, 0.5), Some(4));
        // S never falls below 4/15: the 99th percentile is not reached
        assert_eq!(kaplan_meier_quantile(&obs, 0.99), None);
        // a censoring at an event's time is still at risk then
        let tied = [ev(2), cens(2)];
        assert_eq!(kaplan_meier_quantile(&tied, 0.5), Some(2));
        assert_eq!(kaplan_meier_quantile(&tied, 0.6), None);
        assert_eq!(kaplan_meier_quantile(&[], 0.5), None);
        assert_eq!(kaplan_meier_quantile(&[cens(3)], 0.5), None);
        assert_eq!(kaplan_meier_quantile(&obs, 0.0), None);
    }
}
