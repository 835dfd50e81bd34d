//! How the gate's outcome is printed.

use super::{CompareOutcome, SIGNIFICANCE};
use tabled::builder::Builder;
use tabled::settings::Style;

/// A mean with 4 significant digits, "n/a" where undefined.
pub fn number(x: Option<f64>) -> String {
    match x.filter(|v| v.is_finite()) {
        None => "n/a".to_string(),
        Some(v) if v == 0.0 || v.fract() == 0.0 => format!("{v:.0}"),
        Some(v) => {
            let decimals = (3 - v.abs().log10().floor() as i32).clamp(0, 9) as usize;
            format!("{v:.decimals$}")
        }
    }
}

/// "+12.3%", "-4.0%", "from 0" where the base is zero.
pub fn change(relative: Option<f64>, base: Option<f64>, new: Option<f64>) -> String {
    match (relative, base, new) {
        (Some(r), _, _) => format!("{:+.1}%", r * 100.0),
        (None, Some(b), Some(n)) if b == 0.0 && n != 0.0 => format!("from 0 to {}", number(Some(n))),
        _ => "n/a".to_string(),
    }
}

pub fn p_value(p: Option<f64>) -> String {
    match p {
        None => "n/a".to_string(),
        Some(p) if p < 0.001 => "<0.001".to_string(),
        Some(p) => format!("{p:.3}"),
    }
}

pub fn render(outcome: &CompareOutcome) -> String {
    let mut builder = Builder::default();
    builder.push_record([
        "arm",
        "metric",
        "unit",
        "base mean",
        "new mean",
        "change",
        "p",
        "test",
        "verdict",
    ]);
    for r in &outcome.rows {
        builder.push_record([
            r.arm.clone(),
            r.metric.clone(),
            r.unit.to_string(),
            format!("{} (n={})", number(r.base_mean), r.base_n),
            format!("{} (n={})", number(r.new_mean), r.new_n),
            change(r.relative_change, r.base_mean, r.new_mean),
            p_value(r.p_value),
            r.test.map_or("n/a", |t| t.as_str()).to_string(),
            r.verdict.label().to_string(),
        ]);
    }
    let mut table = builder.build();
    table.with(Style::rounded());
    let mut out = format!(
        "NEW against BASE: WORSE = mean worse by more than {:.1}% and two-sided Mann–Whitney p < {SIGNIFICANCE}\n\
         {table}\n",
        outcome.margin * 100.0
    );
    if !outcome.only_in_base.is_empty() {
        out.push_str(&format!(
            "arms only in BASE (not compared): {}\n",
            outcome.only_in_base.join(", ")
        ));
    }
    if !outcome.only_in_new.is_empty() {
        out.push_str(&format!(
            "arms only in NEW (not compared): {}\n",
            outcome.only_in_new.join(", ")
        ));
    }
    for note in &outcome.notes {
        out.push_str(&format!("note: {note}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_without_nan() {
        assert_eq!(number(None), "n/a");
        assert_eq!(number(Some(f64::NAN)), "n/a");
        assert_eq!(number(Some(12.0)), "12");
        assert_eq!(number(Some(0.123456)), "0.1235");
        assert_eq!(number(Some(1234.5678)), "1235");
        assert_eq!(change(Some(0.1234), Some(1.0), Some(1.1234)), "+12.3%");
        assert_eq!(change(None, Some(0.0), Some(3.0)), "from 0 to 3");
        assert_eq!(p_value(Some(0.0001)), "<0.001");
        assert_eq!(p_value(Some(0.1)), "0.100");
    }
}
