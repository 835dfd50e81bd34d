//! Turning a written value into what a field needs: substituting params,
//! evaluating `${...}`, and checking type and range, with an error that names
//! the field, the value and what is wrong.

use crate::duration::parse_seconds;
use crate::error::ScenarioError;
use crate::expr::{self, Env, Piece};
use crate::limits::{MAX_DURATION_SECS, MAX_TEXT_BYTES};
use crate::params::{ParamValue, Params};
use crate::scalar::{Located, Scalar, format_number};
use schedlab_core::Span;
use schedlab_core::resources::{parse_cpu_milli, parse_memory_bytes};

/// What a number with a unit, or a param holding a string, means in an
/// expression: the field's own unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// a plain number: units are not allowed
    Plain,
    /// a duration, in seconds
    Seconds,
    /// cpu, in cores
    Cpu,
    /// memory, in bytes
    Memory,
}

impl Unit {
    fn expected(self) -> &'static str {
        match self {
            Unit::Plain => "expected a number",
            Unit::Seconds => "expected a duration (e.g. 90s, 5m, 1h30m, or a number of seconds)",
            Unit::Cpu => "expected a cpu quantity (e.g. 250m, or a number of cores)",
            Unit::Memory => "expected a memory quantity (e.g. 512Mi, 2Gi, or a number of bytes)",
        }
    }

    /// A string in this unit, in the unit's base (seconds, millicores, bytes).
    fn parse_base(self, s: &str) -> Result<f64, String> {
        match self {
            Unit::Plain => s.trim().parse::<f64>().map_err(|_| self.expected().to_string()),
            Unit::Seconds => parse_seconds(s),
            Unit::Cpu => parse_cpu_milli(s)
                .map(|m| m as f64)
                .map_err(|e| format!("not a cpu quantity: {}", e.reason)),
            Unit::Memory => parse_memory_bytes(s)
                .map(|b| b as f64)
                .map_err(|e| format!("not a memory quantity: {}", e.reason)),
        }
    }

    /// A plain number in this unit, in the unit's base.
    fn number_base(self, n: f64) -> f64 {
        match self {
            Unit::Cpu => n * 1000.0,
            _ => n,
        }
    }
}

/// A value after substitution.
#[derive(Debug, Clone, PartialEq)]
enum Got {
    /// as written, or after params were put in as text
    Literal(Scalar),
    /// the result of arithmetic, in the unit's expression meaning (seconds, cores, bytes)
    Computed(f64),
}

struct Evaluated {
    got: Got,
    /// the value as written, with what it came to when it was an expression
    shown: String,
}

struct FieldEnv<'a> {
    params: &'a Params,
    unit: Unit,
}

impl FieldEnv<'_> {
    /// A base-unit value back in the expression's unit (millicores to cores).
    fn in_expression_unit(&self, base: f64) -> f64 {
        match self.unit {
            Unit::Cpu => base / 1000.0,
            _ => base,
        }
    }
}

impl Env for FieldEnv<'_> {
    fn param(&self, name: &str) -> Result<f64, String> {
        match self.params.get(name) {
            Some(ParamValue::Number(n)) => Ok(*n),
            Some(ParamValue::Text(s)) => {
                if self.unit == Unit::Plain {
                    return Err(format!(
                        "param `{name}` is the string {s:?}, which is not a number; units only work in duration, cpu and memory fields"
                    ));
                }
                self.unit
                    .parse_base(s)
                    .map(|b| self.in_expression_unit(b))
                    .map_err(|e| format!("param `{name}` = {s}: {e}"))
            }
            None => Err(format!("unknown param `{name}` (params: {})", self.params.known())),
        }
    }

    fn quantity(&self, text: &str) -> Result<f64, String> {
        if self.unit == Unit::Plain {
            return Err(format!(
                "`{text}` has a unit, which only duration, cpu and memory fields allow"
            ));
        }
        self.unit
            .parse_base(text)
            .map(|b| self.in_expression_unit(b))
            .map_err(|e| format!("`{text}`: {e}"))
    }
}

/// Resolves written values against the params, reporting errors for one origin.
pub(crate) struct Resolver<'a> {
    pub origin: &'a str,
    pub params: &'a Params,
}

impl Resolver<'_> {
    pub(crate) fn error(&self, path: &str, v: &Located, shown: String, reason: impl Into<String>) -> ScenarioError {
        ScenarioError::invalid(self.origin, path, Some(shown), reason, v.loc)
    }

    fn evaluate(&self, v: &Located, path: &str, unit: Unit) -> Result<Evaluated, ScenarioError> {
        let Scalar::Str(s) = &v.value else {
            return Ok(Evaluated {
                got: Got::Literal(v.value.clone()),
                shown: v.value.shown(),
            });
        };
        let fail = |reason: String| self.error(path, v, s.clone(), reason);
        let Some(pieces) = expr::split_template(s).map_err(fail)? else {
            return Ok(Evaluated {
                got: Got::Literal(v.value.clone()),
                shown: s.clone(),
            });
        };
        if let [Piece::Expr(e)] = pieces.as_slice() {
            if let Some(p) = expr::as_single_param(e).and_then(|name| self.params.get(name)) {
                return Ok(Evaluated {
                    got: Got::Literal(p.as_scalar()),
                    shown: format!("{s} (= {})", p.shown()),
                });
            }
            let parsed = expr::parse(e).map_err(fail)?;
            let n = expr::eval(
                &parsed,
                &FieldEnv {
                    params: self.params,
                    unit,
                },
            )
            .map_err(fail)?;
            return Ok(Evaluated {
                got: Got::Computed(n),
                shown: format!("{s} (= {})", format_number(n)),
            });
        }
        // the text grows piece by piece, and stops at the cap: a few bytes of
        // `${big}` repeated could otherwise ask for gigabytes before any check
        let mut out = String::new();
        for piece in &pieces {
            let computed;
            let add: &str = match piece {
                Piece::Text(t) => t,
                Piece::Expr(e) => match expr::as_single_param(e).and_then(|name| self.params.get(name)) {
                    Some(ParamValue::Text(t)) => t,
                    Some(p) => {
                        computed = p.shown();
                        &computed
                    }
                    None => {
                        let parsed = expr::parse(e).map_err(fail)?;
                        let env = FieldEnv {
                            params: self.params,
                            unit: Unit::Plain,
                        };
                        computed = format_number(expr::eval(&parsed, &env).map_err(fail)?);
                        &computed
                    }
                },
            };
            if out.len() + add.len() > MAX_TEXT_BYTES {
                return Err(fail(format!(
                    "the text after `${{...}}` substitution is longer than {MAX_TEXT_BYTES} bytes; a text is capped at {} KiB",
                    MAX_TEXT_BYTES >> 10
                )));
            }
            out.push_str(add);
        }
        Ok(Evaluated {
            shown: format!("{s} (= {out})"),
            got: Got::Literal(Scalar::Str(out)),
        })
    }

    /// A non-negative integer; an expression's result is rounded to the nearest one.
    pub(crate) fn count(&self, v: &Located, path: &str) -> Result<u64, ScenarioError> {
        const EXPECTED: &str = "expected a non-negative integer";
        let ev = self.evaluate(v, path, Unit::Plain)?;
        let n = match &ev.got {
            Got::Literal(Scalar::Int(i)) => *i as f64,
            Got::Literal(Scalar::Float(f)) => *f,
            Got::Literal(Scalar::Str(s)) => s.trim().parse::<f64>().unwrap_or(f64::NAN),
            Got::Literal(_) => f64::NAN,
            Got::Computed(n) => n.round(),
        };
        if !n.is_finite() || n.fract() != 0.0 || n < 0.0 {
            return Err(self.error(path, v, ev.shown, EXPECTED));
        }
        if n > u32::MAX as f64 {
            return Err(self.error(path, v, ev.shown, "too large"));
        }
        Ok(n as u64)
    }

    /// A finite number in `unit`'s base (seconds, millicores, bytes); negative
    /// only for [`Unit::Plain`]. Cpu and memory are rounded to whole millicores
    /// and bytes, as Kubernetes does, and seconds to whole milliseconds.
    pub(crate) fn amount(&self, v: &Located, path: &str, unit: Unit) -> Result<f64, ScenarioError> {
        let ev = self.evaluate(v, path, unit)?;
        let base = match &ev.got {
            Got::Computed(n) => Ok(unit.number_base(*n)),
            Got::Literal(Scalar::Int(i)) => Ok(unit.number_base(*i as f64)),
            Got::Literal(Scalar::Float(f)) => Ok(unit.number_base(*f)),
            Got::Literal(Scalar::Str(s)) => unit.parse_base(s),
            Got::Literal(_) => Err(unit.expected().to_string()),
        };
        let base = base.map_err(|reason| self.error(path, v, ev.shown.clone(), reason))?;
        if !base.is_finite() {
            return Err(self.error(path, v, ev.shown, "not a finite number"));
        }
        if unit != Unit::Plain && base < 0.0 {
            return Err(self.error(path, v, ev.shown, "must not be negative"));
        }
        let too_large = match unit {
            Unit::Plain => false,
            Unit::Seconds => base > MAX_DURATION_SECS,
            Unit::Cpu | Unit::Memory => base > 1e15,
        };
        if too_large {
            let reason = if unit == Unit::Seconds {
                "too long: durations are capped at 366 days"
            } else {
                "too large"
            };
            return Err(self.error(path, v, ev.shown, reason));
        }
        Ok(match unit {
            Unit::Cpu | Unit::Memory => base.round(),
            // scenario time counts whole milliseconds
            Unit::Seconds => (base * 1000.0).round() / 1000.0,
            Unit::Plain => base,
        })
    }

    pub(crate) fn number(&self, v: &Located, path: &str) -> Result<f64, ScenarioError> {
        self.amount(v, path, Unit::Plain)
    }

    /// A number checked against a condition, e.g. `x > 0.0`.
    pub(crate) fn number_where(
        &self,
        v: &Located,
        path: &str,
        ok: impl Fn(f64) -> bool,
        reason: &str,
    ) -> Result<f64, ScenarioError> {
        let n = self.number(v, path)?;
        if ok(n) {
            Ok(n)
        } else {
            Err(self.error(path, v, self.shown(v, path), reason))
        }
    }

    pub(crate) fn duration(&self, v: &Located, path: &str) -> Result<Span, ScenarioError> {
        Ok(Span::from_secs_f64(self.amount(v, path, Unit::Seconds)?))
    }

    /// A duration that must be more than zero.
    pub(crate) fn positive_duration(&self, v: &Located, path: &str) -> Result<Span, ScenarioError> {
        let d = self.duration(v, path)?;
        if d == Span::ZERO {
            return Err(self.error(path, v, self.shown(v, path), "must be longer than zero"));
        }
        Ok(d)
    }

    pub(crate) fn cpu_milli(&self, v: &Located, path: &str) -> Result<u64, ScenarioError> {
        Ok(self.amount(v, path, Unit::Cpu)? as u64)
    }

    pub(crate) fn memory_bytes(&self, v: &Located, path: &str) -> Result<u64, ScenarioError> {
        Ok(self.amount(v, path, Unit::Memory)? as u64)
    }

    pub(crate) fn text(&self, v: &Located, path: &str) -> Result<String, ScenarioError> {
        let ev = self.evaluate(v, path, Unit::Plain)?;
        match ev.got {
            // substitution can multiply a small file into a huge string,
            // copied into every node or manifest that uses it
            Got::Literal(Scalar::Str(s)) if s.len() > MAX_TEXT_BYTES => Err(self.error(
                path,
                v,
                self.shown(v, path),
                format!(
                    "the text is {} bytes long; a text is capped at {} KiB",
                    s.len(),
                    MAX_TEXT_BYTES >> 10
                ),
            )),
            Got::Literal(Scalar::Str(s)) => Ok(s),
            Got::Literal(Scalar::Null) => Err(self.error(path, v, ev.shown, "expected a string")),
            Got::Literal(other) => Ok(other.shown()),
            Got::Computed(n) => Ok(format_number(n)),
        }
    }

    pub(crate) fn boolean(&self, v: &Located, path: &str) -> Result<bool, ScenarioError> {
        let ev = self.evaluate(v, path, Unit::Plain)?;
        match &ev.got {
            Got::Literal(Scalar::Bool(b)) => Ok(*b),
            Got::Literal(Scalar::Str(s)) if s == "true" => Ok(true),
            Got::Literal(Scalar::Str(s)) if s == "false" => Ok(false),
            _ => Err(self.error(path, v, ev.shown, "expected true or false")),
        }
    }

    /// One of a fixed set of words.
    pub(crate) fn choice<T: Copy>(&self, v: &Located, path: &str, options: &[(&str, T)]) -> Result<T, ScenarioError> {
        let word = self.text(v, path)?;
        options
            .iter()
            .find(|(name, _)| *name == word)
            .map(|(_, t)| *t)
            .ok_or_else(|| {
                let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
                self.error(
                    path,
                    v,
                    self.shown(v, path),
                    format!("expected one of {}", names.join(", ")),
                )
            })
    }

    /// The value as shown in errors (with its expression's result, if any).
    pub(crate) fn shown(&self, v: &Located, path: &str) -> String {
        self.evaluate(v, path, Unit::Plain)
            .map(|e| e.shown)
            .unwrap_or_else(|_| v.value.shown())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn params() -> Params {
        let mut raw = BTreeMap::new();
        raw.insert("nodes".to_string(), Located::new(Scalar::Int(50), None));
        raw.insert("gap".to_string(), Located::new(Scalar::Str("8m".into()), None));
        raw.insert("mem".to_string(), Located::new(Scalar::Str("512Mi".into()), None));
        Params::from_defaults("t", &raw).unwrap()
    }

    fn s(text: &str) -> Located {
        Located::new(Scalar::Str(text.into()), None)
    }

    #[test]
    fn counts_accept_integers_and_round_expressions() {
        let p = params();
        let r = Resolver {
            origin: "t",
            params: &p,
        };
        assert_eq!(r.count(&Located::new(Scalar::Int(3), None), "c").unwrap(), 3);
        assert_eq!(r.count(&s("${nodes * 4}"), "c").unwrap(), 200);
        assert_eq!(r.count(&s("${nodes * 0.33}"), "c").unwrap(), 17);
        assert_eq!(r.count(&s("${nodes}"), "c").unwrap(), 50);
        let e = r
            .count(&Located::new(Scalar::Float(2.5), None), "c")
            .unwrap_err()
            .to_string();
        assert!(e.contains("c = 2.5: expected a non-negative integer"), "{e}");
        let e = r.count(&s("${-nodes}"), "c").unwrap_err().to_string();
        assert!(
            e.contains("c = ${-nodes} (= -50): expected a non-negative integer"),
            "{e}"
        );
    }

    #[test]
    fn units_follow_the_field() {
        let p = params();
        let r = Resolver {
            origin: "t",
            params: &p,
        };
        assert_eq!(r.duration(&s("${gap * 2}"), "d").unwrap(), Span::from_secs(960));
        assert_eq!(r.duration(&s("${4m + gap}"), "d").unwrap(), Span::from_secs(720));
        assert_eq!(r.duration(&s("${gap}"), "d").unwrap(), Span::from_secs(480));
        assert_eq!(
            r.duration(&Located::new(Scalar::Int(90), None), "d").unwrap(),
            Span::from_secs(90)
        );
        assert_eq!(r.cpu_milli(&s("${2 * 250m}"), "c").unwrap(), 500);
        assert_eq!(r.cpu_milli(&Located::new(Scalar::Float(1.5), None), "c").unwrap(), 1500);
        assert_eq!(r.memory_bytes(&s("${mem * 2}"), "m").unwrap(), 1 << 30);
        assert_eq!(r.memory_bytes(&s("${nodes * 4}Mi"), "m").unwrap(), 200 << 20);
        let e = r.count(&s("${gap * 2}"), "c").unwrap_err().to_string();
        assert!(e.contains("param `gap` is the string"), "{e}");
        let e = r.count(&s("${5m}"), "c").unwrap_err().to_string();
        assert!(e.contains("has a unit"), "{e}");
    }

    #[test]
    fn errors_name_unknown_params_and_division_by_zero() {
        let p = params();
        let r = Resolver {
            origin: "f.yaml",
            params: &p,
        };
        let e = r
            .count(&s("${nodez}"), "phases[0].create.count")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("phases[0].create.count = ${nodez}: unknown param `nodez`"),
            "{e}"
        );
        let e = r.count(&s("${nodes / (nodes - 50)}"), "x").unwrap_err().to_string();
        assert!(e.contains("division by zero"), "{e}");
        let e = r.duration(&s("-5m"), "d").unwrap_err().to_string();
        assert!(e.contains("negative"), "{e}");
        let e = r.duration(&s("${0 - 5}"), "d").unwrap_err().to_string();
        assert!(e.contains("must not be negative"), "{e}");
        let e = r
            .positive_duration(&Located::new(Scalar::Int(0), None), "d")
            .unwrap_err()
            .to_string();
        assert!(e.contains("longer than zero"), "{e}");
        let e = r.duration(&s("400d"), "d").unwrap_err().to_string();
        assert!(e.contains("366 days"), "{e}");
    }

    #[test]
    fn texts_choices_and_booleans() {
        let p = params();
        let r = Resolver {
            origin: "t",
            params: &p,
        };
        assert_eq!(r.text(&s("pool-${nodes}"), "t").unwrap(), "pool-50");
        assert_eq!(r.choice(&s("b"), "t", &[("a", 1), ("b", 2)]).unwrap(), 2);
        let e = r.choice(&s("z"), "t", &[("a", 1), ("b", 2)]).unwrap_err().to_string();
        assert!(e.contains("t = z: expected one of a, b"), "{e}");
        assert!(r.boolean(&Located::new(Scalar::Bool(true), None), "b").unwrap());
        assert!(r.boolean(&s("yes"), "b").is_err());
    }

    /// A substituted text stops growing at the cap, whatever field it is
    /// in: a count that spelled a huge text used to build it in full first.
    #[test]
    fn substitution_stops_at_the_text_cap() {
        let mut raw = BTreeMap::new();
        raw.insert("big".to_string(), Located::new(Scalar::Str("9".repeat(1000)), None));
        let p = Params::from_defaults("my.yaml", &raw).unwrap();
        let r = Resolver {
            origin: "my.yaml",
            params: &p,
        };
        // exactly at the cap is fine
        let at_cap = format!("{}{}", "${big}".repeat(65), "x".repeat(MAX_TEXT_BYTES - 65_000));
        assert_eq!(r.text(&s(&at_cap), "description").unwrap().len(), MAX_TEXT_BYTES);
        for field in ["description", "count"] {
            let v = s(&"${big}".repeat(100));
            let e = if field == "count" {
                r.count(&v, field).unwrap_err().to_string()
            } else {
                r.text(&v, field).unwrap_err().to_string()
            };
            assert!(e.starts_with(&format!("scenario my.yaml: {field} = ${{big}}")), "{e}");
            assert!(
                e.contains("after `${...}` substitution is longer than 65536 bytes"),
                "{e}"
            );
            assert!(e.contains("capped at 64 KiB"), "{e}");
        }
    }
}
