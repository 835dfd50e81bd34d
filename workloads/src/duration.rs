//! Durations as scenarios write them: `90s`, `5m`, `1h30m`, `1.5h`, `250ms`,
//! `2d`, or a plain number of seconds.

use schedlab_core::Span;

/// Parses a duration string into seconds.
pub(crate) fn parse_seconds(s: &str) -> Result<f64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty duration".to_string());
    }
    if t.starts_with('-') {
        return Err("a duration must not be negative".to_string());
    }
    if let Ok(n) = t.parse::<f64>() {
        return finite_non_negative(n, s);
    }
    let mut total = 0.0;
    let mut rest = t;
    while !rest.is_empty() {
        let num_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if num_len == 0 {
            return Err(format!(
                "`{s}` is not a duration (write e.g. 90s, 5m, 1h30m or a number of seconds)"
            ));
        }
        let (num, after) = rest.split_at(num_len);
        let unit_len = after.find(|c: char| !c.is_ascii_alphabetic()).unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let n: f64 = num.parse().map_err(|_| format!("`{num}` in `{s}` is not a number"))?;
        let scale = match unit {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            "" => return Err(format!("`{s}` needs a unit after {num} (ms, s, m, h or d)")),
            other => {
                return Err(format!(
                    "unknown duration unit `{other}` in `{s}` (use ms, s, m, h or d)"
                ));
            }
        };
        total += n * scale;
        rest = after;
    }
    finite_non_negative(total, s)
}

fn finite_non_negative(n: f64, s: &str) -> Result<f64, String> {
    if !n.is_finite() {
        Err(format!("`{s}` is not a finite duration"))
    } else if n < 0.0 {
        Err("a duration must not be negative".to_string())
    } else {
        Ok(n)
    }
}

/// The exact form used in resolved scenarios: whole seconds, else milliseconds.
pub(crate) fn format_exact(span: Span) -> String {
    let ms = span.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

/// A readable form for messages: `1h5m`, `90ms`, `0s`.
pub(crate) fn format_human(span: Span) -> String {
    let ms = span.as_millis();
    if ms == 0 {
        return "0s".to_string();
    }
    let (h, rem) = (ms / 3_600_000, ms % 3_600_000);
    let (m, rem) = (rem / 60_000, rem % 60_000);
    let (s, ms) = (rem / 1000, rem % 1000);
    let mut out = String::new();
    for (n, unit) in [(h, "h"), (m, "m"), (s, "s"), (ms, "ms")] {
        if n > 0 {
            out.push_str(&format!("{n}{unit}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_and_compounds() {
        assert_eq!(parse_seconds("90s").unwrap(), 90.0);
        assert_eq!(parse_seconds("5m").unwrap(), 300.0);
        assert_eq!(parse_seconds("1h30m").unwrap(), 5400.0);
        assert_eq!(parse_seconds("1.5h").unwrap(), 5400.0);
        assert_eq!(parse_seconds("250ms").unwrap(), 0.25);
        assert_eq!(parse_seconds("2d").unwrap(), 172_800.0);
        assert_eq!(parse_seconds("42").unwrap(), 42.0);
    }

    #[test]
    fn rejects_nonsense() {
        for bad in ["", "-5m", "5x", "m5", "1h30", "nan", "inf", "5 m", "1..5s"] {
            assert!(parse_seconds(bad).is_err(), "{bad:?} parsed");
        }
        assert!(parse_seconds("-3").unwrap_err().contains("negative"));
        assert!(parse_seconds("-5m").unwrap_err().contains("negative"));
    }

    #[test]
    fn formats() {
        assert_eq!(format_exact(Span(90_000)), "90s");
        assert_eq!(format_exact(Span(1500)), "1500ms");
        assert_eq!(format_human(Span(3_900_000)), "1h5m");
        assert_eq!(format_human(Span(90)), "90ms");
        assert_eq!(format_human(Span::ZERO), "0s");
        assert_eq!(parse_seconds(&format_exact(Span(1500))).unwrap(), 1.5);
    }
}
