//! `phases`: what happens when, checked against the pools and templates.

use super::{ZONE_LABEL, replay};
use crate::duration::format_human;
use crate::error::ScenarioError;
use crate::limits::MAX_CHURN_ROUNDS;
use crate::model::{NodeFault, NodeLoss, Pacing, Phase, PhaseKind, PhaseSource, Pool, Template};
use crate::raw::{RawCreate, RawNodeFault, RawPhase, RawPhaseKind};
use crate::scalar::Located;
use crate::trace::Files;
use crate::value::Resolver;
use schedlab_core::Span;

/// More losses than one a minute per node is not a hazard but a typo.
const MAX_LOSS_RATE_PER_NODE_HOUR: f64 = 60.0;

/// Resolves the phases in order; `replay` phases add their workloads to
/// `templates`, so later phases may name them.
pub(crate) fn phases(
    r: &Resolver<'_>,
    files: &Files,
    raw: &[RawPhase],
    pools: &[Pool],
    templates: &mut Vec<Template>,
    duration: Span,
) -> Result<Vec<Phase>, ScenarioError> {
    let mut refs = Refs {
        r,
        files,
        pools,
        templates,
    };
    raw.iter()
        .enumerate()
        .map(|(i, p)| refs.phase(i, p, duration))
        .collect()
}

/// A phase's `at`, which must come before the scenario's end.
fn phase_at(r: &Resolver<'_>, p: &RawPhase, i: usize, duration: Span) -> Result<Option<Span>, ScenarioError> {
    let Some(v) = &p.at else {
        return Ok(None);
    };
    let path = format!("phases[{i}].at");
    let at = r.duration(v, &path)?;
    if at >= duration {
        return Err(r.error(
            &path,
            v,
            r.shown(v, &path),
            format!("at or after the scenario's end ({})", format_human(duration)),
        ));
    }
    Ok(Some(at))
}

struct Refs<'a> {
    r: &'a Resolver<'a>,
    files: &'a Files,
    pools: &'a [Pool],
    /// grows as `replay` phases add their workloads
    templates: &'a mut Vec<Template>,
}

impl Refs<'_> {
    fn template(&self, v: &Located, path: &str) -> Result<usize, ScenarioError> {
        let name = self.r.text(v, path)?;
        self.templates.iter().position(|t| t.name == name).ok_or_else(|| {
            let known: Vec<&str> = self.templates.iter().map(|t| t.name.as_str()).collect();
            let known = if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            };
            self.r
                .error(path, v, name, format!("no template has this name (templates: {known})"))
        })
    }

    fn pool(&self, v: &Located, path: &str) -> Result<usize, ScenarioError> {
        let name = self.r.text(v, path)?;
        self.pools.iter().position(|p| p.pool.name == name).ok_or_else(|| {
            let known: Vec<&str> = self.pools.iter().map(|p| p.pool.name.as_str()).collect();
            self.r.error(
                path,
                v,
                name,
                format!("no pool has this name (pools: {})", known.join(", ")),
            )
        })
    }

    /// A node count no larger than the nodes it may choose from.
    fn node_count(&self, v: &Located, path: &str, pool: Option<usize>) -> Result<u32, ScenarioError> {
        let n = self.r.count(v, path)?;
        let (available, within) = match pool {
            Some(p) => (self.pools[p].count as u64, format!("pool {}", self.pools[p].pool.name)),
            None => (
                self.pools.iter().map(|p| p.count as u64).sum(),
                "the cluster".to_string(),
            ),
        };
        if n > available {
            return Err(self.r.error(
                path,
                v,
                self.r.shown(v, path),
                format!("more nodes than exist: {within} has {available}"),
            ));
        }
        Ok(n as u32)
    }

    fn phase(&mut self, i: usize, p: &RawPhase, duration: Span) -> Result<Phase, ScenarioError> {
        let r = self.r;
        let base = format!("phases[{i}]");
        let at = phase_at(r, p, i, duration)?;
        let path = format!("{base}.{}", p.kind.key());
        let field = |f: &str| format!("{path}.{f}");
        let mut count_of: Option<&Located> = None;
        let mut loc_of: Option<&Located> = None;
        let kind = match &p.kind {
            RawPhaseKind::Create(c) => {
                count_of = Some(&c.count);
                self.create(c, &path)?
            }
            RawPhaseKind::Churn(c) => {
                let template = self.template(&c.template, &field("template"))?;
                let fraction = r.number_where(
                    &c.fraction,
                    &field("fraction"),
                    |f| (0.0..=1.0).contains(&f),
                    "expected a fraction between 0 and 1",
                )?;
                let every = r.positive_duration(&c.every, &field("every"))?;
                let period = r.positive_duration(&c.period, &field("for"))?;
                let rounds = period.as_millis().div_ceil(every.as_millis());
                if rounds > MAX_CHURN_ROUNDS {
                    return Err(r.error(
                        &field("every"),
                        &c.every,
                        r.shown(&c.every, &field("every")),
                        format!("{rounds} churn rounds is more than the {MAX_CHURN_ROUNDS} allowed; churn less often"),
                    ));
                }
                PhaseKind::Churn {
                    template,
                    fraction,
                    every,
                    period,
                }
            }
            RawPhaseKind::KillPods(k) | RawPhaseKind::DeletePods(k) => {
                count_of = Some(&k.count);
                let template = self.template(&k.template, &field("template"))?;
                let count = r.count(&k.count, &field("count"))? as u32;
                if matches!(p.kind, RawPhaseKind::KillPods(_)) {
                    PhaseKind::KillPods { template, count }
                } else {
                    PhaseKind::DeletePods { template, count }
                }
            }
            RawPhaseKind::FailNodes(f) | RawPhaseKind::DegradeNodes(f) => {
                count_of = Some(&f.count);
                if let (RawPhaseKind::FailNodes(_), Some(v)) = (&p.kind, &f.fail_after) {
                    return Err(r.error(
                        &field("fail_after"),
                        v,
                        r.shown(v, &field("fail_after")),
                        "only degrade_nodes takes fail_after (degraded nodes that then fail)",
                    ));
                }
                let fault = self.node_fault(f, &path)?;
                if matches!(p.kind, RawPhaseKind::FailNodes(_)) {
                    PhaseKind::FailNodes(fault)
                } else {
                    PhaseKind::DegradeNodes(fault)
                }
            }
            RawPhaseKind::RecoverNodes(rec) => {
                count_of = rec.count.as_ref();
                let pool = rec.pool.as_ref().map(|v| self.pool(v, &field("pool"))).transpose()?;
                let count = rec
                    .count
                    .as_ref()
                    .map(|v| self.node_count(v, &field("count"), pool))
                    .transpose()?;
                PhaseKind::RecoverNodes { count, pool }
            }
            RawPhaseKind::LoseNodes(l) => {
                let pool = l.pool.as_ref().map(|v| self.pool(v, &field("pool"))).transpose()?;
                let rate_per_node_hour = r.number_where(
                    &l.rate_per_node_hour,
                    &field("rate_per_node_hour"),
                    |x| x > 0.0 && x <= MAX_LOSS_RATE_PER_NODE_HOUR,
                    "expected a rate above 0 and at most 60 losses per node-hour",
                )?;
                PhaseKind::LoseNodes(NodeLoss {
                    pool,
                    rate_per_node_hour,
                    period: r.positive_duration(&l.period, &field("for"))?,
                    replace_after: r.positive_duration(&l.replace_after, &field("replace_after"))?,
                })
            }
            RawPhaseKind::ZoneOutage(z) => {
                let zone = r.text(&z.zone, &field("zone"))?;
                let has_zone = self
                    .pools
                    .iter()
                    .any(|p| p.count > 0 && p.labels.get(ZONE_LABEL) == Some(&zone));
                if !has_zone {
                    let mut zones: Vec<&str> = self
                        .pools
                        .iter()
                        .filter_map(|p| p.labels.get(ZONE_LABEL).map(String::as_str))
                        .collect();
                    zones.sort_unstable();
                    zones.dedup();
                    let known = if zones.is_empty() {
                        "none".to_string()
                    } else {
                        zones.join(", ")
                    };
                    return Err(r.error(
                        &field("zone"),
                        &z.zone,
                        zone,
                        format!("no node is in this zone (zones: {known})"),
                    ));
                }
                let recover_after = z
                    .recover_after
                    .as_ref()
                    .map(|v| r.positive_duration(v, &field("recover_after")))
                    .transpose()?;
                PhaseKind::ZoneOutage { zone, recover_after }
            }
            RawPhaseKind::Wait(v) => PhaseKind::Wait(r.positive_duration(v, &path)?),
            RawPhaseKind::Replay(rp) => {
                loc_of = Some(&rp.format);
                let replay = replay::replay(r, self.files, rp, &path, self.pools, self.templates)?;
                PhaseKind::Replay(Box::new(replay))
            }
        };
        Ok(Phase {
            at,
            kind,
            source: PhaseSource {
                count_shown: count_of.map(|v| r.shown(v, &field("count"))),
                count_loc: count_of.or(loc_of).and_then(|v| v.loc),
                at_loc: p.at.as_ref().and_then(|v| v.loc),
                path,
            },
        })
    }

    fn create(&self, c: &RawCreate, path: &str) -> Result<PhaseKind, ScenarioError> {
        let r = self.r;
        let field = |f: &str| format!("{path}.{f}");
        let template = self.template(&c.template, &field("template"))?;
        let count = r.count(&c.count, &field("count"))? as u32;
        let given = [c.rate.is_some(), c.over.is_some(), c.ramp.is_some()];
        if given.iter().filter(|g| **g).count() > 1 {
            return Err(ScenarioError::invalid(
                r.origin,
                path,
                None,
                "give at most one of rate, over and ramp",
                c.count.loc,
            ));
        }
        let positive = "must be more than zero (pods per second)";
        let pacing = if let Some(v) = &c.rate {
            Pacing::Rate(r.number_where(v, &field("rate"), |x| x > 0.0, positive)?)
        } else if let Some(v) = &c.over {
            Pacing::Over(r.positive_duration(v, &field("over"))?)
        } else if let Some(ramp) = &c.ramp {
            let non_negative = "must not be negative (pods per second)";
            let from = r.number_where(&ramp.from, &field("ramp.from"), |x| x >= 0.0, non_negative)?;
            let to = r.number_where(&ramp.to, &field("ramp.to"), |x| x >= 0.0, non_negative)?;
            if from + to <= 0.0 {
                return Err(r.error(
                    &field("ramp.to"),
                    &ramp.to,
                    r.shown(&ramp.to, &field("ramp.to")),
                    "from and to cannot both be zero",
                ));
            }
            Pacing::Ramp { from, to }
        } else {
            Pacing::AllAtOnce
        };
        Ok(PhaseKind::Create {
            template,
            count,
            pacing,
        })
    }

    fn node_fault(&self, f: &RawNodeFault, path: &str) -> Result<NodeFault, ScenarioError> {
        let field = |name: &str| format!("{path}.{name}");
        let pool = f.pool.as_ref().map(|v| self.pool(v, &field("pool"))).transpose()?;
        let count = self.node_count(&f.count, &field("count"), pool)?;
        let recover_after = f
            .recover_after
            .as_ref()
            .map(|v| self.r.positive_duration(v, &field("recover_after")))
            .transpose()?;
        let fail_after = f
            .fail_after
            .as_ref()
            .map(|v| self.r.positive_duration(v, &field("fail_after")))
            .transpose()?;
        if let (Some(fail), Some(recover), Some(v)) = (fail_after, recover_after, &f.recover_after)
            && recover <= fail
        {
            return Err(self.r.error(
                &field("recover_after"),
                v,
                self.r.shown(v, &field("recover_after")),
                format!(
                    "counts from the degradation and must come after the failure (fail_after {})",
                    format_human(fail)
                ),
            ));
        }
        Ok(NodeFault {
            count,
            pool,
            recover_after,
            fail_after,
        })
    }
}
