//! The scenario file as written: its shape is checked by serde (unknown
//! fields, missing fields, lists versus mappings), its values are kept as
//! written ([`Located`]) until params are substituted in `resolve`.

mod dist;
mod phase;

pub(crate) use dist::{RawDist, RawDistKind};
pub(crate) use phase::{RawCreate, RawNodeFault, RawPhase, RawPhaseKind, RawReplay};

use crate::scalar::Located;
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawScenario {
    pub name: Located,
    #[serde(default)]
    pub description: Option<Located>,
    #[serde(default)]
    pub params: BTreeMap<String, Located>,
    pub duration: Located,
    #[serde(default)]
    pub sample_interval: Option<Located>,
    pub cluster: RawCluster,
    #[serde(default)]
    pub templates: BTreeMap<String, RawTemplate>,
    #[serde(default)]
    pub phases: Vec<RawPhase>,
    #[serde(default)]
    pub claims: Vec<RawClaim>,
}

/// One entry of `claims:`: a claim of the paper and the role the scenario
/// plays in testing it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawClaim {
    pub claim: Located,
    pub role: Located,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCluster {
    pub pools: Vec<RawPool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPool {
    pub name: Located,
    pub count: Located,
    pub machine_type: Located,
    pub hourly_price: Located,
    #[serde(default)]
    pub provisioning: Option<Located>,
    pub capacity: RawResources,
    #[serde(default)]
    pub allocatable: Option<RawResources>,
    #[serde(default)]
    pub reserved: Option<RawResources>,
    #[serde(default)]
    pub max_pods: Option<Located>,
    #[serde(default)]
    pub labels: BTreeMap<String, Located>,
    #[serde(default)]
    pub taints: Vec<RawTaint>,
    #[serde(default)]
    pub zone: Option<Located>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawResources {
    #[serde(default)]
    pub cpu: Option<Located>,
    #[serde(default)]
    pub memory: Option<Located>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTaint {
    pub key: Located,
    #[serde(default)]
    pub value: Option<Located>,
    pub effect: Located,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawToleration {
    #[serde(default)]
    pub key: Option<Located>,
    #[serde(default)]
    pub operator: Option<Located>,
    #[serde(default)]
    pub value: Option<Located>,
    #[serde(default)]
    pub effect: Option<Located>,
    #[serde(default)]
    pub toleration_seconds: Option<Located>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawTemplate {
    #[serde(default)]
    pub requests: RawRequests,
    #[serde(default)]
    pub limits: Option<RawResources>,
    #[serde(default)]
    pub priority: Option<Located>,
    #[serde(default)]
    pub restart_policy: Option<Located>,
    #[serde(default)]
    pub tolerations: Vec<RawToleration>,
    #[serde(default)]
    pub usage: RawUsage,
    #[serde(default)]
    pub usage_ratio: RawUsage,
    #[serde(default)]
    pub run: Option<RawDist>,
    #[serde(default)]
    pub memory_growth_per_hour: Option<RawDist>,
    #[serde(default)]
    pub crash_rate_per_hour: Option<Located>,
    #[serde(default)]
    pub crash_rate_growth_per_hour: Option<Located>,
    #[serde(default)]
    pub unstable: Option<Located>,
    #[serde(default)]
    pub recreate: Option<Located>,
}

/// A template's requests: each a constant, or a distribution drawn once per
/// pod slot (requests that vary between pods, as a vertical autoscaler's do).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRequests {
    #[serde(default)]
    pub cpu: Option<RawDist>,
    #[serde(default)]
    pub memory: Option<RawDist>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawUsage {
    #[serde(default)]
    pub cpu: Option<RawDist>,
    #[serde(default)]
    pub memory: Option<RawDist>,
}
