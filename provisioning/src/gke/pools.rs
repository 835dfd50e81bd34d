//! The scenario's node pools against a cluster's: each scenario pool needs a
//! GKE node pool of its machine type with enough nodes.

use k8s_openapi::api::core::v1 as core;
use kube_backend::{labels, objects};
use schedlab_core::node::{NodeSpec, Provisioning, Taint};
use serde::Serialize;
use std::collections::BTreeMap;

/// The label GKE puts on every node: its node pool.
pub const GKE_NODEPOOL: &str = "cloud.google.com/gke-nodepool";
/// The node's zone.
pub const ZONE: &str = "topology.kubernetes.io/zone";
pub const HOSTNAME: &str = "kubernetes.io/hostname";

/// What a scenario pool asks of the cluster.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolNeed {
    /// the scenario's pool name
    pub name: String,
    pub machine_type: String,
    /// how many nodes of the scenario are in it
    pub count: usize,
    pub hourly_price: f64,
    pub provisioning: Provisioning,
    /// the labels every node of the pool has in the scenario
    pub labels: BTreeMap<String, String>,
    /// the taints of its first node
    pub taints: Vec<Taint>,
}

/// The scenario's pools, in the order their first node appears.
pub fn pool_needs(nodes: &[NodeSpec]) -> Vec<PoolNeed> {
    let mut out: Vec<PoolNeed> = Vec::new();
    for spec in nodes {
        match out.iter_mut().find(|p| p.name == spec.pool.name) {
            Some(need) => {
                need.count += 1;
                need.labels.retain(|k, v| spec.labels.get(k) == Some(v));
            }
            None => out.push(PoolNeed {
                name: spec.pool.name.clone(),
                machine_type: spec.pool.machine_type.clone(),
                count: 1,
                hourly_price: spec.pool.hourly_price,
                provisioning: spec.pool.provisioning,
                labels: spec.labels.clone(),
                taints: spec.taints.clone(),
            }),
        }
    }
    out
}

/// What the check reads of a node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    pub name: String,
    /// the GKE node pool (else schedlab's pool label, else "(none)")
    pub pool: String,
    /// schedlab's pool label, when the node carries one
    pub schedlab_pool: Option<String>,
    pub machine_type: Option<String>,
    pub zone: Option<String>,
}

impl NodeInfo {
    pub fn of(node: &core::Node) -> NodeInfo {
        let l = node.metadata.labels.clone().unwrap_or_default();
        NodeInfo {
            name: node.metadata.name.clone().unwrap_or_default(),
            pool: l
                .get(GKE_NODEPOOL)
                .or_else(|| l.get(labels::POOL))
                .cloned()
                .unwrap_or_else(|| "(none)".to_string()),
            schedlab_pool: l.get(labels::POOL).cloned(),
            machine_type: l.get(labels::MACHINE_TYPE).cloned(),
            zone: l.get(ZONE).cloned(),
        }
    }
}

/// Which cluster nodes play a scenario pool.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolMatch {
    /// the scenario pool
    pub pool: String,
    /// the GKE node pool
    pub node_pool: String,
    pub machine_type: String,
    /// the nodes used, in name order (the first `count` of the node pool)
    pub nodes: Vec<String>,
    pub hourly_price: f64,
}

/// The scenario's pools that the cluster lacks, and what it has.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the cluster's node pools do not fit the scenario:\n{}\nthe cluster has: {}\n\
     (create the missing node pools, pass --provision to create a cluster for the scenario, or lower the node counts with --set)",
    missing.iter().map(|m| format!("  - {m}")).collect::<Vec<_>>().join("\n"),
    if found.is_empty() { "no nodes".to_string() } else { found.join(", ") }
)]
pub struct PoolsMissing {
    /// one line per scenario pool without a fitting node pool
    pub missing: Vec<String>,
    /// one entry per node pool of the cluster: `name (count × machine type)`
    pub found: Vec<String>,
}

/// Finds a node pool for every scenario pool: first one named like it (its
/// GKE name or schedlab's pool label), else any unclaimed one, each with the
/// pool's machine type and at least its node count. A node pool plays one
/// scenario pool at most.
pub fn check_pools(needs: &[PoolNeed], nodes: &[NodeInfo]) -> crate::Result<Vec<PoolMatch>> {
    // the cluster's node pools, by name, with their nodes in name order
    let mut groups: BTreeMap<&str, Vec<&NodeInfo>> = BTreeMap::new();
    for node in nodes {
        groups.entry(node.pool.as_str()).or_default().push(node);
    }
    for members in groups.values_mut() {
        members.sort_by(|a, b| a.name.cmp(&b.name));
    }
    let fits = |need: &PoolNeed, members: &[&NodeInfo]| {
        let typed = members
            .iter()
            .filter(|n| n.machine_type.as_deref() == Some(need.machine_type.as_str()))
            .count();
        typed >= need.count
    };
    let named = |need: &PoolNeed, pool: &str, members: &[&NodeInfo]| {
        let label = objects::dns_label(&[&need.name]);
        pool == need.name || pool == label || members.iter().any(|n| n.schedlab_pool.as_deref() == Some(&label))
    };
    let mut claimed: Vec<&str> = Vec::new();
    let mut chosen: Vec<Option<&str>> = vec![None; needs.len()];
    for pass in [true, false] {
        for (i, need) in needs.iter().enumerate() {
            if chosen[i].is_some() {
                continue;
            }
            let pick = groups.iter().find(|(pool, members)| {
                !claimed.contains(pool) && fits(need, members) && (!pass || named(need, pool, members))
            });
            if let Some((pool, _)) = pick {
                claimed.push(pool);
                chosen[i] = Some(pool);
            }
        }
    }
    let mut missing = Vec::new();
    let mut out = Vec::new();
    for (need, pick) in needs.iter().zip(&chosen) {
        match pick.and_then(|p| groups.get(p).map(|m| (p, m))) {
            Some((pool, members)) => out.push(PoolMatch {
                pool: need.name.clone(),
                node_pool: pool.to_string(),
                machine_type: need.machine_type.clone(),
                nodes: members
                    .iter()
                    .filter(|n| n.machine_type.as_deref() == Some(need.machine_type.as_str()))
                    .take(need.count)
                    .map(|n| n.name.clone())
                    .collect(),
                hourly_price: need.hourly_price,
            }),
            None => missing.push(format!(
                "pool {}: needs {} × {} nodes; no unclaimed node pool has that many",
                need.name, need.count, need.machine_type
            )),
        }
    }
    if missing.is_empty() {
        return Ok(out);
    }
    let found = groups
        .iter()
        .map(|(pool, members)| {
            let mut types: Vec<&str> = members
                .iter()
                .map(|n| n.machine_type.as_deref().unwrap_or("unknown type"))
                .collect();
            types.dedup();
            format!("{pool} ({} × {})", members.len(), types.join("/"))
        })
        .collect();
    Err(PoolsMissing { missing, found }.into())
}

/// The real node meant for each scenario node, in NodeId order: the nodes
/// of `nodes[k]`'s pool match, in turn.
pub fn intended_nodes(nodes: &[NodeSpec], matches: &[PoolMatch]) -> Vec<String> {
    let mut next: BTreeMap<&str, usize> = BTreeMap::new();
    nodes
        .iter()
        .filter_map(|spec| {
            let m = matches.iter().find(|m| m.pool == spec.pool.name)?;
            let i = next.entry(m.pool.as_str()).or_default();
            let name = m.nodes.get(*i).cloned();
            *i += 1;
            name
        })
        .collect()
}

/// The label selector of exactly the matched nodes.
pub fn selector(matches: &[PoolMatch]) -> String {
    let mut names: Vec<&str> = matches
        .iter()
        .flat_map(|m| m.nodes.iter().map(String::as_str))
        .collect();
    names.sort();
    format!("{HOSTNAME} in ({})", names.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::node::TaintEffect;
    use schedlab_core::resources::Resources;
    use schedlab_core::testing::NodeSpecChanges;

    pub(crate) fn spec(name: &str, pool: &str, machine: &str, price: f64) -> NodeSpec {
        NodeSpec::plain(name, Resources::ZERO, price)
            .pool(pool, machine)
            .label("tier", pool)
    }

    fn info(name: &str, pool: &str, machine: &str) -> NodeInfo {
        NodeInfo {
            name: name.into(),
            pool: pool.into(),
            schedlab_pool: None,
            machine_type: Some(machine.into()),
            zone: Some("europe-west4-a".into()),
        }
    }

    fn scenario() -> Vec<NodeSpec> {
        let mut spot = spec("s0", "spot", "n2-standard-8", 0.09);
        spot.taints.push(Taint {
            key: "cloud.google.com/gke-spot".into(),
            value: Some("true".into()),
            effect: TaintEffect::NoSchedule,
        });
        vec![
            spec("g0", "general", "n2-standard-8", 0.39),
            spec("g1", "general", "n2-standard-8", 0.39),
            spot,
            spec("b0", "big", "n2-highmem-16", 1.1),
        ]
    }

    #[test]
    fn needs_group_by_pool_in_order() {
        let needs = pool_needs(&scenario());
        let summary: Vec<(&str, &str, usize)> = needs
            .iter()
            .map(|n| (n.name.as_str(), n.machine_type.as_str(), n.count))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("general", "n2-standard-8", 2),
                ("spot", "n2-standard-8", 1),
                ("big", "n2-highmem-16", 1)
            ]
        );
        assert_eq!(needs[1].taints.len(), 1);
        assert_eq!(needs[0].labels.get("tier").map(String::as_str), Some("general"));
    }

    #[test]
    fn pools_match_by_name_first_then_by_machine_type() {
        let nodes = vec![
            info("gke-c-default-pool-2", "default-pool", "n2-standard-8"),
            info("gke-c-default-pool-1", "default-pool", "n2-standard-8"),
            info("gke-c-default-pool-3", "default-pool", "n2-standard-8"),
            info("gke-c-spot-1", "spot", "n2-standard-8"),
            info("gke-c-big-1", "mem", "n2-highmem-16"),
        ];
        let matches = check_pools(&pool_needs(&scenario()), &nodes).unwrap();
        let by: Vec<(&str, &str, Vec<&str>)> = matches
            .iter()
            .map(|m| {
                (
                    m.pool.as_str(),
                    m.node_pool.as_str(),
                    m.nodes.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            by,
            vec![
                (
                    "general",
                    "default-pool",
                    vec!["gke-c-default-pool-1", "gke-c-default-pool-2"]
                ),
                ("spot", "spot", vec!["gke-c-spot-1"]),
                ("big", "mem", vec!["gke-c-big-1"]),
            ]
        );
        assert_eq!(
            intended_nodes(&scenario(), &matches),
            vec![
                "gke-c-default-pool-1",
                "gke-c-default-pool-2",
                "gke-c-spot-1",
                "gke-c-big-1"
            ]
        );
        assert_eq!(
            selector(&matches),
            "kubernetes.io/hostname in (gke-c-big-1,gke-c-default-pool-1,gke-c-default-pool-2,gke-c-spot-1)"
        );
    }

    #[test]
    fn missing_pools_are_listed_with_what_exists() {
        let nodes = vec![
            info("a-1", "default-pool", "e2-medium"),
            info("a-2", "default-pool", "e2-medium"),
            info("s-1", "spot", "n2-standard-8"),
        ];
        let err = pools_missing(check_pools(&pool_needs(&scenario()), &nodes));
        assert_eq!(err.missing.len(), 2, "{err}");
        assert!(
            err.missing[0].starts_with("pool general: needs 2 × n2-standard-8"),
            "{err}"
        );
        assert!(err.missing[1].starts_with("pool big: needs 1 × n2-highmem-16"), "{err}");
        assert_eq!(
            err.found,
            vec!["default-pool (2 × e2-medium)", "spot (1 × n2-standard-8)"]
        );
        let text = err.to_string();
        assert!(text.contains("--provision"), "{text}");
    }

    #[test]
    fn a_pool_too_small_does_not_fit() {
        let nodes = vec![info("g-1", "general", "n2-standard-8")];
        let needs = pool_needs(&scenario()[..2]);
        let err = pools_missing(check_pools(&needs, &nodes));
        assert_eq!(err.missing.len(), 1);
    }

    fn pools_missing(result: crate::Result<Vec<PoolMatch>>) -> PoolsMissing {
        match result {
            Err(crate::Error::PoolsMissing(e)) => e,
            other => panic!("expected missing pools, got {other:?}"),
        }
    }
}
