//! How numbers are printed in tables: never NaN, "n/a" where undefined, and
//! enough digits that a half-width never rounds to a misleading zero.

use super::MetricStats;
use crate::stats::Estimate;

/// Printed for every undefined value.
pub const NA: &str = "n/a";

const MAX_DECIMALS: i32 = 9;

/// Decimals that show `x` with `significant` significant digits.
pub(super) fn decimals_for(x: f64, significant: i32) -> i32 {
    if x == 0.0 || !x.is_finite() {
        return 0;
    }
    (significant - 1 - x.abs().log10().floor() as i32).clamp(0, MAX_DECIMALS)
}

/// `x` with `decimals` decimals; "-0.00" becomes "0.00".
pub fn fixed(x: f64, decimals: i32) -> String {
    if !x.is_finite() {
        return NA.to_string();
    }
    let s = format!("{:.*}", decimals.max(0) as usize, x);
    match s.strip_prefix('-') {
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => s,
    }
}

/// A mean and the half-width of its interval: the mean to 4 significant
/// digits, and at least 2 of the half-width.
pub fn mean_pm(mean: f64, half_width: f64) -> String {
    // counts averaged over identical runs stay whole: "2 ± 0", not "2.000 ± 0.000"
    let d = if mean.fract() == 0.0 && half_width.fract() == 0.0 {
        0
    } else {
        decimals_for(mean, 4).max(decimals_for(half_width, 2))
    };
    format!("{} ± {}", fixed(mean, d), fixed(half_width, d))
}

/// One table cell of a metric over an arm's runs: "mean ± half-width",
/// "value (n=1)" for a single run, "(n=k)" appended where runs were left out
/// as undefined, "n/a" where no run defines it.
pub fn metric_cell(m: &MetricStats) -> String {
    let Some(e) = m.estimate else {
        return NA.to_string();
    };
    if e.n == 1 {
        let d = if e.mean.fract() == 0.0 {
            0
        } else {
            decimals_for(e.mean, 4)
        };
        return format!("{} (n=1)", fixed(e.mean, d));
    }
    let cell = mean_pm(e.mean, e.ci.half_width());
    if m.undefined > 0 {
        format!("{cell} (n={})", e.n)
    } else {
        cell
    }
}

/// A correlation with its interval: "0.123 [-0.050, 0.310]", a dagger where
/// some resamples were undefined and left out.
pub fn correlation_cell(e: Option<&Estimate>) -> String {
    let Some(e) = e else {
        return NA.to_string();
    };
    let ci = match e.ci {
        Some(ci) => format!(" [{}, {}]", fixed(ci.low, 3), fixed(ci.high, 3)),
        None => format!(" [{NA}]"),
    };
    let dagger = if e.undefined_resamples > 0 { "†" } else { "" };
    format!("{}{ci}{dagger}", fixed(e.value, 3))
}

/// A CSV field, quoted as RFC 4180 asks where needed.
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A number for CSV: shortest exact representation, empty where undefined.
pub fn csv_number(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite()).map(|v| v.to_string()).unwrap_or_default()
}

/// A p-value: 3 significant digits, "< 0.0001" below that, never in
/// scientific notation.
pub fn p_value(p: f64) -> String {
    if !p.is_finite() {
        return NA.to_string();
    }
    if p < 1e-4 {
        return "< 0.0001".to_string();
    }
    fixed(p, decimals_for(p, 3).max(2))
}

/// A statistic in [−1, 1] or [0, 1] (effect sizes): 2 decimals.
pub fn effect(x: f64) -> String {
    fixed(x, 2)
}

/// A median: as a table's means, to 4 significant digits, whole numbers
/// without decimals.
pub fn plain(x: f64) -> String {
    let d = if x.fract() == 0.0 { 0 } else { decimals_for(x, 4) };
    fixed(x, d)
}

/// Text for LaTeX outside math mode: the ten special characters escaped.
pub fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            '_' | '%' | '&' | '#' | '$' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

/// Text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Markdown-ish text with `code` spans as escaped HTML with <code> elements.
pub fn html_code_spans(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{}</code>", esc(part))
            } else {
                esc(part)
            }
        })
        .collect()
}

/// Text for a Markdown table cell.
pub fn md_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace(['\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_follow_magnitude() {
        assert_eq!(mean_pm(0.512345, 0.0123), "0.5123 ± 0.0123");
        assert_eq!(mean_pm(1000.0, 0.5), "1000.00 ± 0.50");
        assert_eq!(mean_pm(1234.7, 40.0), "1235 ± 40");
        assert_eq!(mean_pm(12.0, 0.0), "12 ± 0");
        assert_eq!(mean_pm(12.0, 0.5), "12.00 ± 0.50");
        assert_eq!(mean_pm(0.0, 0.0), "0 ± 0");
        assert_eq!(fixed(-0.0001, 2), "0.00");
        assert_eq!(fixed(-1.5, 1), "-1.5");
        assert_eq!(fixed(f64::NAN, 2), NA);
        assert_eq!(p_value(0.1), "0.100");
        assert_eq!(p_value(1.0), "1.00");
        assert_eq!(p_value(0.0079365), "0.00794");
        assert_eq!(p_value(1e-7), "< 0.0001");
        assert_eq!(plain(3.0), "3");
        assert_eq!(plain(0.123456), "0.1235");
    }

    #[test]
    fn escapes() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(md_escape("a|b"), "a\\|b");
        assert_eq!(
            latex_escape(r"a_b 5% R&D #1 $x {y} ~z ^w \v"),
            r"a\_b 5\% R\&D \#1 \$x \{y\} \textasciitilde{}z \textasciicircum{}w \textbackslash{}v"
        );
        assert_eq!(csv_number(Some(f64::NAN)), "");
        assert_eq!(csv_number(Some(0.25)), "0.25");
    }
}
