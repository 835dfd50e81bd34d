//! Test support: pod and node objects of a run, and a stand-in for the node
//! emulator that drives the shared [`PodLifecycle`] and writes pod status as
//! the conventions of the kube backend say the emulator writes it.

use crate::labels;
use crate::objects::{self, CONTAINER, PodIdentity};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time as MetaTime;
use schedlab_core::behaviour::{
    Effects, Input, ModelConfig, NodeHealth, PodContext, PodEnd, PodIdent, PodLifecycle, PodPhase, TimerRequest,
};
use schedlab_core::dist::Dist;
use schedlab_core::node::{NodeId, NodeSpec};
use schedlab_core::pod::{PodId, PodSlot, PodSpec, RestartPolicy, WorkloadId};
use schedlab_core::record::{EventKind, ExitReason, OomCause};
use schedlab_core::resources::Resources;
use schedlab_core::testing::{self, PodSpecChanges};
use schedlab_core::time::Time;
use schedlab_core::timeline::Workload;

pub(crate) const RUN: &str = "r1";
pub(crate) const MI: u64 = 1 << 20;

pub(crate) fn node_spec(name: &str, cpu: u64, memory: u64) -> NodeSpec {
    NodeSpec::plain(name, Resources::new(cpu, memory), 0.5)
}

pub(crate) fn node(id: u32, name: &str) -> core::Node {
    objects::node_object(RUN, NodeId(id), &node_spec(name, 4000, 8192 * MI), true)
}

pub(crate) fn node_name(name: &str) -> String {
    objects::node_name(RUN, &node_spec(name, 1, 1))
}

pub(crate) fn workload(id: u32, restart: RestartPolicy) -> Workload {
    let spec = testing::pod(250, 256 * MI)
        .limits(Resources::new(0, 512 * MI))
        .scheduler("binpack")
        .restart(restart)
        .usage(
            Dist::Uniform { min: 100.0, max: 400.0 },
            Dist::Uniform {
                min: (128 * MI) as f64,
                max: (600 * MI) as f64,
            },
        )
        .run_seconds(Dist::Exponential { mean: 900.0 })
        .crash_rate(6.0)
        .unstable();
    testing::workload(id, &format!("w{id}"), spec)
}

pub(crate) fn ident(pod: u64, workload: u32, ordinal: u32) -> PodIdentity {
    PodIdentity {
        pod: PodId(pod),
        slot: PodSlot {
            workload: WorkloadId(workload),
            ordinal,
        },
        incarnation: 0,
    }
}

/// A pending pod of the run, as the player creates it (plus a uid).
pub(crate) fn pod(ident: &PodIdentity, w: &Workload) -> core::Pod {
    let mut p = objects::pod_object(RUN, RUN, ident, w, 7);
    p.metadata.uid = Some(format!("uid-{}", ident.pod.0));
    p
}

fn now_meta() -> MetaTime {
    MetaTime(jiff::Timestamp::UNIX_EPOCH)
}

fn condition(type_: &str, status: &str, reason: Option<&str>, message: Option<String>) -> core::PodCondition {
    core::PodCondition {
        type_: type_.to_string(),
        status: status.to_string(),
        reason: reason.map(str::to_string),
        message,
        last_transition_time: Some(now_meta()),
        ..Default::default()
    }
}

fn set_condition(pod: &mut core::Pod, c: core::PodCondition) {
    let status = pod.status.get_or_insert_with(Default::default);
    let conditions = status.conditions.get_or_insert_with(Vec::new);
    conditions.retain(|x| x.type_ != c.type_);
    conditions.push(c);
}

/// PodScheduled=False with `reason`, as a scheduler writes it.
pub(crate) fn not_scheduled(pod: &mut core::Pod, reason: &str, message: &str) {
    set_condition(
        pod,
        condition("PodScheduled", "False", Some(reason), Some(message.to_string())),
    );
}

/// The binding, as the API server applies it.
pub(crate) fn bind(pod: &mut core::Pod, node_name: &str) {
    if let Some(spec) = pod.spec.as_mut() {
        spec.node_name = Some(node_name.to_string());
    }
    set_condition(pod, condition("PodScheduled", "True", None, None));
}

/// One container's termination record.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Exit {
    pub(crate) id: String,
    /// None: lost with its node (kubelet's ContainerStatusUnknown)
    pub(crate) reason: Option<ExitReason>,
    pub(crate) cause: Option<OomCause>,
}

impl Exit {
    pub(crate) fn new(id: &str, reason: ExitReason, cause: Option<OomCause>) -> Exit {
        Exit {
            id: id.to_string(),
            reason: Some(reason),
            cause,
        }
    }
}

pub(crate) fn terminated(exit: &Exit) -> core::ContainerStateTerminated {
    let (reason, code) = match exit.reason {
        Some(ExitReason::Completed) => ("Completed", 0),
        Some(ExitReason::Error) => ("Error", 1),
        Some(ExitReason::OOMKilled) => ("OOMKilled", 137),
        None => ("ContainerStatusUnknown", 137),
    };
    core::ContainerStateTerminated {
        container_id: Some(exit.id.clone()),
        exit_code: code,
        reason: Some(reason.to_string()),
        message: exit.cause.map(|c| {
            match c {
                OomCause::Limit => labels::OOM_LIMIT_MESSAGE,
                OomCause::NodePressure => labels::OOM_NODE_PRESSURE_MESSAGE,
            }
            .to_string()
        }),
        ..Default::default()
    }
}

/// What the emulator writes for a pod's container.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shown {
    Creating,
    Running { id: String, usage: Resources },
    BackOff { id: String },
    Terminated(Exit),
}

/// Writes a pod status: phase, Usage condition, the container's state and
/// last termination record, restartCount.
pub(crate) fn write_status(
    pod: &mut core::Pod,
    phase: &str,
    reason: Option<&str>,
    shown: &Shown,
    restart_count: u32,
    last: Option<&Exit>,
) {
    let (state, id, usage) = match shown {
        Shown::Creating => (
            core::ContainerState {
                waiting: Some(core::ContainerStateWaiting {
                    reason: Some("ContainerCreating".into()),
                    message: None,
                }),
                ..Default::default()
            },
            None,
            None,
        ),
        Shown::Running { id, usage } => (
            core::ContainerState {
                running: Some(core::ContainerStateRunning {
                    started_at: Some(now_meta()),
                }),
                ..Default::default()
            },
            Some(id.clone()),
            Some(*usage),
        ),
        Shown::BackOff { id } => (
            core::ContainerState {
                waiting: Some(core::ContainerStateWaiting {
                    reason: Some("CrashLoopBackOff".into()),
                    message: None,
                }),
                ..Default::default()
            },
            Some(id.clone()),
            None,
        ),
        Shown::Terminated(exit) => (
            core::ContainerState {
                terminated: Some(terminated(exit)),
                ..Default::default()
            },
            Some(exit.id.clone()),
            None,
        ),
    };
    let running = matches!(shown, Shown::Running { .. });
    {
        let status = pod.status.get_or_insert_with(Default::default);
        status.phase = Some(phase.to_string());
        status.reason = reason.map(str::to_string);
        status.host_ip = Some("127.0.0.1".into());
        status.container_statuses = Some(vec![core::ContainerStatus {
            name: CONTAINER.to_string(),
            container_id: id,
            image: objects::EMULATED_IMAGE.to_string(),
            image_id: String::new(),
            ready: running,
            restart_count: i32::try_from(restart_count).unwrap_or(i32::MAX),
            started: Some(running),
            state: Some(state),
            last_state: last.map(|e| core::ContainerState {
                terminated: Some(terminated(e)),
                ..Default::default()
            }),
            ..Default::default()
        }]);
    }
    set_condition(
        pod,
        condition("Ready", if running { "True" } else { "False" }, None, None),
    );
    match usage {
        Some(u) => set_condition(
            pod,
            condition(labels::USAGE_CONDITION, "True", None, Some(objects::format_usage(u))),
        ),
        None => set_condition(pod, condition(labels::USAGE_CONDITION, "False", None, None)),
    }
}

/// How the stand-in writes a pod whose node went down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NodeDownStyle {
    /// nothing: no kubelet is left to write (the status goes stale)
    Silent,
    /// the container is shown waiting (reason NodeNotReady), its usage gone
    Waiting,
    /// as Waiting, with a termination record of kubelet's
    /// ContainerStatusUnknown for the container that was running
    Unknown,
}

/// A stand-in for the node emulator: one pod's lifecycle, driven like the
/// simulator drives it, with the pod's status written after every step.
pub(crate) struct Kubelet {
    spec: PodSpec,
    config: ModelConfig,
    pub(crate) lc: PodLifecycle,
    timers: Vec<TimerRequest>,
    pub(crate) now: Time,
    uid: String,
    seed: u64,
    started: u32,
    running: bool,
    last: Option<Exit>,
    before_last: Option<Exit>,
    style: NodeDownStyle,
    /// every event the lifecycle emitted, in order, with PodBound first
    pub(crate) events: Vec<EventKind>,
}

impl Kubelet {
    /// Binds `pod` to `node` (named `node_name`) and starts its lifecycle.
    pub(crate) fn bind(pod: &mut core::Pod, node: NodeId, node_name: &str, style: NodeDownStyle) -> Kubelet {
        Kubelet::bind_with(pod, node, node_name, style, ModelConfig::default())
    }

    pub(crate) fn bind_with(
        pod: &mut core::Pod,
        node: NodeId,
        node_name: &str,
        style: NodeDownStyle,
        config: ModelConfig,
    ) -> Kubelet {
        let ident = objects::pod_identity_of(pod).unwrap_or_else(|| ident(0, 0, 0));
        let spec = objects::pod_spec_of(pod).unwrap_or_else(|e| panic!("pod spec: {e}"));
        let seed = objects::pod_seed_of(pod).unwrap_or(0);
        let mut out = Effects::default();
        let lc = PodLifecycle::bind(
            PodIdent {
                pod: ident.pod,
                slot: ident.slot,
                incarnation: ident.incarnation,
            },
            node,
            NodeHealth::HEALTHY,
            Time::ZERO,
            &PodContext {
                spec: &spec,
                config: &config,
                seed,
            },
            &mut out,
        );
        bind(pod, node_name);
        let mut k = Kubelet {
            spec,
            config,
            lc,
            timers: Vec::new(),
            now: Time::ZERO,
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            seed,
            started: 0,
            running: false,
            last: None,
            before_last: None,
            style,
            events: vec![EventKind::PodBound { pod: ident.pod, node }],
        };
        k.absorb(out, pod);
        k
    }

    fn absorb(&mut self, out: Effects, pod: &mut core::Pod) {
        for e in &out.events {
            match e {
                EventKind::ContainerStarted { .. } => {
                    self.started += 1;
                    self.running = true;
                }
                EventKind::ContainerExited { reason, oom_cause, .. } => {
                    self.running = false;
                    let exit = Exit::new(&self.container_id(), *reason, *oom_cause);
                    self.before_last = self.last.replace(exit);
                }
                _ => {}
            }
        }
        self.events.extend(out.events);
        self.timers.extend(out.timers);
        // the next timer last; ties keep their request order
        self.timers.sort_by_key(|t| std::cmp::Reverse(t.at));
        self.write(pod);
    }

    fn container_id(&self) -> String {
        format!("emulated://{}/{}", self.uid, self.started)
    }

    /// Feeds `input` at the current time.
    pub(crate) fn input(&mut self, input: Input, pod: &mut core::Pod) {
        let mut out = Effects::default();
        let ctx = PodContext {
            spec: &self.spec,
            config: &self.config,
            seed: self.seed,
        };
        self.lc.handle(input, self.now, &ctx, &mut out);
        self.absorb(out, pod);
    }

    /// The node's health changed.
    pub(crate) fn node(&mut self, health: NodeHealth, pod: &mut core::Pod) {
        self.input(Input::NodeChanged(health), pod);
    }

    /// Fires the next timer due by `until`; false when there is none.
    pub(crate) fn next_timer(&mut self, until: Time, pod: &mut core::Pod) -> bool {
        let Some(t) = self.timers.last().copied() else {
            return false;
        };
        if t.at > until {
            return false;
        }
        self.timers.pop();
        self.now = self.now.max(t.at);
        self.input(
            Input::Timer {
                kind: t.kind,
                generation: t.generation,
            },
            pod,
        );
        true
    }

    fn write(&mut self, pod: &mut core::Pod) {
        let restarts = self.lc.restart_count();
        match self.lc.phase() {
            PodPhase::Starting => write_status(pod, "Pending", None, &Shown::Creating, 0, None),
            PodPhase::Running => {
                let shown = Shown::Running {
                    id: self.container_id(),
                    usage: self.lc.usage(),
                };
                write_status(pod, "Running", None, &shown, restarts, self.last.as_ref());
            }
            PodPhase::BackOff => {
                let shown = Shown::BackOff {
                    id: self.container_id(),
                };
                write_status(pod, "Running", None, &shown, restarts, self.last.as_ref());
            }
            PodPhase::NodeDown => {
                if self.style == NodeDownStyle::Silent {
                    self.running = false;
                    return;
                }
                if self.style == NodeDownStyle::Unknown && self.running {
                    let lost = Exit {
                        id: self.container_id(),
                        reason: None,
                        cause: None,
                    };
                    self.before_last = self.last.replace(lost);
                }
                self.running = false;
                let shown = if self.started == 0 {
                    Shown::Creating
                } else {
                    Shown::BackOff {
                        id: self.container_id(),
                    }
                };
                write_status(pod, "Running", None, &shown, restarts, self.last.as_ref());
                if let Some(w) = pod
                    .status
                    .as_mut()
                    .and_then(|s| s.container_statuses.as_mut())
                    .and_then(|c| c.first_mut())
                    .and_then(|c| c.state.as_mut())
                    .and_then(|s| s.waiting.as_mut())
                {
                    // not CrashLoopBackOff: the container did not exit, its node went away
                    w.reason = Some("NodeNotReady".into());
                }
            }
            PodPhase::Ended(end @ (PodEnd::Succeeded | PodEnd::Failed)) => {
                // the exit that ended the pod is its state; the one before stays as lastState
                let exit = self
                    .last
                    .clone()
                    .unwrap_or_else(|| Exit::new(&self.container_id(), ExitReason::Error, None));
                let phase = if end == PodEnd::Succeeded {
                    "Succeeded"
                } else {
                    "Failed"
                };
                write_status(
                    pod,
                    phase,
                    None,
                    &Shown::Terminated(exit),
                    restarts,
                    self.before_last.as_ref(),
                );
            }
            PodPhase::Ended(PodEnd::Evicted) => {
                let status = pod.status.get_or_insert_with(Default::default);
                status.phase = Some("Failed".into());
                status.reason = Some(labels::EVICTED_REASON.into());
            }
            PodPhase::Ended(PodEnd::Deleted(_)) => {}
        }
    }
}
