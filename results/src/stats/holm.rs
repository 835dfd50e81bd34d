//! Holm–Bonferroni adjustment of a family of p-values.

/// Holm's step-down adjusted p-values, in the order given. Entries that are
/// `None` (tests that could not be run) are not part of the family and stay
/// `None`. With the m defined p-values sorted ascending, the i-th (from 0)
/// becomes max over j <= i of min(1, (m − j)·p_(j)): never below the raw p,
/// and in the same order as the raw p-values. Rejecting where the adjusted p
/// is below α controls the family-wise error rate at α.
pub fn holm(p_values: &[Option<f64>]) -> Vec<Option<f64>> {
    let mut order: Vec<(usize, f64)> = p_values
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.filter(|p| p.is_finite()).map(|p| (i, p)))
        .collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    let m = order.len();
    let mut adjusted = vec![None; p_values.len()];
    let mut running: f64 = 0.0;
    for (rank, &(i, p)) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p).min(1.0));
        adjusted[i] = Some(running);
    }
    adjusted
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn by_hand() {
        // sorted 0.01, 0.02, 0.03, 0.5 (m = 4): 0.04, 0.06, 0.06 (monotone), 0.5
        let adj = holm(&[Some(0.03), Some(0.01), None, Some(0.5), Some(0.02)]);
        assert!(close(adj[1], 0.04));
        assert!(close(adj[4], 0.06));
        assert!(close(adj[0], 0.06));
        assert!(close(adj[3], 0.5));
        assert_eq!(adj[2], None);
        // capped at 1
        assert!(close(holm(&[Some(0.6), Some(0.7)])[0], 1.0));
        assert!(holm(&[]).is_empty());
    }
}
