//! What a run prints by default: a headline of at most eight lines and a
//! key table that fits 120 columns, with a pointer to the full table.
//!
//! The full table (every metric, [`Summary::to_terminal_table`]) is in the
//! report and behind `--all-metrics`; at 50 rows and a column per arm it
//! wraps on any terminal, and the one-line-per-arm list of every
//! significant difference above it ran to thousands of characters. Here
//! only the key metrics (cost, failures, node-pressure OOM events,
//! critical-pod binding, packing, declines) are shown, with the same
//! estimates and the same tests (Mann–Whitney against the reference arm,
//! Holm over every metric of the arm, as in the full table).

use super::format::{NA, decimals_for, fixed, p_value};
use super::headline::difference;
use super::markdown::direction;
use super::{ArmSummary, MetricStats, Summary, collapsed_rows};
use crate::definitions::METRICS;
use crate::pareto::ParetoStatus;
use std::fmt::Write;
use tabled::builder::Builder;
use tabled::settings::Style;

/// The key metrics, in the order they are shown.
pub const KEY_METRICS: [&str; 12] = [
    "cost_usd",
    "failures_per_running_pod_hour",
    "failure_rate",
    "oom_pressure_events",
    "restarts",
    "evictions",
    "critical_bind_p99_s",
    "pending_time_mean_s",
    "nodes_in_use_mean",
    "cpu_util_in_use_mean",
    "pods_declined",
    "pods_never_bound",
];

/// The widest line printed.
pub const MAX_WIDTH: usize = 120;

/// Lines of the headline at most.
pub const MAX_HEADLINE: usize = 8;

/// Key metrics named per arm in the headline at most.
const PER_ARM: usize = 3;

/// `x` to 3 significant digits, whole numbers as they are.
fn short(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e6 {
        return fixed(x, 0);
    }
    fixed(x, decimals_for(x, 3))
}

/// A key table cell: "mean ±hw" to 3 significant digits, "n/a" undefined.
fn cell(m: &MetricStats) -> String {
    match m.estimate {
        None => NA.to_string(),
        Some(e) if e.n == 1 => format!("{} (n=1)", short(e.mean)),
        Some(e) => format!("{} ±{}", short(e.mean), short(e.ci.half_width())),
    }
}

/// One arm's key metrics that differ from the reference, most significant
/// first: (metric, "cost_usd −18% (p 0.001)").
fn differing(arm: &ArmSummary, reference: &ArmSummary) -> Vec<(f64, String)> {
    let mut out: Vec<(f64, String)> = KEY_METRICS
        .iter()
        .filter_map(|key| {
            let i = METRICS.iter().position(|d| d.key == *key)?;
            let (m, r) = (arm.metrics.get(i)?, reference.metrics.get(i)?);
            let c = m.vs_reference.filter(|c| c.significant)?;
            let (a, b) = (m.estimate?.mean, r.estimate?.mean);
            Some((
                c.p_holm,
                format!("{key} {} (p {})", difference(a, b, m.def.unit), p_value(c.p_holm)),
            ))
        })
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

impl Summary {
    /// The headline: per arm other than the reference, up to three key
    /// metrics that differ significantly from it; arms where none does
    /// share one line; at most [`MAX_HEADLINE`] lines.
    pub fn brief_headline(&self) -> Vec<String> {
        let Some(reference) = self.reference_arm() else {
            return Vec::new();
        };
        let others: Vec<&ArmSummary> = self.arms().iter().filter(|a| a.arm != reference.arm).collect();
        let mut lines = Vec::new();
        let mut quiet = Vec::new();
        for arm in &others {
            let d = differing(arm, reference);
            if d.is_empty() {
                quiet.push(arm.arm.as_str());
                continue;
            }
            let shown: Vec<&str> = d.iter().take(PER_ARM).map(|(_, s)| s.as_str()).collect();
            let more = if d.len() > PER_ARM {
                format!("; {} more", d.len() - PER_ARM)
            } else {
                String::new()
            };
            lines.push(format!("{} vs {}: {}{more}", arm.arm, reference.arm, shown.join("; ")));
        }
        if !quiet.is_empty() {
            lines.push(format!(
                "no key metric differs from {}: {}",
                reference.arm,
                quiet.join(", ")
            ));
        }
        if lines.len() > MAX_HEADLINE {
            let cut = lines.len() - (MAX_HEADLINE - 1);
            lines.truncate(MAX_HEADLINE - 1);
            lines.push(format!("… and {cut} more lines in the report"));
        }
        lines.into_iter().map(|l| clip(&l, MAX_WIDTH)).collect()
    }

    /// The [`METRICS`] indices of the key metrics that say something (not
    /// zero, constant or undefined in every run), in [`KEY_METRICS`] order:
    /// the rows of the key table and the panels of the forest plot.
    pub fn key_metric_indices(&self) -> Vec<usize> {
        let collapsed = collapsed_rows(self);
        KEY_METRICS
            .iter()
            .filter(|k| !collapsed.contains(k))
            .filter_map(|k| METRICS.iter().position(|d| d.key == *k))
            .collect()
    }

    /// The key table, split into groups of arms so that no line passes
    /// [`MAX_WIDTH`]; each group repeats the metric column.
    pub fn key_tables(&self) -> Vec<String> {
        let rows: Vec<(usize, &'static str)> = self
            .key_metric_indices()
            .into_iter()
            .map(|i| (i, METRICS[i].key))
            .collect();
        if rows.is_empty() || self.arms().is_empty() {
            return Vec::new();
        }
        let label = |i: usize, key: &str| format!("{key}{}", direction(METRICS[i].better));
        // per row, which arms have its best mean: once per row, not per cell
        let best: Vec<Vec<bool>> = rows.iter().map(|&(i, _)| self.best_arms(i)).collect();
        let columns: Vec<(String, Vec<String>)> = self
            .arms()
            .iter()
            .enumerate()
            .map(|(position, arm)| {
                let head = if Some(arm.arm.as_str()) == self.reference() {
                    format!("{} (ref)", arm.arm)
                } else {
                    arm.arm.clone()
                };
                let cells = rows
                    .iter()
                    .zip(&best)
                    .map(|(&(i, _), best)| {
                        let Some(m) = arm.metrics.get(i) else {
                            return NA.to_string();
                        };
                        let mut c = cell(m);
                        if best.get(position).copied().unwrap_or(false) {
                            c.push_str(" *");
                        }
                        if m.vs_reference.is_some_and(|v| v.significant) {
                            c.push_str(" †");
                        }
                        c
                    })
                    .collect();
                (head, cells)
            })
            .collect();
        let width = |s: &str| s.chars().count();
        let metric_width = rows.iter().map(|&(i, k)| width(&label(i, k))).max().unwrap_or(6).max(6);
        // a rounded table: "│ " before each column, " │" after the last
        let column_width = |(head, cells): &(String, Vec<String>)| {
            cells.iter().map(|c| width(c)).chain([width(head)]).max().unwrap_or(0) + 3
        };
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut used = metric_width + 4;
        for (a, column) in columns.iter().enumerate() {
            let w = column_width(column);
            match groups.last_mut() {
                Some(group) if used + w <= MAX_WIDTH => group.push(a),
                _ => {
                    groups.push(vec![a]);
                    used = metric_width + 4;
                }
            }
            used += w;
        }
        groups
            .iter()
            .map(|group| {
                let mut builder = Builder::default();
                let mut header = vec!["metric".to_string()];
                header.extend(group.iter().map(|&a| columns[a].0.clone()));
                builder.push_record(header);
                for (r, &(i, key)) in rows.iter().enumerate() {
                    let mut row = vec![label(i, key)];
                    row.extend(group.iter().map(|&a| columns[a].1[r].clone()));
                    builder.push_record(row);
                }
                let mut table = builder.build();
                table.with(Style::rounded());
                table.to_string()
            })
            .collect()
    }

    /// What a run prints: the scenario line, the headline, the key table(s),
    /// a Pareto line when the front separates the arms, and `more` (where
    /// the full table is).
    pub fn to_terminal_brief(&self, more: &str) -> String {
        let mut out = String::new();
        let seeds = self.arms().iter().map(|a| a.runs.len()).max().unwrap_or(0);
        let against = self.reference().map_or_else(String::new, |r| format!(", against {r}"));
        let first = format!(
            "scenario {}: {} arms × {} seeds{against}; mean ±95% half-width, * best, † differs (Holm p < 0.05)",
            self.scenario(),
            self.arms().len(),
            seeds
        );
        let _ = writeln!(out, "{}", clip(&first, MAX_WIDTH));
        for line in self.brief_headline() {
            let _ = writeln!(out, "{line}");
        }
        for table in self.key_tables() {
            let _ = writeln!(out, "{table}");
        }
        let statuses = self.pareto();
        let dominated = statuses
            .iter()
            .filter(|e| matches!(e.status, ParetoStatus::Dominated { .. }))
            .count();
        let on_front: Vec<&str> = statuses
            .iter()
            .filter(|e| matches!(e.status, ParetoStatus::OnFront))
            .map(|e| e.point.arm.as_str())
            .collect();
        if dominated > 0 && !on_front.is_empty() {
            let _ = writeln!(
                out,
                "{}",
                clip(
                    &format!(
                        "Pareto front (cost, failure rate, restarts): {}; {dominated} dominated",
                        on_front.join(", ")
                    ),
                    MAX_WIDTH
                )
            );
        }
        let _ = writeln!(out, "{more}");
        out
    }
}

/// `text` cut to `max` characters, with an ellipsis when cut.
pub(crate) fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_changes_signed() {
        assert_eq!(short(0.93154), "0.932");
        assert_eq!(short(12.3456), "12.3");
        assert_eq!(short(1234.5), "1234");
        assert_eq!(short(41.0), "41");
        assert_eq!(short(0.000053), "0.0000530");
        assert_eq!(clip("abcdef", 4), "abc…");
    }
}
