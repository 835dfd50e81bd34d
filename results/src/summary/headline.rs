//! What a comparison says, in words, above its table: which metrics differ
//! significantly from the reference arm and by how much, or that none does
//! and whether any could have with this many seeds; and which rows say
//! nothing because they are zero, equal or undefined in every run.

use super::Summary;
use super::format::{effect, p_value, plain};
use crate::definitions::METRICS;
use crate::stats::mann_whitney;

/// Metrics whose table rows would carry no information, by why.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Collapsed {
    /// defined and 0 in every run of every arm
    pub zero: Vec<&'static str>,
    /// defined and equal (not 0) in every run of every arm, with that value;
    /// only with at least 2 runs
    pub constant: Vec<(&'static str, f64)>,
    /// undefined in every run of every arm
    pub undefined: Vec<&'static str>,
}

impl Collapsed {
    pub fn contains(&self, key: &str) -> bool {
        self.zero.contains(&key) || self.undefined.contains(&key) || self.constant.iter().any(|(k, _)| *k == key)
    }

    /// One line per kind present: "zero in every run: pods_declined, ...".
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.zero.is_empty() {
            out.push(format!("zero in every run: {}", self.zero.join(", ")));
        }
        if !self.constant.is_empty() {
            let items: Vec<String> = self
                .constant
                .iter()
                .map(|(k, v)| format!("{k} = {}", plain(*v)))
                .collect();
            out.push(format!("the same in every run: {}", items.join(", ")));
        }
        if !self.undefined.is_empty() {
            out.push(format!("undefined in every run: {}", self.undefined.join(", ")));
        }
        out
    }
}

/// The metrics of [`METRICS`] that are zero, constant or undefined across
/// every run of every arm, in [`METRICS`] order.
pub fn collapsed_rows(summary: &Summary) -> Collapsed {
    let mut c = Collapsed::default();
    for (i, def) in METRICS.iter().enumerate() {
        let values: Vec<Option<f64>> = summary
            .arms()
            .iter()
            .filter_map(|a| a.metrics.get(i))
            .flat_map(|m| m.values.iter().map(|(_, v)| *v))
            .collect();
        let defined: Vec<f64> = values.iter().flatten().copied().collect();
        if defined.is_empty() {
            c.undefined.push(def.key);
        } else if defined.len() == values.len() && defined.windows(2).all(|w| w[0] == w[1]) {
            if defined[0] == 0.0 {
                c.zero.push(def.key);
            } else if defined.len() >= 2 {
                c.constant.push((def.key, defined[0]));
            }
        }
    }
    c
}

/// `x` with a real minus sign or a plus.
fn signed(text: String) -> String {
    match text.strip_prefix('-') {
        Some(rest) => format!("−{rest}"),
        None if text.chars().any(|c| c.is_ascii_digit() && c != '0') => format!("+{text}"),
        None => text,
    }
}

/// The size of a difference of means: relative to the reference's mean
/// where that is not 0, else absolute in the metric's unit.
pub(super) fn difference(arm_mean: f64, reference_mean: f64, unit: &str) -> String {
    if reference_mean != 0.0 {
        let pct = (arm_mean - reference_mean) / reference_mean.abs() * 100.0;
        let decimals = if pct.abs() < 10.0 { 1 } else { 0 };
        format!("{}%", signed(format!("{pct:.decimals$}")))
    } else {
        format!("{} {unit}", signed(plain(arm_mean - reference_mean)))
    }
}

/// The smallest two-sided Mann–Whitney p that `n` runs against `m` can
/// give: that of two samples that do not overlap.
fn smallest_p(n: usize, m: usize) -> Option<f64> {
    let x: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let y: Vec<f64> = (n..n + m).map(|i| i as f64).collect();
    mann_whitney(&x, &y).map(|t| t.p)
}

/// One line per arm other than the reference: "agmarl vs default: cost_usd
/// −54% (delta −1.00, Holm p 0.000300); ..." naming every metric with a
/// Holm-adjusted p below 0.05, the difference of the arm's mean from the
/// reference's (relative where the reference's is not 0) and Cliff's delta;
/// or, when none differs, how many seeds each side has and the smallest p
/// they could give. Empty with fewer than two arms.
pub fn headline(summary: &Summary) -> Vec<String> {
    let Some(reference) = summary.reference_arm() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for arm in summary.arms().iter().filter(|a| a.arm != reference.arm) {
        let significant: Vec<String> = arm
            .metrics
            .iter()
            .zip(&reference.metrics)
            .filter_map(|(m, r)| {
                let c = m.vs_reference.filter(|c| c.significant)?;
                let (a, b) = (m.estimate?.mean, r.estimate?.mean);
                Some(format!(
                    "{} {} (delta {}, Holm p {})",
                    m.def.key,
                    difference(a, b, m.def.unit),
                    signed(effect(c.cliffs_delta)),
                    p_value(c.p_holm)
                ))
            })
            .collect();
        if !significant.is_empty() {
            out.push(format!("{} vs {}: {}", arm.arm, reference.arm, significant.join("; ")));
            continue;
        }
        let (n, m) = (arm.runs.len(), reference.runs.len());
        let plural = |k: usize| if k == 1 { "seed" } else { "seeds" };
        let seeds = if n == m {
            format!("{n} {} a side", plural(n))
        } else {
            format!("{n} {} against {m}", plural(n))
        };
        let family = arm
            .metrics
            .iter()
            .find_map(|m| m.vs_reference.map(|c| c.family_size))
            .unwrap_or(0);
        let attainable = match smallest_p(n, m) {
            Some(p) if family > 0 => format!(
                "; the smallest p attainable is {} ({} after Holm over {family} metrics)",
                p_value(p),
                p_value((p * family as f64).min(1.0))
            ),
            Some(p) => format!("; the smallest p attainable is {}", p_value(p)),
            None => String::new(),
        };
        out.push(format!(
            "{} vs {}: no metric differs significantly (Holm-adjusted p < 0.05); {seeds}{attainable}",
            arm.arm, reference.arm
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differences_read_as_people_write_them() {
        assert_eq!(difference(46.0, 100.0, "USD"), "−54%");
        assert_eq!(difference(103.0, 100.0, "USD"), "+3.0%");
        assert_eq!(difference(2.5, 0.0, "events"), "+2.500 events");
        assert_eq!(difference(0.0, 0.0, "events"), "0 events");
        assert_eq!(signed(effect(-1.0)), "−1.00");
        assert_eq!(smallest_p(3, 3), Some(0.1));
    }
}
