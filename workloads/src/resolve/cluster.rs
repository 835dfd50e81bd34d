//! `cluster.pools`: node pools and their machines.

use super::check_object_name;
use crate::error::ScenarioError;
use crate::limits::{MAX_LABEL_VALUE_CHARS, MAX_NODES};
use crate::model::Pool;
use crate::raw::{RawCluster, RawResources, RawTaint};
use crate::scalar::Located;
use crate::value::Resolver;
use schedlab_core::resources::{format_cpu_milli, format_memory_bytes};
use schedlab_core::{NodePool, Provisioning, Resources, Taint, TaintEffect};
use std::collections::BTreeMap;

/// The well-known label a pool's `zone` sets (topology.kubernetes.io/zone).
pub(crate) const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// A label value as Kubernetes accepts it: at most 63 characters of
/// alphanumerics, `-`, `_` and `.`, beginning and ending with an alphanumeric.
fn check_label_value(v: &str) -> Result<(), String> {
    let ok = !v.is_empty()
        && v.len() <= 63
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && v.starts_with(|c: char| c.is_ascii_alphanumeric())
        && v.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err("a zone is 1-63 letters, digits, `-`, `_` or `.`, beginning and ending with a letter or digit".into())
    }
}

pub(crate) const TAINT_EFFECTS: &[(&str, TaintEffect)] = &[
    ("NoSchedule", TaintEffect::NoSchedule),
    ("PreferNoSchedule", TaintEffect::PreferNoSchedule),
    ("NoExecute", TaintEffect::NoExecute),
];

pub(crate) fn pools(r: &Resolver<'_>, raw: &RawCluster) -> Result<Vec<Pool>, ScenarioError> {
    let mut pools: Vec<Pool> = Vec::with_capacity(raw.pools.len());
    let mut total: u64 = 0;
    for (i, p) in raw.pools.iter().enumerate() {
        let path = format!("cluster.pools[{i}]");
        let name = r.text(&p.name, &format!("{path}.name"))?;
        check_object_name(&name).map_err(|e| r.error(&format!("{path}.name"), &p.name, name.clone(), e))?;
        if pools.iter().any(|q| q.pool.name == name) {
            return Err(r.error(&format!("{path}.name"), &p.name, name, "another pool has this name"));
        }
        let count = r.count(&p.count, &format!("{path}.count"))?;
        total += count;
        if total > MAX_NODES {
            return Err(r.error(
                &format!("{path}.count"),
                &p.count,
                r.shown(&p.count, &format!("{path}.count")),
                format!("the cluster would have more than {MAX_NODES} nodes"),
            ));
        }
        let machine_type = r.text(&p.machine_type, &format!("{path}.machine_type"))?;
        let hourly_price = r.number_where(
            &p.hourly_price,
            &format!("{path}.hourly_price"),
            |x| x >= 0.0,
            "a price must not be negative",
        )?;
        let provisioning = match &p.provisioning {
            Some(v) => r.choice(
                v,
                &format!("{path}.provisioning"),
                &[("on-demand", Provisioning::OnDemand), ("spot", Provisioning::Spot)],
            )?,
            None => Provisioning::OnDemand,
        };
        let capacity = capacity(r, &p.capacity, &format!("{path}.capacity"))?;
        let allocatable = match (&p.allocatable, &p.reserved) {
            (Some(_), Some(_)) => {
                return Err(ScenarioError::invalid(
                    r.origin,
                    format!("{path}.reserved"),
                    None,
                    "give either allocatable or reserved, not both",
                    None,
                ));
            }
            (Some(a), None) => allocatable(r, a, capacity, &format!("{path}.allocatable"))?,
            (None, Some(res)) => reserved(r, res, capacity, &format!("{path}.reserved"))?,
            (None, None) => capacity,
        };
        let max_pods = match &p.max_pods {
            Some(v) => {
                let n = r.count(v, &format!("{path}.max_pods"))?;
                if n == 0 {
                    return Err(r.error(&format!("{path}.max_pods"), v, "0".into(), "must be at least 1"));
                }
                n as u32
            }
            None => 110,
        };
        let mut labels = BTreeMap::new();
        for (k, v) in &p.labels {
            let lp = format!("{path}.labels.{k}");
            labels.insert(k.clone(), label_value(r, v, &lp)?);
        }
        if let Some(v) = &p.zone {
            let zp = format!("{path}.zone");
            let zone = r.text(v, &zp)?;
            check_label_value(&zone).map_err(|e| r.error(&zp, v, zone.clone(), e))?;
            match labels.get(ZONE_LABEL) {
                Some(other) if *other != zone => {
                    return Err(r.error(
                        &zp,
                        v,
                        zone,
                        format!("labels.{ZONE_LABEL} says {other:?}; give the zone once"),
                    ));
                }
                _ => {
                    labels.insert(ZONE_LABEL.to_string(), zone);
                }
            }
        }
        let taints = p
            .taints
            .iter()
            .enumerate()
            .map(|(j, t)| taint(r, t, &format!("{path}.taints[{j}]")))
            .collect::<Result<Vec<_>, _>>()?;
        pools.push(Pool {
            pool: NodePool {
                name,
                machine_type,
                hourly_price,
                provisioning,
            },
            count: count as u32,
            capacity,
            allocatable,
            max_pods,
            labels,
            taints,
        });
    }
    if total == 0 {
        return Err(ScenarioError::invalid(
            r.origin,
            "cluster.pools",
            None,
            "the cluster is empty: give at least one pool with a count above zero",
            None,
        ));
    }
    Ok(pools)
}

fn required<'a>(r: &Resolver<'_>, v: &'a Option<Located>, path: &str) -> Result<&'a Located, ScenarioError> {
    v.as_ref()
        .ok_or_else(|| ScenarioError::invalid(r.origin, path, None, "required", None))
}

fn capacity(r: &Resolver<'_>, raw: &RawResources, path: &str) -> Result<Resources, ScenarioError> {
    let cpu_v = required(r, &raw.cpu, &format!("{path}.cpu"))?;
    let mem_v = required(r, &raw.memory, &format!("{path}.memory"))?;
    let cpu = r.cpu_milli(cpu_v, &format!("{path}.cpu"))?;
    let memory = r.memory_bytes(mem_v, &format!("{path}.memory"))?;
    if cpu == 0 {
        return Err(r.error(
            &format!("{path}.cpu"),
            cpu_v,
            cpu_v.value.shown(),
            "must be more than zero",
        ));
    }
    if memory == 0 {
        return Err(r.error(
            &format!("{path}.memory"),
            mem_v,
            mem_v.value.shown(),
            "must be more than zero",
        ));
    }
    Ok(Resources::new(cpu, memory))
}

fn allocatable(r: &Resolver<'_>, raw: &RawResources, cap: Resources, path: &str) -> Result<Resources, ScenarioError> {
    let mut out = cap;
    if let Some(v) = &raw.cpu {
        let p = format!("{path}.cpu");
        out.cpu_milli = r.cpu_milli(v, &p)?;
        if out.cpu_milli > cap.cpu_milli {
            return Err(r.error(
                &p,
                v,
                r.shown(v, &p),
                format!("exceeds the capacity ({})", format_cpu_milli(cap.cpu_milli)),
            ));
        }
    }
    if let Some(v) = &raw.memory {
        let p = format!("{path}.memory");
        out.memory_bytes = r.memory_bytes(v, &p)?;
        if out.memory_bytes > cap.memory_bytes {
            return Err(r.error(
                &p,
                v,
                r.shown(v, &p),
                format!("exceeds the capacity ({})", format_memory_bytes(cap.memory_bytes)),
            ));
        }
    }
    Ok(out)
}

fn reserved(r: &Resolver<'_>, raw: &RawResources, cap: Resources, path: &str) -> Result<Resources, ScenarioError> {
    let mut out = cap;
    if let Some(v) = &raw.cpu {
        let p = format!("{path}.cpu");
        let res = r.cpu_milli(v, &p)?;
        if res >= cap.cpu_milli {
            return Err(r.error(
                &p,
                v,
                r.shown(v, &p),
                format!("leaves nothing of the capacity ({})", format_cpu_milli(cap.cpu_milli)),
            ));
        }
        out.cpu_milli -= res;
    }
    if let Some(v) = &raw.memory {
        let p = format!("{path}.memory");
        let res = r.memory_bytes(v, &p)?;
        if res >= cap.memory_bytes {
            return Err(r.error(
                &p,
                v,
                r.shown(v, &p),
                format!(
                    "leaves nothing of the capacity ({})",
                    format_memory_bytes(cap.memory_bytes)
                ),
            ));
        }
        out.memory_bytes -= res;
    }
    Ok(out)
}

fn taint(r: &Resolver<'_>, t: &RawTaint, path: &str) -> Result<Taint, ScenarioError> {
    let key = r.text(&t.key, &format!("{path}.key"))?;
    if key.is_empty() {
        return Err(r.error(&format!("{path}.key"), &t.key, key, "must not be empty"));
    }
    let value = t
        .value
        .as_ref()
        .map(|v| label_value(r, v, &format!("{path}.value")))
        .transpose()?;
    let effect = r.choice(&t.effect, &format!("{path}.effect"), TAINT_EFFECTS)?;
    Ok(Taint { key, value, effect })
}

/// A label or taint value: at most the 63 characters Kubernetes allows.
fn label_value(r: &Resolver<'_>, v: &Located, path: &str) -> Result<String, ScenarioError> {
    let value = r.text(v, path)?;
    if value.chars().count() > MAX_LABEL_VALUE_CHARS {
        return Err(r.error(
            path,
            v,
            r.shown(v, path),
            format!(
                "{} characters; Kubernetes allows at most {MAX_LABEL_VALUE_CHARS} in a label or taint value",
                value.chars().count()
            ),
        ));
    }
    Ok(value)
}
