//! A checked scenario back in the scenario format, as JSON, with every param
//! substituted and every default filled in: what a run manifest records. It is
//! itself a valid scenario (JSON is YAML) that expands to the same timelines.

use crate::duration::format_exact;
use crate::model::{Model, Pacing, PhaseKind, Pool, Replay, Template, UsageSource};
use crate::params::{Params, number_json};
use crate::resolve::dist_json;
use crate::value::Unit;
use schedlab_core::resources::{format_cpu_milli, format_memory_bytes};
use schedlab_core::{Provisioning, Resources, TolerationOperator};
use serde_json::{Map, Value, json};

pub(crate) fn to_json(model: &Model, params: &Params) -> Value {
    // a replay's workloads are made again from its inline pods on load
    let templates: Map<String, Value> = model
        .templates
        .iter()
        .filter(|t| !t.from_trace)
        .map(|t| (t.name.clone(), template(t)))
        .collect();
    json!({
        "name": model.name,
        "description": model.description,
        "params": params.to_json(),
        "duration": format_exact(model.duration),
        "sample_interval": format_exact(model.sample_interval),
        "cluster": {"pools": model.pools.iter().map(pool).collect::<Vec<_>>()},
        "templates": templates,
        "phases": model.phases.iter().map(|p| {
            let mut m = Map::new();
            if let Some(at) = p.at {
                m.insert("at".into(), json!(format_exact(at)));
            }
            let (key, body) = phase(model, &p.kind);
            m.insert(key.into(), body);
            Value::Object(m)
        }).collect::<Vec<_>>(),
        "claims": model.claims,
    })
}

fn resources(r: Resources) -> Value {
    json!({"cpu": format_cpu_milli(r.cpu_milli), "memory": format_memory_bytes(r.memory_bytes)})
}

fn pool(p: &Pool) -> Value {
    json!({
        "name": p.pool.name,
        "count": p.count,
        "machine_type": p.pool.machine_type,
        "hourly_price": number_json(p.pool.hourly_price),
        "provisioning": match p.pool.provisioning {
            Provisioning::OnDemand => "on-demand",
            Provisioning::Spot => "spot",
        },
        "capacity": resources(p.capacity),
        "allocatable": resources(p.allocatable),
        "max_pods": p.max_pods,
        "labels": p.labels,
        "taints": p.taints.iter().map(|t| {
            let mut m = Map::new();
            m.insert("key".into(), json!(t.key));
            if let Some(v) = &t.value {
                m.insert("value".into(), json!(v));
            }
            m.insert("effect".into(), json!(format!("{:?}", t.effect)));
            Value::Object(m)
        }).collect::<Vec<_>>(),
    })
}

fn template(t: &Template) -> Value {
    let s = &t.spec;
    let b = &s.behaviour;
    let mut m = Map::new();
    let sizing = &t.sizing;
    let request = |drawn: &Option<schedlab_core::Dist>, constant: String, unit: Unit| {
        drawn.as_ref().map_or(json!(constant), |d| dist_json(d, unit))
    };
    m.insert(
        "requests".into(),
        json!({
            "cpu": request(&sizing.cpu, format_cpu_milli(s.requests.cpu_milli), Unit::Cpu),
            "memory": request(&sizing.memory, format_memory_bytes(s.requests.memory_bytes), Unit::Memory),
        }),
    );
    if let Some(l) = s.limits {
        let mut lm = Map::new();
        if l.cpu_milli > 0 {
            lm.insert("cpu".into(), json!(format_cpu_milli(l.cpu_milli)));
        }
        if l.memory_bytes > 0 {
            lm.insert("memory".into(), json!(format_memory_bytes(l.memory_bytes)));
        }
        m.insert("limits".into(), Value::Object(lm));
    }
    m.insert("priority".into(), json!(s.priority));
    m.insert("restart_policy".into(), json!(format!("{:?}", s.restart_policy)));
    let tolerations: Vec<Value> = s
        .tolerations
        .iter()
        .map(|t| {
            let mut tm = Map::new();
            if !t.key.is_empty() {
                tm.insert("key".into(), json!(t.key));
            }
            let op = match t.operator {
                TolerationOperator::Equal => "Equal",
                TolerationOperator::Exists => "Exists",
            };
            tm.insert("operator".into(), json!(op));
            if let Some(v) = &t.value {
                tm.insert("value".into(), json!(v));
            }
            if let Some(e) = t.effect {
                tm.insert("effect".into(), json!(format!("{e:?}")));
            }
            if let Some(secs) = t.toleration_seconds {
                tm.insert("toleration_seconds".into(), json!(secs));
            }
            Value::Object(tm)
        })
        .collect();
    m.insert("tolerations".into(), json!(tolerations));
    // a usage that follows each pod's own request is written as that rule,
    // not as the template's typical pod's distribution
    let mut usage = Map::new();
    let mut usage_ratio = Map::new();
    for (dim, source, d, drawn, unit) in [
        ("cpu", &sizing.cpu_usage, &b.cpu_usage, sizing.cpu.is_some(), Unit::Cpu),
        (
            "memory",
            &sizing.memory_usage,
            &b.memory_usage,
            sizing.memory.is_some(),
            Unit::Memory,
        ),
    ] {
        match source {
            UsageSource::Ratio(ratio) => {
                usage_ratio.insert(dim.into(), dist_json(ratio, Unit::Plain));
            }
            UsageSource::Requests if drawn => {}
            UsageSource::Written | UsageSource::Requests => {
                usage.insert(dim.into(), dist_json(d, unit));
            }
        }
    }
    m.insert("usage".into(), Value::Object(usage));
    if !usage_ratio.is_empty() {
        m.insert("usage_ratio".into(), Value::Object(usage_ratio));
    }
    if let Some(run) = &b.run_seconds {
        m.insert("run".into(), dist_json(run, Unit::Seconds));
    }
    if let Some(growth) = &b.memory_growth_per_hour {
        m.insert("memory_growth_per_hour".into(), dist_json(growth, Unit::Memory));
    }
    m.insert("crash_rate_per_hour".into(), number_json(b.crash_rate_per_hour));
    if b.crash_rate_growth_per_hour != 0.0 {
        m.insert(
            "crash_rate_growth_per_hour".into(),
            number_json(b.crash_rate_growth_per_hour),
        );
    }
    m.insert("unstable".into(), json!(b.unstable));
    m.insert("recreate".into(), json!(t.recreate));
    Value::Object(m)
}

fn phase(model: &Model, kind: &PhaseKind) -> (&'static str, Value) {
    let tpl = |i: usize| model.templates[i].name.clone();
    let pool = |p: Option<usize>| p.map(|i| model.pools[i].pool.name.clone());
    let with_pool = |mut m: Map<String, Value>, p: Option<usize>| {
        if let Some(name) = pool(p) {
            m.insert("pool".into(), json!(name));
        }
        m
    };
    match kind {
        PhaseKind::Create {
            template,
            count,
            pacing,
        } => {
            let mut m = Map::new();
            m.insert("template".into(), json!(tpl(*template)));
            m.insert("count".into(), json!(count));
            match pacing {
                Pacing::AllAtOnce => {}
                Pacing::Rate(r) => {
                    m.insert("rate".into(), number_json(*r));
                }
                Pacing::Over(span) => {
                    m.insert("over".into(), json!(format_exact(*span)));
                }
                Pacing::Ramp { from, to } => {
                    m.insert(
                        "ramp".into(),
                        json!({"from": number_json(*from), "to": number_json(*to)}),
                    );
                }
            }
            ("create", Value::Object(m))
        }
        PhaseKind::Churn {
            template,
            fraction,
            every,
            period,
        } => (
            "churn",
            json!({
                "template": tpl(*template),
                "fraction": number_json(*fraction),
                "every": format_exact(*every),
                "for": format_exact(*period),
            }),
        ),
        PhaseKind::KillPods { template, count } => ("kill_pods", json!({"template": tpl(*template), "count": count})),
        PhaseKind::DeletePods { template, count } => {
            ("delete_pods", json!({"template": tpl(*template), "count": count}))
        }
        PhaseKind::FailNodes(f) | PhaseKind::DegradeNodes(f) => {
            let mut m = Map::new();
            m.insert("count".into(), json!(f.count));
            if let Some(d) = f.recover_after {
                m.insert("recover_after".into(), json!(format_exact(d)));
            }
            if let Some(d) = f.fail_after {
                m.insert("fail_after".into(), json!(format_exact(d)));
            }
            let key = if matches!(kind, PhaseKind::FailNodes(_)) {
                "fail_nodes"
            } else {
                "degrade_nodes"
            };
            (key, Value::Object(with_pool(m, f.pool)))
        }
        PhaseKind::RecoverNodes { count, pool } => {
            let mut m = Map::new();
            if let Some(c) = count {
                m.insert("count".into(), json!(c));
            }
            ("recover_nodes", Value::Object(with_pool(m, *pool)))
        }
        PhaseKind::LoseNodes(l) => {
            let mut m = Map::new();
            m.insert("rate_per_node_hour".into(), number_json(l.rate_per_node_hour));
            m.insert("for".into(), json!(format_exact(l.period)));
            m.insert("replace_after".into(), json!(format_exact(l.replace_after)));
            ("lose_nodes", Value::Object(with_pool(m, l.pool)))
        }
        PhaseKind::ZoneOutage { zone, recover_after } => {
            let mut m = Map::new();
            m.insert("zone".into(), json!(zone));
            if let Some(d) = recover_after {
                m.insert("recover_after".into(), json!(format_exact(*d)));
            }
            ("zone_outage", Value::Object(m))
        }
        PhaseKind::Replay(r) => ("replay", replay(r)),
        PhaseKind::Wait(span) => ("wait", json!(format_exact(*span))),
    }
}

/// A replay with its pods inline, already in scenario time: the manifest
/// does not depend on the trace file still being there, unchanged.
fn replay(r: &Replay) -> Value {
    let qos: Map<String, Value> = r
        .classes
        .iter()
        .map(|(name, c)| {
            let limits = if c.guaranteed { "requests" } else { "none" };
            (name.clone(), json!({"priority": c.priority, "limits": limits}))
        })
        .collect();
    let pods: Vec<Value> = r
        .pods
        .iter()
        .map(|p| {
            json!([
                p.cpu_milli,
                p.memory_mib,
                p.qos,
                p.at.as_millis(),
                p.until.map(|u| u.as_millis())
            ])
        })
        .collect();
    json!({
        "format": r.format,
        "qos": qos,
        "usage_ratio": {"cpu": dist_json(&r.usage_ratio.0, Unit::Plain), "memory": dist_json(&r.usage_ratio.1, Unit::Plain)},
        "gpu_rows": r.gpu_rows,
        "pods": pods,
    })
}
