//! A phase as written: an optional `at` and exactly one kind key.

use super::RawUsage;
use crate::scalar::Located;
use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawCreate {
    pub template: Located,
    pub count: Located,
    #[serde(default)]
    pub rate: Option<Located>,
    #[serde(default)]
    pub over: Option<Located>,
    #[serde(default)]
    pub ramp: Option<RawRamp>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRamp {
    pub from: Located,
    pub to: Located,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawChurn {
    pub template: Located,
    pub fraction: Located,
    pub every: Located,
    #[serde(rename = "for")]
    pub period: Located,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPods {
    pub template: Located,
    pub count: Located,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawNodeFault {
    pub count: Located,
    #[serde(default)]
    pub pool: Option<Located>,
    #[serde(default)]
    pub recover_after: Option<Located>,
    /// degrade_nodes only: the degraded nodes fail this long after they degrade
    #[serde(default)]
    pub fail_after: Option<Located>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawLoseNodes {
    pub rate_per_node_hour: Located,
    #[serde(default)]
    pub pool: Option<Located>,
    #[serde(rename = "for")]
    pub period: Located,
    pub replace_after: Located,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawZoneOutage {
    pub zone: Located,
    #[serde(default)]
    pub recover_after: Option<Located>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawRecover {
    #[serde(default)]
    pub count: Option<Located>,
    #[serde(default)]
    pub pool: Option<Located>,
}

/// `replay`: pods from a cluster trace, or (in the resolved form) the pods
/// parsed from one, inline.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawReplay {
    #[serde(default)]
    pub trace: Option<Located>,
    pub format: Located,
    #[serde(default)]
    pub speedup: Option<Located>,
    #[serde(default)]
    pub offset: Option<Located>,
    #[serde(default)]
    pub limit: Option<Located>,
    #[serde(default)]
    pub gpu_rows: Option<Located>,
    #[serde(default)]
    pub qos: BTreeMap<String, RawQosClass>,
    #[serde(default)]
    pub usage_ratio: RawUsage,
    /// the resolved form: `[cpu_milli, memory_mib, qos, at_ms, until_ms | null]`
    /// per pod, times from the phase's start
    #[serde(default)]
    pub pods: Option<Vec<InlinePod>>,
}

/// `[cpu_milli, memory_mib, qos, at_ms, until_ms | null]`
pub(crate) type InlinePod = (u64, u64, String, u64, Option<u64>);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawQosClass {
    #[serde(default)]
    pub priority: Option<Located>,
    #[serde(default)]
    pub limits: Option<Located>,
}

#[derive(Debug)]
pub(crate) enum RawPhaseKind {
    Create(RawCreate),
    Churn(RawChurn),
    KillPods(RawPods),
    DeletePods(RawPods),
    FailNodes(RawNodeFault),
    DegradeNodes(RawNodeFault),
    RecoverNodes(RawRecover),
    LoseNodes(RawLoseNodes),
    ZoneOutage(RawZoneOutage),
    Replay(Box<RawReplay>),
    Wait(Located),
}

impl RawPhaseKind {
    /// The key the kind is written under.
    pub(crate) fn key(&self) -> &'static str {
        match self {
            RawPhaseKind::Create(_) => "create",
            RawPhaseKind::Churn(_) => "churn",
            RawPhaseKind::KillPods(_) => "kill_pods",
            RawPhaseKind::DeletePods(_) => "delete_pods",
            RawPhaseKind::FailNodes(_) => "fail_nodes",
            RawPhaseKind::DegradeNodes(_) => "degrade_nodes",
            RawPhaseKind::RecoverNodes(_) => "recover_nodes",
            RawPhaseKind::LoseNodes(_) => "lose_nodes",
            RawPhaseKind::ZoneOutage(_) => "zone_outage",
            RawPhaseKind::Replay(_) => "replay",
            RawPhaseKind::Wait(_) => "wait",
        }
    }
}

#[derive(Debug)]
pub(crate) struct RawPhase {
    pub at: Option<Located>,
    pub kind: RawPhaseKind,
}

/// The keys of a phase, read as serde field identifiers so that an unknown
/// key is reported (with its path) while it is read.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "snake_case")]
enum PhaseKey {
    At,
    Create,
    Churn,
    KillPods,
    DeletePods,
    FailNodes,
    DegradeNodes,
    RecoverNodes,
    LoseNodes,
    ZoneOutage,
    Replay,
    Wait,
}

struct PhaseVisitor;

impl<'de> Visitor<'de> for PhaseVisitor {
    type Value = RawPhase;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "a phase: a mapping with one of create, churn, kill_pods, delete_pods, fail_nodes, degrade_nodes, recover_nodes, lose_nodes, zone_outage, replay, wait, and optionally at",
        )
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawPhase, A::Error> {
        let mut at = None;
        let mut kind: Option<RawPhaseKind> = None;
        while let Some(key) = map.next_key::<PhaseKey>()? {
            let next = match key {
                PhaseKey::At => {
                    if at.is_some() {
                        return Err(de::Error::duplicate_field("at"));
                    }
                    at = Some(map.next_value::<Located>()?);
                    continue;
                }
                PhaseKey::Create => RawPhaseKind::Create(map.next_value()?),
                PhaseKey::Churn => RawPhaseKind::Churn(map.next_value()?),
                PhaseKey::KillPods => RawPhaseKind::KillPods(map.next_value()?),
                PhaseKey::DeletePods => RawPhaseKind::DeletePods(map.next_value()?),
                PhaseKey::FailNodes => RawPhaseKind::FailNodes(map.next_value()?),
                PhaseKey::DegradeNodes => RawPhaseKind::DegradeNodes(map.next_value()?),
                // `recover_nodes:` with nothing after it recovers every unhealthy node
                PhaseKey::RecoverNodes => {
                    RawPhaseKind::RecoverNodes(map.next_value::<Option<RawRecover>>()?.unwrap_or_default())
                }
                PhaseKey::LoseNodes => RawPhaseKind::LoseNodes(map.next_value()?),
                PhaseKey::ZoneOutage => RawPhaseKind::ZoneOutage(map.next_value()?),
                PhaseKey::Replay => RawPhaseKind::Replay(Box::new(map.next_value()?)),
                PhaseKey::Wait => RawPhaseKind::Wait(map.next_value()?),
            };
            if let Some(first) = &kind {
                return Err(de::Error::custom(format!(
                    "a phase has exactly one kind, found both `{}` and `{}`; put them in separate list items",
                    first.key(),
                    next.key()
                )));
            }
            kind = Some(next);
        }
        match kind {
            Some(kind) => Ok(RawPhase { at, kind }),
            None => Err(de::Error::custom(
                "a phase needs one of create, churn, kill_pods, delete_pods, fail_nodes, degrade_nodes, recover_nodes, lose_nodes, zone_outage, replay, wait",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for RawPhase {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(PhaseVisitor)
    }
}
