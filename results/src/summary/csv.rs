//! summary.csv: one row per (arm, metric).

use super::Summary;
use super::format::{csv_field, csv_number};

/// The CSV header.
pub const HEADER: &str = "arm,metric,unit,n,mean,ci_low,ci_high,std";

impl Summary {
    /// One row per (arm, metric): `arm,metric,unit,n,mean,ci_low,ci_high,std`.
    /// n counts the runs in which the metric is defined; empty fields are
    /// undefined (no run defines the metric, or std with n = 1).
    pub fn to_csv(&self) -> String {
        let mut out = String::from(HEADER);
        out.push('\n');
        for arm in self.arms() {
            for m in &arm.metrics {
                let e = m.estimate;
                let row = [
                    csv_field(&arm.arm),
                    csv_field(m.def.key),
                    csv_field(m.def.unit),
                    e.map_or(0, |e| e.n).to_string(),
                    csv_number(e.map(|e| e.mean)),
                    csv_number(e.map(|e| e.ci.low)),
                    csv_number(e.map(|e| e.ci.high)),
                    csv_number(e.and_then(|e| e.std)),
                ];
                out.push_str(&row.join(","));
                out.push('\n');
            }
        }
        out
    }
}
