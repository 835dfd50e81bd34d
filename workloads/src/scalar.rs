//! A single YAML value as written (before params are substituted), with where
//! it was written. Every leaf of the scenario format is one of these, so that
//! any value may be a `${expression}` and every error can point at its line.

use crate::error::Loc;
use serde::de::{self, Deserialize, Deserializer, Visitor};
use std::fmt;

/// What the type checker expects of a leaf; also used to recognise the
/// error serde reports for a leaf (see `syntax::field_path`).
pub(crate) const EXPECTING_SCALAR: &str = "a single value (a number, a string or \"${expression}\")";

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Scalar {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    Null,
}

impl Scalar {
    /// The value as a person would have written it.
    pub(crate) fn shown(&self) -> String {
        match self {
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => format_number(*f),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Str(s) => s.clone(),
            Scalar::Null => "null".to_string(),
        }
    }
}

/// Formats a number without a trailing ".0" when it is whole.
pub(crate) fn format_number(f: f64) -> String {
    if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        format!("{f}")
    }
}

/// A scalar and where it was written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Located {
    pub value: Scalar,
    pub loc: Option<Loc>,
}

impl Located {
    pub(crate) fn new(value: Scalar, loc: Option<Loc>) -> Located {
        Located { value, loc }
    }
}

impl<'de> Deserialize<'de> for Located {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<Scalar>::deserialize(d)?;
        let at = spanned.referenced;
        Ok(Located {
            value: spanned.value,
            loc: Loc::known(at.line(), at.column()),
        })
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

/// Turns any YAML scalar into a [`Scalar`]; sequences and mappings are type errors.
pub(crate) struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(EXPECTING_SCALAR)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Scalar, E> {
        Ok(Scalar::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Scalar, E> {
        Ok(Scalar::Int(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Scalar, E> {
        Ok(i64::try_from(v).map_or(Scalar::Float(v as f64), Scalar::Int))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Scalar, E> {
        Ok(i64::try_from(v).map_or(Scalar::Float(v as f64), Scalar::Int))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Scalar, E> {
        Ok(i64::try_from(v).map_or(Scalar::Float(v as f64), Scalar::Int))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Scalar, E> {
        Ok(Scalar::Float(v))
    }
    fn visit_char<E: de::Error>(self, v: char) -> Result<Scalar, E> {
        Ok(Scalar::Str(v.to_string()))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Scalar, E> {
        Ok(Scalar::Str(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Scalar, E> {
        Ok(Scalar::Str(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Scalar, E> {
        Ok(Scalar::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
        d.deserialize_any(ScalarVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_print_without_a_fraction() {
        assert_eq!(format_number(3.0), "3");
        assert_eq!(format_number(-2.0), "-2");
        assert_eq!(format_number(0.25), "0.25");
        assert_eq!(Scalar::Float(1.5).shown(), "1.5");
        assert_eq!(Scalar::Null.shown(), "null");
    }
}
