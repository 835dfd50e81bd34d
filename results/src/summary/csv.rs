//! summary.csv: one row per (arm, metric).

use super::Summary;
use super::format::{csv_field, csv_number};

/// The CSV header. The first eight columns are those of earlier versions.
pub const HEADER: &str = "arm,metric,unit,n,mean,ci_low,ci_high,std,median,reference,u,p_value,p_method,p_holm,\
                          cliffs_delta,a12,significant";

impl Summary {
    /// One row per (arm, metric): `arm,metric,unit,n,mean,ci_low,ci_high,std`,
    /// then the median and the comparison with the reference arm:
    /// `median,reference,u,p_value,p_method,p_holm,cliffs_delta,a12,significant`.
    /// n counts the runs in which the metric is defined; empty fields are
    /// undefined (no run defines the metric, std with n = 1, or no
    /// comparison: the reference arm itself, or a side without values).
    pub fn to_csv(&self) -> String {
        let mut out = String::from(HEADER);
        out.push('\n');
        let reference = self.reference().unwrap_or_default();
        for arm in self.arms() {
            for m in &arm.metrics {
                let e = m.estimate;
                let c = m.vs_reference;
                let row = [
                    csv_field(&arm.arm),
                    csv_field(m.def.key),
                    csv_field(m.def.unit),
                    e.map_or(0, |e| e.n).to_string(),
                    csv_number(e.map(|e| e.mean)),
                    csv_number(e.map(|e| e.ci.low)),
                    csv_number(e.map(|e| e.ci.high)),
                    csv_number(e.and_then(|e| e.std)),
                    csv_number(m.median),
                    csv_field(reference),
                    csv_number(c.map(|c| c.test.u)),
                    csv_number(c.map(|c| c.test.p)),
                    c.map(|c| c.test.method.as_str().to_string()).unwrap_or_default(),
                    csv_number(c.map(|c| c.p_holm)),
                    csv_number(c.map(|c| c.cliffs_delta)),
                    csv_number(c.map(|c| c.a12)),
                    c.map(|c| c.significant.to_string()).unwrap_or_default(),
                ];
                out.push_str(&row.join(","));
                out.push('\n');
            }
        }
        out
    }
}
