//! Distributions of usage and run time, in the field's unit.

use crate::duration::format_exact;
use crate::error::ScenarioError;
use crate::limits::MAX_LOGNORMAL_SIGMA;
use crate::raw::{RawDist, RawDistKind};
use crate::scalar::{Located, format_number};
use crate::value::{Resolver, Unit};
use schedlab_core::Dist;
use schedlab_core::Span;
use schedlab_core::resources::{format_cpu_milli, format_memory_bytes};

pub(crate) fn dist(r: &Resolver<'_>, raw: &RawDist, path: &str, unit: Unit) -> Result<Dist, ScenarioError> {
    let amount = |v: &Located, field: &str| r.amount(v, &format!("{path}.{field}"), unit);
    let (d, first) = match &raw.kind {
        RawDistKind::Const(v) => (
            Dist::Const {
                value: r.amount(v, path, unit)?,
            },
            v,
        ),
        RawDistKind::Uniform { min, max } => (
            Dist::Uniform {
                min: amount(min, "uniform.min")?,
                max: amount(max, "uniform.max")?,
            },
            min,
        ),
        RawDistKind::Normal { mean, std } => (
            Dist::Normal {
                mean: amount(mean, "normal.mean")?,
                std: amount(std, "normal.std")?,
            },
            mean,
        ),
        RawDistKind::LogNormal { median, sigma } => (
            Dist::LogNormal {
                median: amount(median, "lognormal.median")?,
                sigma: r.number_where(
                    sigma,
                    &format!("{path}.lognormal.sigma"),
                    |s| (0.0..=MAX_LOGNORMAL_SIGMA).contains(&s),
                    &format!(
                        "must be in 0..={MAX_LOGNORMAL_SIGMA} (at {MAX_LOGNORMAL_SIGMA} one draw in 30,000 is already \
                         9 million times the median; far beyond, draws overflow)"
                    ),
                )?,
            },
            median,
        ),
        RawDistKind::Exponential { mean } => (
            Dist::Exponential {
                mean: amount(mean, "exponential.mean")?,
            },
            mean,
        ),
    };
    d.validate().map_err(|e| {
        let base = match unit {
            Unit::Cpu => " (in millicores)",
            Unit::Memory => " (in bytes)",
            Unit::Seconds => " (in seconds)",
            Unit::Plain => "",
        };
        ScenarioError::invalid(r.origin, path, Some(written(&d, unit)), format!("{e}{base}"), first.loc)
    })?;
    Ok(d)
}

/// A value of `unit` written the way the format takes it.
pub(crate) fn format_in(unit: Unit, v: f64) -> String {
    match unit {
        Unit::Cpu => format_cpu_milli(v.round() as u64),
        Unit::Memory => format_memory_bytes(v.round() as u64),
        Unit::Seconds => format_exact(Span::from_secs_f64(v)),
        Unit::Plain => format_number(v),
    }
}

/// The distribution in the scenario format's own notation.
pub(crate) fn written(d: &Dist, unit: Unit) -> String {
    let f = |v: f64| format_in(unit, v);
    match *d {
        Dist::Const { value } => f(value),
        Dist::Uniform { min, max } => format!("{{uniform: {{min: {}, max: {}}}}}", f(min), f(max)),
        Dist::Normal { mean, std } => format!("{{normal: {{mean: {}, std: {}}}}}", f(mean), f(std)),
        Dist::LogNormal { median, sigma } => {
            format!(
                "{{lognormal: {{median: {}, sigma: {}}}}}",
                f(median),
                format_number(sigma)
            )
        }
        Dist::Exponential { mean } => format!("{{exponential: {{mean: {}}}}}", f(mean)),
    }
}

/// The distribution as JSON in the scenario format (a constant is a plain value).
pub(crate) fn to_json(d: &Dist, unit: Unit) -> serde_json::Value {
    use serde_json::json;
    let f = |v: f64| json!(format_in(unit, v));
    match *d {
        Dist::Const { value } => f(value),
        Dist::Uniform { min, max } => json!({"uniform": {"min": f(min), "max": f(max)}}),
        Dist::Normal { mean, std } => json!({"normal": {"mean": f(mean), "std": f(std)}}),
        Dist::LogNormal { median, sigma } => {
            json!({"lognormal": {"median": f(median), "sigma": crate::params::number_json(sigma)}})
        }
        Dist::Exponential { mean } => json!({"exponential": {"mean": f(mean)}}),
    }
}

/// A ratio distribution times `x`: usage as a multiple of a request.
pub(crate) fn scaled(d: &Dist, x: f64) -> Dist {
    match *d {
        Dist::Const { value } => Dist::Const { value: value * x },
        Dist::Uniform { min, max } => Dist::Uniform {
            min: min * x,
            max: max * x,
        },
        Dist::Normal { mean, std } => Dist::Normal {
            mean: mean * x,
            std: std * x,
        },
        Dist::LogNormal { median, sigma } => Dist::LogNormal {
            median: median * x,
            sigma,
        },
        Dist::Exponential { mean } => Dist::Exponential { mean: mean * x },
    }
}

/// The distribution's median (of the untruncated normal): the typical
/// request of a drawn one, which the template's spec shows and its limits
/// are relative to.
pub(crate) fn median(d: &Dist) -> f64 {
    match *d {
        Dist::Const { value } => value,
        Dist::Uniform { min, max } => (min + max) / 2.0,
        Dist::Normal { mean, .. } => mean,
        Dist::LogNormal { median, .. } => median,
        Dist::Exponential { mean } => mean * std::f64::consts::LN_2,
    }
}

/// The largest request a drawn request may take: draws are capped at the
/// distribution's 99.9th percentile (its max, if bounded), so a template
/// whose cap fits some node has no pod that fits none.
pub(crate) fn request_cap(d: &Dist) -> f64 {
    d.high()
}

/// Whether two draws can differ.
pub(crate) fn varies(d: &Dist) -> bool {
    match *d {
        Dist::Const { .. } => false,
        Dist::Uniform { min, max } => max > min,
        Dist::Normal { std, .. } => std > 0.0,
        Dist::LogNormal { sigma, .. } => sigma > 0.0,
        Dist::Exponential { .. } => true,
    }
}
