//! A checked scenario and a seed to a [`Timeline`]: nodes, workloads, and the
//! time-ordered actions of every phase. Every random choice (which pods churn
//! or die, which nodes fail) comes from
//! `rng::stream(seed, &[purpose::TIMELINE, phase_index, ...])`, so the same
//! seed always gives the same timeline.

mod faults;
mod pacing;
mod requests;
mod slots;

use crate::duration::format_human;
use crate::error::Loc;
use crate::limits::{MAX_ACTIONS, MAX_PODS};
use crate::model::{Model, NodeFault, NodeLoss, Phase, PhaseKind};
use crate::resolve::ZONE_LABEL;
use faults::Faults;
use schedlab_core::rng::{self, SimRng, purpose};
use schedlab_core::{Action, NodeId, NodeSpec, PodSlot, Span, Time, TimedAction, Timeline, Workload, WorkloadId};
use slots::Slots;

/// Something expansion could not do as written.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Issue {
    pub path: String,
    pub value: Option<String>,
    pub reason: String,
    pub loc: Option<Loc>,
    /// the same for every seed, so loading rejects the scenario; the others
    /// depend on the seed's choices and only shrink what a phase does
    pub fatal: bool,
}

#[derive(Debug)]
pub(crate) struct Expansion {
    pub timeline: Timeline,
    pub issues: Vec<Issue>,
}

pub(crate) fn expand(model: &Model, seed: u64) -> Expansion {
    let nodes = nodes(model);
    let mut e = Engine {
        model,
        seed,
        end: Time::ZERO + model.duration,
        actions: Vec::new(),
        slots: model.templates.iter().map(|_| Slots::default()).collect(),
        faults: Faults::new(nodes.len()),
        node_pool: model
            .pools
            .iter()
            .enumerate()
            .flat_map(|(i, p)| std::iter::repeat_n(i, p.count as usize))
            .collect(),
        pods: 0,
        issues: Vec::new(),
        stopped: false,
    };
    e.run();
    let end = e.end;
    let planned = e.actions.len();
    let mut actions: Vec<TimedAction> = std::mem::take(&mut e.actions)
        .into_iter()
        .flatten()
        .filter(|a| a.at < end)
        .collect();
    actions.sort_by_key(|a| a.at);
    tracing::debug!(
        scenario = %model.name,
        seed,
        actions = actions.len(),
        dropped = planned - actions.len(),
        "expanded"
    );
    Expansion {
        timeline: Timeline {
            nodes,
            workloads: model
                .templates
                .iter()
                .enumerate()
                .zip(&e.slots)
                .map(|((i, t), slots)| Workload {
                    id: WorkloadId(i as u32),
                    name: t.name.clone(),
                    spec: t.spec.clone(),
                    recreate: t.recreate,
                    slot_specs: requests::slot_specs(t, seed, slots.len()),
                })
                .collect(),
            actions,
            end,
            sample_interval: model.sample_interval,
        },
        issues: std::mem::take(&mut e.issues),
    }
}

/// Labels every node gets unless its pool sets them.
pub(crate) const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";
pub(crate) const INSTANCE_TYPE_LABEL: &str = "node.kubernetes.io/instance-type";
pub(crate) const POOL_LABEL: &str = "schedlab.io/pool";

fn nodes(model: &Model) -> Vec<NodeSpec> {
    let mut out = Vec::new();
    for p in &model.pools {
        for i in 0..p.count {
            let name = format!("{}-{i}", p.pool.name);
            let mut labels = p.labels.clone();
            labels.entry(HOSTNAME_LABEL.to_string()).or_insert_with(|| name.clone());
            labels
                .entry(INSTANCE_TYPE_LABEL.to_string())
                .or_insert_with(|| p.pool.machine_type.clone());
            labels
                .entry(POOL_LABEL.to_string())
                .or_insert_with(|| p.pool.name.clone());
            out.push(NodeSpec {
                name,
                pool: p.pool.clone(),
                capacity: p.capacity,
                allocatable: p.allocatable,
                max_pods: p.max_pods,
                labels,
                taints: p.taints.clone(),
            });
        }
    }
    out
}

/// `n` of `candidates` chosen at random (all of them when n is not smaller), in order.
fn choose(rng: &mut SimRng, candidates: &[u32], n: usize) -> Vec<u32> {
    let mut chosen: Vec<u32> = if n >= candidates.len() {
        candidates.to_vec()
    } else {
        rand::seq::index::sample(rng, candidates.len(), n)
            .into_iter()
            .map(|i| candidates[i])
            .collect()
    };
    chosen.sort_unstable();
    chosen
}

struct Engine<'m> {
    model: &'m Model,
    seed: u64,
    end: Time,
    /// in the order planned; a cancelled recovery becomes None
    actions: Vec<Option<TimedAction>>,
    slots: Vec<Slots>,
    faults: Faults,
    /// the pool of each node, by node index
    node_pool: Vec<usize>,
    pods: u64,
    issues: Vec<Issue>,
    stopped: bool,
}

impl Engine<'_> {
    fn run(&mut self) {
        let model = self.model;
        let mut clock = Time::ZERO;
        for (i, phase) in model.phases.iter().enumerate() {
            let start = phase.at.map_or(clock, |at| Time::ZERO + at);
            if start >= self.end {
                if !matches!(phase.kind, PhaseKind::Wait(_)) {
                    self.issue(
                        phase,
                        phase.source.path.clone(),
                        None,
                        format!(
                            "starts at {}, at or after the scenario's end ({}); shorten the phases before it or lengthen duration",
                            format_human(start.since(Time::ZERO)),
                            format_human(model.duration)
                        ),
                        true,
                    );
                }
                break;
            }
            let length = self.phase(i, phase, start);
            if self.stopped {
                break;
            }
            clock = start + length;
        }
    }

    fn issue(&mut self, phase: &Phase, path: String, value: Option<String>, reason: String, fatal: bool) {
        self.issues.push(Issue {
            path,
            value,
            reason,
            loc: phase.source.count_loc.or(phase.source.at_loc),
            fatal,
        });
    }

    fn count_issue(&mut self, phase: &Phase, reason: String, fatal: bool) {
        let path = format!("{}.count", phase.source.path);
        self.issue(phase, path, phase.source.count_shown.clone(), reason, fatal);
    }

    fn push(&mut self, at: Time, action: Action) -> usize {
        self.actions.push(Some(TimedAction { at, action }));
        self.actions.len() - 1
    }

    /// Room for `n` more actions (and `pods` more pods) under the caps.
    fn room(&mut self, phase: &Phase, n: u64, pods: u64) -> bool {
        let reason = if self.pods + pods > MAX_PODS {
            format!("the scenario would create more than {MAX_PODS} pods")
        } else if self.actions.len() as u64 + n > MAX_ACTIONS {
            format!("the scenario would have more than {MAX_ACTIONS} actions")
        } else {
            self.pods += pods;
            return true;
        };
        self.count_issue(phase, reason, true);
        self.stopped = true;
        false
    }

    fn rng(&self, keys: &[u64]) -> SimRng {
        let mut all = vec![purpose::TIMELINE];
        all.extend_from_slice(keys);
        rng::stream(self.seed, &all)
    }

    /// Plans one phase starting at `start`; returns how long it takes.
    fn phase(&mut self, i: usize, phase: &Phase, start: Time) -> Span {
        match phase.kind {
            PhaseKind::Create {
                template,
                count,
                pacing: p,
            } => {
                if !self.room(phase, count as u64, count as u64) {
                    return Span::ZERO;
                }
                for k in 0..count {
                    let at = start + Span::from_secs_f64(pacing::offset_secs(p, k, count));
                    if at >= self.end {
                        break;
                    }
                    let ordinal = self.slots[template].create(at);
                    let slot = PodSlot {
                        workload: WorkloadId(template as u32),
                        ordinal,
                    };
                    self.push(at, Action::CreatePod { slot });
                }
                pacing::length(p, count)
            }
            PhaseKind::Churn {
                template,
                fraction,
                every,
                period,
            } => {
                let stop = start + period;
                let mut sweep = self.slots[template].sweep();
                let mut round = 0u64;
                loop {
                    let at = start + Span(every.as_millis().saturating_mul(round));
                    if at >= stop || at >= self.end {
                        break;
                    }
                    let alive = sweep.advance(at);
                    let n = (fraction * alive.len() as f64).round() as usize;
                    let mut rng = self.rng(&[i as u64, round]);
                    let chosen = choose(&mut rng, alive, n);
                    if !self.room(phase, chosen.len() as u64, 0) {
                        break;
                    }
                    for ordinal in chosen {
                        let slot = PodSlot {
                            workload: WorkloadId(template as u32),
                            ordinal,
                        };
                        self.push(at, Action::DeletePod { slot, recreate: true });
                    }
                    round += 1;
                }
                period
            }
            PhaseKind::KillPods { template, count } | PhaseKind::DeletePods { template, count } => {
                let delete = matches!(phase.kind, PhaseKind::DeletePods { .. });
                let alive = self.slots[template].alive_at(start);
                if count as usize > alive.len() {
                    let reason = format!(
                        "only {} pods of template {} exist at {}",
                        alive.len(),
                        self.model.templates[template].name,
                        format_human(start.since(Time::ZERO))
                    );
                    self.count_issue(phase, reason, true);
                }
                let chosen = choose(&mut self.rng(&[i as u64]), &alive, count as usize);
                if !self.room(phase, chosen.len() as u64, 0) {
                    return Span::ZERO;
                }
                for ordinal in chosen {
                    let slot = PodSlot {
                        workload: WorkloadId(template as u32),
                        ordinal,
                    };
                    if delete {
                        self.slots[template].delete(ordinal, start);
                        self.push(start, Action::DeletePod { slot, recreate: false });
                    } else {
                        self.push(start, Action::KillPod { slot });
                    }
                }
                Span::ZERO
            }
            PhaseKind::FailNodes(fault) => {
                self.node_fault(i, phase, start, fault, true);
                Span::ZERO
            }
            PhaseKind::DegradeNodes(fault) => {
                self.node_fault(i, phase, start, fault, false);
                Span::ZERO
            }
            PhaseKind::RecoverNodes { count, pool } => {
                let down: Vec<u32> = self
                    .nodes_in(pool)
                    .filter(|&n| self.faults.is_down(n as usize, start))
                    .collect();
                let n = match count {
                    Some(c) => {
                        if c as usize > down.len() {
                            let reason = format!(
                                "only {} nodes are down at {}",
                                down.len(),
                                format_human(start.since(Time::ZERO))
                            );
                            self.count_issue(phase, reason, false);
                        }
                        c as usize
                    }
                    None => down.len(),
                };
                let chosen = choose(&mut self.rng(&[i as u64]), &down, n);
                if !self.room(phase, chosen.len() as u64, 0) {
                    return Span::ZERO;
                }
                for node in chosen {
                    if let Some(cancelled) = self.faults.end_at(node as usize, start)
                        && let Some(a) = self.actions.get_mut(cancelled)
                    {
                        *a = None;
                    }
                    self.push(start, Action::RecoverNode { node: NodeId(node) });
                }
                Span::ZERO
            }
            PhaseKind::LoseNodes(loss) => {
                self.node_loss(i, phase, start, loss);
                loss.period
            }
            PhaseKind::ZoneOutage {
                ref zone,
                recover_after,
            } => {
                let until = recover_after.map(|d| start + d);
                let in_zone: Vec<u32> = self
                    .model
                    .pools
                    .iter()
                    .enumerate()
                    .filter(|(_, p)| p.labels.get(ZONE_LABEL) == Some(zone))
                    .flat_map(|(pool, _)| self.nodes_in(Some(pool)).collect::<Vec<_>>())
                    .collect();
                let free: Vec<u32> = in_zone
                    .iter()
                    .copied()
                    .filter(|&n| self.faults.is_free(n as usize, start, until))
                    .collect();
                if free.len() < in_zone.len() {
                    tracing::warn!(
                        phase = %phase.source.path,
                        zone,
                        busy = in_zone.len() - free.len(),
                        "zone outage: some of the zone's nodes have other faults then and are left to them"
                    );
                }
                if !self.room(phase, 2 * free.len() as u64, 0) {
                    return Span::ZERO;
                }
                for node in free {
                    let id = NodeId(node);
                    self.push(start, Action::FailNode { node: id });
                    let recovery = until.map(|u| self.push(u, Action::RecoverNode { node: id }));
                    self.faults.add(node as usize, start, until, recovery);
                }
                Span::ZERO
            }
            PhaseKind::Replay(ref replay) => {
                let n = replay.pods.len() as u64;
                if !self.room(phase, 2 * n, n) {
                    return Span::ZERO;
                }
                for pod in &replay.pods {
                    let at = start + pod.at;
                    // sorted by time: the rest start at or after the end too
                    if at >= self.end {
                        break;
                    }
                    let ordinal = self.slots[pod.template].create(at);
                    let slot = PodSlot {
                        workload: WorkloadId(pod.template as u32),
                        ordinal,
                    };
                    self.push(at, Action::CreatePod { slot });
                    if let Some(until) = pod.until {
                        let gone = start + until;
                        self.slots[pod.template].delete(ordinal, gone);
                        self.push(gone, Action::DeletePod { slot, recreate: false });
                    }
                }
                // the phase lasts until its last arrival; deletions go on
                replay.pods.last().map_or(Span::ZERO, |p| p.at)
            }
            PhaseKind::Wait(span) => span,
        }
    }

    /// Losses at a seeded rate per node-hour over the phase, each followed
    /// by its replacement: per node, exponential gaps from the phase start
    /// (or from the last replacement); a loss that would overlap another
    /// fault on the node is skipped and the next gap drawn from there.
    fn node_loss(&mut self, i: usize, phase: &Phase, start: Time, loss: NodeLoss) {
        let stop = (start + loss.period).min(self.end);
        let mean_ms = 3_600_000.0 / loss.rate_per_node_hour;
        let nodes: Vec<u32> = self.nodes_in(loss.pool).collect();
        for node in nodes {
            let mut rng = self.rng(&[i as u64, u64::from(node)]);
            let mut t = start;
            loop {
                let gap = schedlab_core::Dist::Exponential { mean: mean_ms }.sample(&mut rng);
                t = t + Span(gap.round() as u64);
                if t >= stop {
                    break;
                }
                let back = t + loss.replace_after;
                if !self.faults.is_free(node as usize, t, Some(back)) {
                    continue;
                }
                if !self.room(phase, 2, 0) {
                    return;
                }
                let id = NodeId(node);
                self.push(t, Action::LoseNode { node: id });
                self.push(back, Action::ReplaceNode { node: id });
                self.faults.add_loss(node as usize, t, back);
                t = back;
            }
        }
    }

    fn nodes_in(&self, pool: Option<usize>) -> impl Iterator<Item = u32> + '_ {
        self.node_pool
            .iter()
            .enumerate()
            .filter(move |(_, p)| pool.is_none_or(|want| **p == want))
            .map(|(n, _)| n as u32)
    }

    fn node_fault(&mut self, i: usize, phase: &Phase, start: Time, fault: NodeFault, fail: bool) {
        let until = fault.recover_after.map(|d| start + d);
        let free: Vec<u32> = self
            .nodes_in(fault.pool)
            .filter(|&n| self.faults.is_free(n as usize, start, until))
            .collect();
        if fault.count as usize > free.len() {
            let reason = format!(
                "only {} nodes are free of other faults at {}",
                free.len(),
                format_human(start.since(Time::ZERO))
            );
            self.count_issue(phase, reason, false);
        }
        let chosen = choose(&mut self.rng(&[i as u64]), &free, fault.count as usize);
        if !self.room(phase, 3 * chosen.len() as u64, 0) {
            return;
        }
        for node in chosen {
            let id = NodeId(node);
            let action = if fail {
                Action::FailNode { node: id }
            } else {
                Action::DegradeNode { node: id }
            };
            self.push(start, action);
            // a flaky node: degraded first, then it fails
            if let Some(after) = fault.fail_after {
                self.push(start + after, Action::FailNode { node: id });
            }
            let recovery = until.map(|u| self.push(u, Action::RecoverNode { node: id }));
            self.faults.add(node as usize, start, until, recovery);
        }
    }
}
