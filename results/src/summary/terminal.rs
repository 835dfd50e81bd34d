//! The table printed at the end of a run.

use super::Summary;
use super::format::{metric_cell, p_value};
use super::markdown::direction;
use crate::definitions::METRICS;
use crate::pareto::ParetoStatus;
use crate::stats::CONFIDENCE;
use std::fmt::Write;
use tabled::builder::Builder;
use tabled::settings::Style;

impl Summary {
    /// Rows = metrics, columns = arms, cells "mean ± half-width" of the
    /// bootstrap interval; `*` marks the best mean where a direction is
    /// better, `†` a significant difference from the reference arm. Below
    /// the table: the significant differences with their p-values, and the
    /// Pareto front.
    pub fn to_terminal_table(&self) -> String {
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
             * best mean, † differs from the reference arm (Mann–Whitney U, Holm p < 0.05)\n{table}\n",
            self.scenario(),
            CONFIDENCE * 100.0
        );
        if let Some(reference) = self.reference().filter(|_| self.arms().len() > 1) {
            let significant: Vec<String> = self
                .arms()
                .iter()
                .flat_map(|arm| {
                    arm.metrics.iter().filter_map(move |m| {
                        let c = m.vs_reference.filter(|c| c.significant)?;
                        Some(format!(
                            "{} {} (Holm p {}, A12 {:.2})",
                            arm.arm,
                            m.def.key,
                            p_value(c.p_holm),
                            c.a12
                        ))
                    })
                })
                .collect();
            let _ = writeln!(
                out,
                "vs {reference}: {}",
                if significant.is_empty() {
                    "no significant difference".to_string()
                } else {
                    significant.join("; ")
                }
            );
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
