//! The table printed at the end of a run.

use super::format::metric_cell;
use super::markdown::direction;
use super::{Summary, collapsed_rows, headline};
use crate::definitions::METRICS;
use crate::pareto::ParetoStatus;
use crate::stats::CONFIDENCE;
use std::fmt::Write;
use tabled::builder::Builder;
use tabled::settings::Style;

impl Summary {
    /// The headline (what differs significantly from the reference arm, see
    /// [`headline`]), then the table: rows = metrics, columns = arms, cells
    /// "mean ± half-width" of the bootstrap interval; `*` marks the best mean
    /// where a direction is better, `†` a significant difference from the
    /// reference arm. Rows zero, equal or undefined in every run are left out
    /// of the table and listed in one line each below it (see
    /// [`collapsed_rows`]); then the Pareto front.
    pub fn to_terminal_table(&self) -> String {
        let collapsed = collapsed_rows(self);
        let mut builder = Builder::default();
        let mut header = vec!["metric".to_string(), "unit".to_string()];
        header.extend(self.arms().iter().map(|a| {
            if Some(a.arm.as_str()) == self.reference() {
                format!("{} (ref)", a.arm)
            } else {
                a.arm.clone()
            }
        }));
        builder.push_record(header);
        for (i, def) in METRICS.iter().enumerate() {
            if collapsed.contains(def.key) {
                continue;
            }
            let best = self.best_arms(i);
            let mut row = vec![format!("{}{}", def.key, direction(def.better)), def.unit.to_string()];
            for (arm, is_best) in self.arms().iter().zip(best) {
                let m = arm.metrics.get(i);
                let mut cell = m.map_or_else(|| "n/a".to_string(), metric_cell);
                if is_best {
                    cell.push_str(" *");
                }
                if m.and_then(|m| m.vs_reference).is_some_and(|c| c.significant) {
                    cell.push_str(" †");
                }
                row.push(cell);
            }
            builder.push_record(row);
        }
        let mut table = builder.build();
        table.with(Style::rounded());
        let mut out = format!(
            "scenario {}: mean ± half-width of the {}% bootstrap interval over seeds; ↓/↑ lower/higher is better, \
             * best mean, † differs from the reference arm (Mann–Whitney U, Holm p < 0.05)\n",
            self.scenario(),
            CONFIDENCE * 100.0
        );
        for line in headline(self) {
            let _ = writeln!(out, "{line}");
        }
        let _ = writeln!(out, "{table}");
        for line in collapsed.lines() {
            let _ = writeln!(out, "{line}");
        }
        let pareto: Vec<String> = self
            .pareto()
            .iter()
            .map(|e| match &e.status {
                ParetoStatus::OnFront => format!("{} on the front", e.point.arm),
                ParetoStatus::Dominated { by } => format!("{} dominated by {}", e.point.arm, by.join(", ")),
                ParetoStatus::Undefined => format!("{} n/a", e.point.arm),
            })
            .collect();
        if !pareto.is_empty() {
            let _ = writeln!(out, "Pareto (cost, failure rate, restarts): {}", pareto.join("; "));
        }
        out
    }
}
