//! `templates`: the pods' specs and behaviour, and whether they fit anywhere.

use super::check_object_name;
use super::cluster::TAINT_EFFECTS;
use super::dist::{dist, median, request_cap, scaled, written};
use crate::error::ScenarioError;
use crate::model::{Pool, Sizing, Template, UsageSource};
use crate::raw::{RawDist, RawRequests, RawResources, RawTemplate, RawToleration};
use crate::value::{Resolver, Unit};
use schedlab_core::resources::{format_cpu_milli, format_memory_bytes};
use schedlab_core::{Behaviour, Dist, PodSpec, Resources, RestartPolicy, TaintEffect, Toleration, TolerationOperator};
use std::collections::BTreeMap;

/// What the harness replaces per arm on real backends.
pub(crate) const DEFAULT_SCHEDULER: &str = "default-scheduler";

pub(crate) const RESTART_POLICIES: &[(&str, RestartPolicy)] = &[
    ("Always", RestartPolicy::Always),
    ("OnFailure", RestartPolicy::OnFailure),
    ("Never", RestartPolicy::Never),
];

pub(crate) fn templates(
    r: &Resolver<'_>,
    raw: &BTreeMap<String, RawTemplate>,
    pools: &[Pool],
) -> Result<Vec<Template>, ScenarioError> {
    let mut out = Vec::with_capacity(raw.len());
    for (name, t) in raw {
        let path = format!("templates.{name}");
        check_object_name(name)
            .map_err(|e| ScenarioError::invalid(r.origin, path.clone(), Some(name.clone()), e, None))?;
        let template = template(r, name, t, &path)?;
        check_fits(r, &template, t, pools, &path)?;
        out.push(template);
    }
    Ok(out)
}

fn resources(r: &Resolver<'_>, raw: &RawResources, path: &str) -> Result<Resources, ScenarioError> {
    let cpu = raw
        .cpu
        .as_ref()
        .map(|v| r.cpu_milli(v, &format!("{path}.cpu")))
        .transpose()?
        .unwrap_or(0);
    let memory = raw
        .memory
        .as_ref()
        .map(|v| r.memory_bytes(v, &format!("{path}.memory")))
        .transpose()?
        .unwrap_or(0);
    Ok(Resources::new(cpu, memory))
}

/// One request: a constant, or a distribution drawn per pod slot (a
/// written `{const: V}` is a constant).
fn request(r: &Resolver<'_>, raw: &Option<RawDist>, path: &str, unit: Unit) -> Result<Option<Dist>, ScenarioError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    if let crate::raw::RawDistKind::Const(v) = &raw.kind {
        let value = match unit {
            Unit::Cpu => r.cpu_milli(v, path)?,
            _ => r.memory_bytes(v, path)?,
        };
        return Ok(Some(Dist::Const { value: value as f64 }));
    }
    dist(r, raw, path, unit).map(Some)
}

/// The requests of a template's spec (a drawn request's median) and the
/// distributions drawn per pod.
fn requests(r: &Resolver<'_>, raw: &RawRequests, path: &str) -> Result<(Resources, Sizing), ScenarioError> {
    let cpu = request(r, &raw.cpu, &format!("{path}.cpu"), Unit::Cpu)?;
    let memory = request(r, &raw.memory, &format!("{path}.memory"), Unit::Memory)?;
    let typical = |d: &Option<Dist>| d.as_ref().map_or(0, |d| median(d).round() as u64);
    let drawn = |d: Option<Dist>| d.filter(|d| !matches!(d, Dist::Const { .. }));
    let requests = Resources::new(typical(&cpu), typical(&memory));
    let sizing = Sizing {
        cpu: drawn(cpu),
        memory: drawn(memory),
        ..Sizing::default()
    };
    Ok((requests, sizing))
}

/// Where a pod's use of one resource comes from, and the template's usage
/// distribution for a pod that requests `request`.
fn usage(
    r: &Resolver<'_>,
    written_usage: &Option<RawDist>,
    ratio: &Option<RawDist>,
    path: &str,
    dim: &str,
    unit: Unit,
    request: u64,
) -> Result<(UsageSource, Dist), ScenarioError> {
    match (written_usage, ratio) {
        (Some(_), Some(ratio)) => Err(ScenarioError::invalid(
            r.origin,
            format!("{path}.usage_ratio.{dim}"),
            Some(written(
                &dist(r, ratio, &format!("{path}.usage_ratio.{dim}"), Unit::Plain)?,
                Unit::Plain,
            )),
            format!("give usage.{dim} or usage_ratio.{dim}, not both"),
            ratio.loc(),
        )),
        (Some(d), None) => Ok((UsageSource::Written, dist(r, d, &format!("{path}.usage.{dim}"), unit)?)),
        (None, Some(d)) => {
            let ratio = dist(r, d, &format!("{path}.usage_ratio.{dim}"), Unit::Plain)?;
            let usage = scaled(&ratio, request as f64);
            Ok((UsageSource::Ratio(ratio), usage))
        }
        (None, None) => Ok((UsageSource::Requests, Dist::Const { value: request as f64 })),
    }
}

fn template(r: &Resolver<'_>, name: &str, t: &RawTemplate, path: &str) -> Result<Template, ScenarioError> {
    let (requests, mut sizing) = requests(r, &t.requests, &format!("{path}.requests"))?;
    let limits = match &t.limits {
        Some(raw) => {
            let lp = format!("{path}.limits");
            let l = resources(r, raw, &lp)?;
            for (v, limit, request, drawn, dim, fmt) in [
                (
                    &raw.cpu,
                    l.cpu_milli,
                    requests.cpu_milli,
                    sizing.cpu.is_some(),
                    "cpu",
                    format_cpu_milli as fn(u64) -> String,
                ),
                (
                    &raw.memory,
                    l.memory_bytes,
                    requests.memory_bytes,
                    sizing.memory.is_some(),
                    "memory",
                    format_memory_bytes,
                ),
            ] {
                if let Some(v) = v {
                    let p = format!("{lp}.{dim}");
                    if limit == 0 {
                        // the model reads a zero limit as none: an explicit 0
                        // would silently mean the opposite of what it says
                        return Err(r.error(
                            &p,
                            v,
                            r.shown(v, &p),
                            "a limit must be above 0; leave the field out for no limit".to_string(),
                        ));
                    }
                    if limit < request && drawn {
                        return Err(r.error(
                            &p,
                            v,
                            r.shown(v, &p),
                            format!(
                                "below the request's median ({}); with a request drawn per pod, each pod's limit keeps \
                                 the written limit's ratio to the median, so it must be at least the median",
                                fmt(request)
                            ),
                        ));
                    }
                    if limit < request {
                        return Err(r.error(&p, v, r.shown(v, &p), format!("below the request ({})", fmt(request))));
                    }
                }
            }
            (!l.is_zero()).then_some(l)
        }
        None => None,
    };
    let priority = match &t.priority {
        Some(v) => {
            let p = format!("{path}.priority");
            r.number_where(
                v,
                &p,
                |x| x.fract() == 0.0 && x >= i32::MIN as f64 && x <= i32::MAX as f64,
                "expected a whole number that fits in 32 bits",
            )? as i32
        }
        None => 0,
    };
    let restart_policy = match &t.restart_policy {
        Some(v) => r.choice(v, &format!("{path}.restart_policy"), RESTART_POLICIES)?,
        None => RestartPolicy::Always,
    };
    let tolerations = t
        .tolerations
        .iter()
        .enumerate()
        .map(|(i, tol)| toleration(r, tol, &format!("{path}.tolerations[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let (cpu_source, cpu_usage) = usage(
        r,
        &t.usage.cpu,
        &t.usage_ratio.cpu,
        path,
        "cpu",
        Unit::Cpu,
        requests.cpu_milli,
    )?;
    let (memory_source, memory_usage) = usage(
        r,
        &t.usage.memory,
        &t.usage_ratio.memory,
        path,
        "memory",
        Unit::Memory,
        requests.memory_bytes,
    )?;
    sizing.cpu_usage = cpu_source;
    sizing.memory_usage = memory_source;
    let run_seconds = t
        .run
        .as_ref()
        .map(|d| dist(r, d, &format!("{path}.run"), Unit::Seconds))
        .transpose()?;
    let memory_growth_per_hour = t
        .memory_growth_per_hour
        .as_ref()
        .map(|d| dist(r, d, &format!("{path}.memory_growth_per_hour"), Unit::Memory))
        .transpose()?;
    let crash_rate_per_hour = match &t.crash_rate_per_hour {
        Some(v) => r.number_where(
            v,
            &format!("{path}.crash_rate_per_hour"),
            |x| x >= 0.0,
            "a rate must not be negative",
        )?,
        None => 0.0,
    };
    let crash_rate_growth_per_hour = match &t.crash_rate_growth_per_hour {
        Some(v) => r.number_where(
            v,
            &format!("{path}.crash_rate_growth_per_hour"),
            |x| x >= 0.0,
            "the hazard may grow with age or stay flat, not shrink",
        )?,
        None => 0.0,
    };
    let unstable = t
        .unstable
        .as_ref()
        .map(|v| r.boolean(v, &format!("{path}.unstable")))
        .transpose()?
        .unwrap_or(false);
    let recreate = t
        .recreate
        .as_ref()
        .map(|v| r.boolean(v, &format!("{path}.recreate")))
        .transpose()?
        .unwrap_or(true);
    Ok(Template {
        name: name.to_string(),
        spec: PodSpec {
            requests,
            limits,
            priority,
            scheduler_name: DEFAULT_SCHEDULER.to_string(),
            restart_policy,
            tolerations,
            behaviour: Behaviour {
                cpu_usage,
                memory_usage,
                run_seconds,
                memory_growth_per_hour,
                crash_rate_per_hour,
                crash_rate_growth_per_hour,
                unstable,
            },
        },
        recreate,
        from_trace: false,
        sizing,
    })
}

fn toleration(r: &Resolver<'_>, t: &RawToleration, path: &str) -> Result<Toleration, ScenarioError> {
    let key = t
        .key
        .as_ref()
        .map(|v| r.text(v, &format!("{path}.key")))
        .transpose()?
        .unwrap_or_default();
    let operator = match &t.operator {
        Some(v) => r.choice(
            v,
            &format!("{path}.operator"),
            &[
                ("Equal", TolerationOperator::Equal),
                ("Exists", TolerationOperator::Exists),
            ],
        )?,
        None => TolerationOperator::Equal,
    };
    let value = t
        .value
        .as_ref()
        .map(|v| r.text(v, &format!("{path}.value")))
        .transpose()?;
    if operator == TolerationOperator::Exists
        && let (Some(raw), Some(v)) = (&t.value, &value)
    {
        let p = format!("{path}.value");
        return Err(r.error(&p, raw, v.clone(), "must be empty when operator is Exists"));
    }
    if key.is_empty() && operator == TolerationOperator::Equal {
        const REASON: &str = "a toleration without a key must use operator Exists";
        return Err(match &t.operator {
            Some(op) => r.error(&format!("{path}.operator"), op, "Equal".into(), REASON),
            None => ScenarioError::invalid(r.origin, format!("{path}.key"), Some(String::new()), REASON, None),
        });
    }
    let effect = t
        .effect
        .as_ref()
        .map(|v| r.choice(v, &format!("{path}.effect"), TAINT_EFFECTS))
        .transpose()?;
    let toleration_seconds = t
        .toleration_seconds
        .as_ref()
        .map(|v| r.count(v, &format!("{path}.toleration_seconds")))
        .transpose()?;
    Ok(Toleration {
        key,
        operator,
        value,
        effect,
        toleration_seconds,
    })
}

/// Why the template's pods cannot go on the pool's nodes, if they cannot.
fn misfit(spec: &PodSpec, pool: &Pool) -> Option<String> {
    let name = &pool.pool.name;
    if pool.count == 0 {
        return None;
    }
    if !spec.requests.fits_in(&pool.allocatable) {
        return Some(format!(
            "pool {name} allocates only cpu {} and memory {} per node",
            format_cpu_milli(pool.allocatable.cpu_milli),
            format_memory_bytes(pool.allocatable.memory_bytes)
        ));
    }
    let blocking = pool.taints.iter().find(|taint| {
        matches!(taint.effect, TaintEffect::NoSchedule | TaintEffect::NoExecute)
            && !spec.tolerations.iter().any(|t| t.tolerates(taint))
    })?;
    Some(format!(
        "pool {name} has the taint {}{}:{:?}, which it does not tolerate",
        blocking.key,
        blocking.value.as_deref().map(|v| format!("={v}")).unwrap_or_default(),
        blocking.effect
    ))
}

fn check_fits(
    r: &Resolver<'_>,
    template: &Template,
    raw: &RawTemplate,
    pools: &[Pool],
    path: &str,
) -> Result<(), ScenarioError> {
    // a drawn request is checked at its cap, the largest any pod asks for
    let sizing = &template.sizing;
    let capped = |d: &Option<Dist>, constant: u64| d.as_ref().map_or(constant, |d| request_cap(d).round() as u64);
    let largest = PodSpec {
        requests: Resources::new(
            capped(&sizing.cpu, template.spec.requests.cpu_milli),
            capped(&sizing.memory, template.spec.requests.memory_bytes),
        ),
        ..template.spec.clone()
    };
    let live: Vec<&Pool> = pools.iter().filter(|p| p.count > 0).collect();
    let reasons: Vec<String> = live.iter().filter_map(|p| misfit(&largest, p)).collect();
    if reasons.len() < live.len() {
        return Ok(());
    }
    let loc = raw
        .requests
        .cpu
        .as_ref()
        .or(raw.requests.memory.as_ref())
        .and_then(RawDist::loc);
    let shown = |d: &Option<Dist>, constant: String, unit: Unit| d.as_ref().map_or(constant, |d| written(d, unit));
    let requests = template.spec.requests;
    let what = if sizing.draws() {
        format!(
            "the largest pod it may draw (cpu {}, memory {}, each request capped at its distribution's 99.9th percentile) fits on no node",
            format_cpu_milli(largest.requests.cpu_milli),
            format_memory_bytes(largest.requests.memory_bytes)
        )
    } else {
        "the pod fits on no node".to_string()
    };
    Err(ScenarioError::invalid(
        r.origin,
        format!("{path}.requests"),
        Some(format!(
            "{{cpu: {}, memory: {}}}",
            shown(&sizing.cpu, format_cpu_milli(requests.cpu_milli), Unit::Cpu),
            shown(&sizing.memory, format_memory_bytes(requests.memory_bytes), Unit::Memory)
        )),
        format!("{what}: {}", reasons.join("; ")),
        loc,
    ))
}
