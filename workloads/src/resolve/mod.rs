//! From the scenario as written to the checked [`Model`]: params substituted,
//! every value typed and range-checked, names cross-referenced.

mod claims;
mod cluster;
mod dist;
mod phases;
mod replay;
mod templates;

pub(crate) use cluster::ZONE_LABEL;
pub(crate) use dist::{request_cap, scaled, to_json as dist_json};

use crate::error::ScenarioError;
use crate::model::Model;
use crate::params::Params;
use crate::raw::RawScenario;
use crate::trace::Files;
use crate::value::Resolver;
use schedlab_core::Span;

pub(crate) fn resolve(
    origin: &str,
    files: &Files,
    raw: &RawScenario,
    overrides: &[String],
) -> Result<(Params, Model), ScenarioError> {
    let mut params = Params::from_defaults(origin, &raw.params)?;
    params.apply_overrides(origin, overrides)?;
    let r = Resolver {
        origin,
        params: &params,
    };

    let name = r.text(&raw.name, "name")?;
    if name.trim().is_empty() {
        return Err(r.error("name", &raw.name, name, "must not be empty"));
    }
    let description = match &raw.description {
        Some(d) => r.text(d, "description")?,
        None => String::new(),
    };
    let duration = r.positive_duration(&raw.duration, "duration")?;
    let sample_interval = match &raw.sample_interval {
        Some(v) => {
            let s = r.positive_duration(v, "sample_interval")?;
            if s > duration {
                return Err(r.error(
                    "sample_interval",
                    v,
                    r.shown(v, "sample_interval"),
                    "longer than the scenario's duration",
                ));
            }
            s
        }
        None => Span::from_secs(15).min(duration),
    };

    let pools = cluster::pools(&r, &raw.cluster)?;
    let mut templates = templates::templates(&r, &raw.templates, &pools)?;
    let phases = phases::phases(&r, files, &raw.phases, &pools, &mut templates, duration)?;
    let claims = claims::claims(&r, &raw.claims, &templates, &phases)?;
    let model = Model {
        name,
        description,
        duration,
        sample_interval,
        pools,
        templates,
        phases,
        claims,
    };
    Ok((params, model))
}

/// Kubernetes object names: lowercase letters, digits and `-`, starting and
/// ending with a letter or digit (RFC 1123 labels), since pools and templates
/// name nodes and pods on real clusters.
pub(crate) fn check_object_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 50
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{name}` is not a valid name: use 1 to 50 lowercase letters, digits and '-', starting and ending with a letter or digit"
        ))
    }
}
