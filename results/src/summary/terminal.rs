//! The table printed at the end of a run.

use super::Summary;
use super::format::metric_cell;
use super::markdown::direction;
use crate::definitions::METRICS;
use crate::stats::CONFIDENCE;
use tabled::builder::Builder;
use tabled::settings::Style;

impl Summary {
    /// Rows = metrics, columns = arms, cells "mean ± half-width" of the
    /// bootstrap interval; `*` marks the best mean where a direction is better.
    pub fn to_terminal_table(&self) -> String {
        let mut builder = Builder::default();
        let mut header = vec!["metric".to_string(), "unit".to_string()];
        header.extend(self.arms().iter().map(|a| a.arm.clone()));
        builder.push_record(header);
        for (i, def) in METRICS.iter().enumerate() {
            let best = self.best_arms(i);
            let mut row = vec![format!("{}{}", def.key, direction(def.better)), def.unit.to_string()];
            for (arm, is_best) in self.arms().iter().zip(best) {
                let cell = arm.metrics.get(i).map_or_else(|| "n/a".to_string(), metric_cell);
                row.push(if is_best { format!("{cell} *") } else { cell });
            }
            builder.push_record(row);
        }
        let mut table = builder.build();
        table.with(Style::rounded());
        format!(
            "scenario {}: mean ± half-width of the {}% bootstrap interval over seeds; ↓/↑ lower/higher is better, \
             * best mean\n{table}\n",
            self.scenario(),
            CONFIDENCE * 100.0
        )
    }
}
