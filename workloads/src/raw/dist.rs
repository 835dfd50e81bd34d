//! A distribution as written: a plain value (a constant) or a mapping with one
//! key naming the kind, e.g. `{normal: {mean: 200m, std: 50m}}`.

use crate::scalar::{Located, Scalar, ScalarVisitor};
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum RawDistKind {
    Const(Located),
    Uniform { min: Located, max: Located },
    Normal { mean: Located, std: Located },
    LogNormal { median: Located, sigma: Located },
    Exponential { mean: Located },
}

/// A distribution as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RawDist {
    pub kind: RawDistKind,
}

impl RawDist {
    /// Where its first value was written.
    pub(crate) fn loc(&self) -> Option<crate::error::Loc> {
        match &self.kind {
            RawDistKind::Const(v)
            | RawDistKind::Uniform { min: v, .. }
            | RawDistKind::Normal { mean: v, .. }
            | RawDistKind::LogNormal { median: v, .. }
            | RawDistKind::Exponential { mean: v } => v.loc,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UniformArgs {
    min: Located,
    max: Located,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NormalArgs {
    mean: Located,
    std: Located,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LogNormalArgs {
    median: Located,
    sigma: Located,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExponentialArgs {
    mean: Located,
}

pub(crate) const DIST_KINDS: &[&str] = &["const", "uniform", "normal", "lognormal", "exponential"];

struct DistVisitor;

impl DistVisitor {
    fn constant<E: de::Error>(s: Result<Scalar, E>) -> Result<RawDist, E> {
        Ok(RawDist {
            kind: RawDistKind::Const(Located::new(s?, None)),
        })
    }
}

impl<'de> Visitor<'de> for DistVisitor {
    type Value = RawDist;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a distribution: a plain value, or one of {const: V}, {uniform: {min, max}}, {normal: {mean, std}}, {lognormal: {median, sigma}}, {exponential: {mean}}",
        )
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawDist, E> {
        Self::constant(ScalarVisitor.visit_bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawDist, E> {
        Self::constant(ScalarVisitor.visit_i64(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawDist, E> {
        Self::constant(ScalarVisitor.visit_u64(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawDist, E> {
        Self::constant(ScalarVisitor.visit_f64(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawDist, E> {
        Self::constant(ScalarVisitor.visit_str(v))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<RawDist, E> {
        Self::constant(ScalarVisitor.visit_string(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawDist, A::Error> {
        let Some(key) = map.next_key::<String>()? else {
            return Err(de::Error::custom(
                "an empty mapping is not a distribution; use one of const, uniform, normal, lognormal, exponential",
            ));
        };
        let kind = match key.as_str() {
            "const" => RawDistKind::Const(map.next_value()?),
            "uniform" => {
                let a: UniformArgs = map.next_value()?;
                RawDistKind::Uniform { min: a.min, max: a.max }
            }
            "normal" => {
                let a: NormalArgs = map.next_value()?;
                RawDistKind::Normal {
                    mean: a.mean,
                    std: a.std,
                }
            }
            "lognormal" => {
                let a: LogNormalArgs = map.next_value()?;
                RawDistKind::LogNormal {
                    median: a.median,
                    sigma: a.sigma,
                }
            }
            "exponential" => {
                let a: ExponentialArgs = map.next_value()?;
                RawDistKind::Exponential { mean: a.mean }
            }
            other => return Err(de::Error::unknown_variant(other, DIST_KINDS)),
        };
        if let Some(extra) = map.next_key::<String>()? {
            return Err(de::Error::custom(format!(
                "a distribution has exactly one kind, found both `{key}` and `{extra}`"
            )));
        }
        Ok(RawDist { kind })
    }
}

/// A distribution without the place it was written.
struct Unplaced(RawDist);

impl<'de> Deserialize<'de> for Unplaced {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DistVisitor).map(Unplaced)
    }
}

impl<'de> Deserialize<'de> for RawDist {
    /// A plain value gets the place it was written, as every leaf does, so
    /// that errors about a constant (a request) point at its line.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<Unplaced>::deserialize(d)?;
        let at = spanned.referenced;
        let mut dist = spanned.value.0;
        if let RawDistKind::Const(v) = &mut dist.kind
            && v.loc.is_none()
        {
            v.loc = crate::error::Loc::known(at.line(), at.column());
        }
        Ok(dist)
    }
}
