//! The lifecycle of one bound pod: a pure state machine over explicit time.
//!
//! A driver (the simulator, or the node emulator on a real API server) feeds
//! it [`Input`]s with the current time and carries out the [`Effects`] it
//! returns: record the events, account the container's [`PodLifecycle::usage`]
//! on the node, and call back at each requested timer. A timer carries a
//! generation; the lifecycle ignores any timer that a later change replaced,
//! so drivers never need to cancel anything.
//!
//! Crashes: a container crashes when its accumulated crash hazard (base rate
//! × the node's [`NodeHealth::crash_factor`], integrated over its running
//! time) reaches a unit-exponential budget drawn at its start. While the rate
//! is constant that is an exponential time to crash; when the node's health
//! changes the remaining budget is spent at the new rate. Because the
//! exponential is memoryless this is the same in distribution as redrawing
//! the remaining time at the new rate, but it draws nothing, so arms that see
//! the same health history see the same crash times (common random numbers).
//!
//! A hazard may also grow with the container's age
//! (`crash_rate_growth_per_hour`, a wear-out process: the rate at age `a`
//! hours is the base rate × `(1 + g·a)`); the budget is then spent along
//! that line, and the time to crash solves the quadratic it gives.

use super::backoff::CrashBackOff;
use super::config::ModelConfig;
use super::draw::draw_container;
use super::eviction::unreachable_eviction_delay;
use super::health::NodeHealth;
use crate::node::NodeId;
use crate::pod::{PodId, PodSlot, PodSpec, RestartPolicy};
use crate::record::{DeleteCause, EventKind, ExitReason, OomCause};
use crate::resources::Resources;
use crate::time::{Span, Time};

/// Crash timers further out than this (about 31,700 years) are never set.
const CRASH_HORIZON_MS: f64 = 1e15;
/// A leak without a memory limit stops growing here (1 PiB): far past any
/// node, whose OOM killer acts long before.
const MEMORY_CAP_BYTES: u64 = 1 << 50;

fn growth_step(config: &ModelConfig) -> Span {
    Span::from_secs_f64(config.memory_growth_step_seconds).max(Span(1))
}

/// What a timer is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TimerKind {
    /// the first container start after the bind
    Start,
    /// the container completes successfully
    Complete,
    /// the container crashes
    Crash,
    /// the container passed its memory limit
    OomLimit,
    /// CrashLoopBackOff is over: start the container again
    Restart,
    /// the pod's toleration of its unreachable node ran out
    Evict,
    /// a growing container's memory use is due for an update
    Grow,
}

impl TimerKind {
    const COUNT: usize = 7;

    fn index(self) -> usize {
        match self {
            TimerKind::Start => 0,
            TimerKind::Complete => 1,
            TimerKind::Crash => 2,
            TimerKind::OomLimit => 3,
            TimerKind::Restart => 4,
            TimerKind::Evict => 5,
            TimerKind::Grow => 6,
        }
    }
}

/// "Call [`PodLifecycle::handle`] with `Input::Timer { kind, generation }` at
/// `at`."
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimerRequest {
    pub at: Time,
    pub kind: TimerKind,
    pub generation: u64,
}

/// Something that happens to a bound pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// a requested timer is due (stale ones are ignored)
    Timer { kind: TimerKind, generation: u64 },
    /// the node's condition or memory pressure changed
    NodeChanged(NodeHealth),
    /// a fault kills the running container: it exits with an error
    Kill,
    /// the node's OOM killer chose the running container
    OomKill,
    /// the pod is evicted at once: its node left the cluster
    Evict,
    /// the pod is deleted
    Delete(DeleteCause),
}

/// How a pod's life ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PodEnd {
    Succeeded,
    Failed,
    Evicted,
    Deleted(DeleteCause),
}

/// Where a bound pod is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodPhase {
    /// bound, its first container not started yet
    Starting,
    Running,
    /// its container exited and waits out CrashLoopBackOff
    BackOff,
    /// its node is NotReady: the container is stopped
    NodeDown,
    Ended(PodEnd),
}

/// What one step of the state machine asks its driver to do.
#[derive(Debug, Default)]
pub struct Effects {
    /// events to record, in order, at the step's time
    pub events: Vec<EventKind>,
    pub timers: Vec<TimerRequest>,
}

impl Effects {
    pub fn clear(&mut self) {
        self.events.clear();
        self.timers.clear();
    }
}

/// What every step needs besides the pod's own state; the driver owns it.
#[derive(Debug, Clone, Copy)]
pub struct PodContext<'a> {
    pub spec: &'a PodSpec,
    pub config: &'a ModelConfig,
    /// the run's seed
    pub seed: u64,
}

/// Who a pod is: its id, its slot, and which of the slot's pods it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PodIdent {
    pub pod: PodId,
    pub slot: PodSlot,
    /// pods the owner created for the slot before this one
    pub incarnation: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct Run {
    started: Time,
    /// memory use at the start, and its growth in bytes per millisecond
    memory_start: u64,
    memory_growth_per_ms: f64,
    /// what is left of the crash budget at `budget_at`
    budget: f64,
    budget_at: Time,
    /// crash hazard per millisecond since `budget_at`, at age zero
    rate_per_ms: f64,
    /// the hazard's growth with age: a fraction of `rate_per_ms` per millisecond run
    growth_per_ms: f64,
}

impl Run {
    /// The crash hazard accumulated from `budget_at` to `now`.
    fn spent(&self, now: Time) -> f64 {
        let elapsed = now.since(self.budget_at).as_millis() as f64;
        if self.growth_per_ms == 0.0 {
            return self.rate_per_ms * elapsed;
        }
        let from = self.budget_at.since(self.started).as_millis() as f64;
        let to = from + elapsed;
        self.rate_per_ms * (elapsed + self.growth_per_ms * (to * to - from * from) / 2.0)
    }

    /// Milliseconds from `budget_at` until the budget is spent (infinite at rate zero).
    fn until_crash(&self) -> f64 {
        if self.rate_per_ms <= 0.0 {
            return f64::INFINITY;
        }
        if self.growth_per_ms == 0.0 {
            return self.budget / self.rate_per_ms;
        }
        // rate·(d + g·((a + d)² − a²)/2) = budget, as 2·budget / (b + √(b² + 4·c·budget))
        let age = self.budget_at.since(self.started).as_millis() as f64;
        let b = self.rate_per_ms * (1.0 + self.growth_per_ms * age);
        let c = self.rate_per_ms * self.growth_per_ms / 2.0;
        2.0 * self.budget / (b + (b * b + 4.0 * c * self.budget).sqrt())
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    Starting,
    Running(Run),
    BackOff,
    NodeDown,
    Ended(PodEnd),
}

/// The state of one bound pod.
#[derive(Debug, Clone, PartialEq)]
pub struct PodLifecycle {
    ident: PodIdent,
    node: NodeId,
    health: NodeHealth,
    phase: Phase,
    /// container starts so far; the next start's number and restart count
    starts: u32,
    backoff: CrashBackOff,
    /// the live generation of each timer kind; 0: none pending
    timers: [u64; TimerKind::COUNT],
    next_generation: u64,
    usage: Resources,
}

impl PodLifecycle {
    /// A pod just bound to `node`, whose health is `health`.
    pub fn bind(
        ident: PodIdent,
        node: NodeId,
        health: NodeHealth,
        now: Time,
        ctx: &PodContext<'_>,
        out: &mut Effects,
    ) -> PodLifecycle {
        let mut lc = PodLifecycle {
            ident,
            node,
            health,
            phase: Phase::Starting,
            starts: 0,
            backoff: CrashBackOff::new(),
            timers: [0; TimerKind::COUNT],
            next_generation: 1,
            usage: Resources::ZERO,
        };
        if health.is_ready() {
            let delay = Span::from_secs_f64(ctx.config.container_start_seconds);
            lc.set_timer(TimerKind::Start, now + delay, out);
        } else {
            lc.node_down(now, ctx, out);
        }
        lc
    }

    pub fn ident(&self) -> PodIdent {
        self.ident
    }
    pub fn node(&self) -> NodeId {
        self.node
    }
    /// The running container's usage (zero when none runs).
    pub fn usage(&self) -> Resources {
        self.usage
    }
    pub fn is_running(&self) -> bool {
        matches!(self.phase, Phase::Running(_))
    }
    /// Restarts so far (container starts after the first).
    pub fn restart_count(&self) -> u32 {
        self.starts.saturating_sub(1)
    }
    pub fn ended(&self) -> Option<PodEnd> {
        match self.phase {
            Phase::Ended(end) => Some(end),
            _ => None,
        }
    }
    pub fn phase(&self) -> PodPhase {
        match self.phase {
            Phase::Starting => PodPhase::Starting,
            Phase::Running(_) => PodPhase::Running,
            Phase::BackOff => PodPhase::BackOff,
            Phase::NodeDown => PodPhase::NodeDown,
            Phase::Ended(end) => PodPhase::Ended(end),
        }
    }

    /// Applies `input` at `now`. Inputs that do not apply (a stale timer, a
    /// kill while no container runs, anything after the end) change nothing.
    pub fn handle(&mut self, input: Input, now: Time, ctx: &PodContext<'_>, out: &mut Effects) {
        if self.ended().is_some() {
            return;
        }
        match input {
            Input::Timer { kind, generation } => {
                if self.take_timer(kind, generation) {
                    self.on_timer(kind, now, ctx, out);
                }
            }
            Input::NodeChanged(health) => self.node_changed(health, now, ctx, out),
            Input::Kill => self.exit(ExitReason::Error, None, now, ctx, out),
            Input::OomKill => self.exit(ExitReason::OOMKilled, Some(OomCause::NodePressure), now, ctx, out),
            Input::Evict => self.evict(out),
            Input::Delete(cause) => {
                self.stop_all();
                out.events.push(EventKind::PodDeleted {
                    pod: self.ident.pod,
                    node: Some(self.node),
                    cause,
                });
                self.phase = Phase::Ended(PodEnd::Deleted(cause));
            }
        }
    }

    fn on_timer(&mut self, kind: TimerKind, now: Time, ctx: &PodContext<'_>, out: &mut Effects) {
        match (kind, self.phase) {
            (TimerKind::Start, Phase::Starting) | (TimerKind::Restart, Phase::BackOff) => {
                self.start_container(now, ctx, out)
            }
            (TimerKind::Complete, Phase::Running(_)) => self.exit(ExitReason::Completed, None, now, ctx, out),
            (TimerKind::Crash, Phase::Running(_)) => self.exit(ExitReason::Error, None, now, ctx, out),
            (TimerKind::OomLimit, Phase::Running(_)) => {
                self.exit(ExitReason::OOMKilled, Some(OomCause::Limit), now, ctx, out)
            }
            (TimerKind::Evict, Phase::NodeDown) => self.evict(out),
            (TimerKind::Grow, Phase::Running(run)) => self.grow(run, now, ctx, out),
            // every phase change cancels the timers it outdates
            _ => {}
        }
    }

    fn start_container(&mut self, now: Time, ctx: &PodContext<'_>, out: &mut Effects) {
        let draw = draw_container(
            ctx.seed,
            self.ident.slot,
            self.ident.incarnation,
            self.starts,
            ctx.spec,
            ctx.config,
        );
        let restart_count = self.starts;
        self.starts = self.starts.saturating_add(1);
        self.usage = draw.usage;
        out.events.push(EventKind::ContainerStarted {
            pod: self.ident.pod,
            node: self.node,
            restart_count,
            usage: draw.usage,
        });
        if let Some(run) = draw.run_time {
            self.set_timer(TimerKind::Complete, now + run, out);
        }
        if draw.exceeds_memory_limit(ctx.spec) {
            self.set_timer(TimerKind::OomLimit, now + draw.oom_delay, out);
        } else if draw.memory_growth_per_ms > 0.0 {
            if let Some(after) = leak_reaches_limit(&draw, ctx.spec) {
                self.set_timer(TimerKind::OomLimit, now + after, out);
            }
            self.set_timer(TimerKind::Grow, now + growth_step(ctx.config), out);
        }
        self.phase = Phase::Running(Run {
            started: now,
            memory_start: draw.usage.memory_bytes,
            memory_growth_per_ms: draw.memory_growth_per_ms,
            budget: draw.crash_budget,
            budget_at: now,
            rate_per_ms: crash_rate_per_ms(ctx.spec, self.health, ctx.config),
            growth_per_ms: crash_growth_per_ms(ctx.spec),
        });
        self.schedule_crash(now, out);
    }

    fn exit(
        &mut self,
        reason: ExitReason,
        oom_cause: Option<OomCause>,
        now: Time,
        ctx: &PodContext<'_>,
        out: &mut Effects,
    ) {
        let Phase::Running(run) = self.phase else {
            return;
        };
        self.cancel(TimerKind::Complete);
        self.cancel(TimerKind::Crash);
        self.cancel(TimerKind::OomLimit);
        self.cancel(TimerKind::Grow);
        self.usage = Resources::ZERO;
        out.events.push(EventKind::ContainerExited {
            pod: self.ident.pod,
            node: self.node,
            reason,
            oom_cause,
        });
        let succeeded = reason == ExitReason::Completed;
        let restart = match ctx.spec.restart_policy {
            // kubelet restarts even a completed container under Always
            RestartPolicy::Always => true,
            RestartPolicy::OnFailure => !succeeded,
            RestartPolicy::Never => false,
        };
        if restart {
            let delay = self.backoff.on_exit(now.since(run.started), ctx.config);
            self.phase = Phase::BackOff;
            self.set_timer(TimerKind::Restart, now + delay, out);
        } else if succeeded {
            out.events.push(EventKind::PodSucceeded {
                pod: self.ident.pod,
                node: self.node,
            });
            self.phase = Phase::Ended(PodEnd::Succeeded);
        } else {
            out.events.push(EventKind::PodFailed {
                pod: self.ident.pod,
                node: self.node,
            });
            self.phase = Phase::Ended(PodEnd::Failed);
        }
    }

    /// A leaking container's memory use now: its start value plus the
    /// growth since, capped at its limit (reaching it kills the container at
    /// its own timer).
    fn grow(&mut self, run: Run, now: Time, ctx: &PodContext<'_>, out: &mut Effects) {
        let grown = run.memory_growth_per_ms * now.since(run.started).as_millis() as f64;
        let cap = ctx.spec.memory_limit().unwrap_or(MEMORY_CAP_BYTES);
        let memory = (run.memory_start as f64 + grown).min(cap as f64) as u64;
        self.usage.memory_bytes = memory;
        if self.usage.memory_bytes < cap {
            self.set_timer(TimerKind::Grow, now + growth_step(ctx.config), out);
        }
    }

    fn evict(&mut self, out: &mut Effects) {
        self.stop_all();
        out.events.push(EventKind::PodEvicted {
            pod: self.ident.pod,
            node: self.node,
        });
        self.phase = Phase::Ended(PodEnd::Evicted);
    }

    fn node_changed(&mut self, health: NodeHealth, now: Time, ctx: &PodContext<'_>, out: &mut Effects) {
        let was_ready = self.health.is_ready();
        self.health = health;
        match (was_ready, health.is_ready()) {
            (true, false) => self.node_down(now, ctx, out),
            (false, true) => {
                self.cancel(TimerKind::Evict);
                if self.phase == Phase::NodeDown {
                    // the kubelet is back and starts the stopped container
                    self.start_container(now, ctx, out);
                }
            }
            (true, true) => {
                let rate = crash_rate_per_ms(ctx.spec, health, ctx.config);
                if let Phase::Running(run) = &mut self.phase
                    && run.rate_per_ms != rate
                {
                    run.budget = (run.budget - run.spent(now)).max(0.0);
                    run.budget_at = now;
                    run.rate_per_ms = rate;
                    self.schedule_crash(now, out);
                }
            }
            (false, false) => {}
        }
    }

    /// The node stopped reporting: the container stops without an event (no
    /// kubelet is left to report one) and the eviction clock starts.
    fn node_down(&mut self, now: Time, ctx: &PodContext<'_>, out: &mut Effects) {
        self.stop_all();
        self.phase = Phase::NodeDown;
        if let Some(delay) = unreachable_eviction_delay(&ctx.spec.tolerations, ctx.config.default_toleration_seconds) {
            self.set_timer(TimerKind::Evict, now + delay, out);
        }
    }

    fn schedule_crash(&mut self, now: Time, out: &mut Effects) {
        let Phase::Running(run) = self.phase else {
            return;
        };
        let ms = run.until_crash().ceil();
        if ms < CRASH_HORIZON_MS {
            self.set_timer(TimerKind::Crash, now + Span(ms as u64), out);
        } else {
            self.cancel(TimerKind::Crash);
        }
    }

    fn stop_all(&mut self) {
        self.timers = [0; TimerKind::COUNT];
        self.usage = Resources::ZERO;
    }

    fn set_timer(&mut self, kind: TimerKind, at: Time, out: &mut Effects) {
        let generation = self.next_generation;
        self.next_generation += 1;
        self.timers[kind.index()] = generation;
        out.timers.push(TimerRequest { at, kind, generation });
    }

    fn cancel(&mut self, kind: TimerKind) {
        self.timers[kind.index()] = 0;
    }

    /// Whether the timer is live; a live timer fires once.
    fn take_timer(&mut self, kind: TimerKind, generation: u64) -> bool {
        let slot = &mut self.timers[kind.index()];
        if generation != 0 && *slot == generation {
            *slot = 0;
            true
        } else {
            false
        }
    }
}

/// The crash hazard per millisecond of `spec`'s container on a node of `health`.
fn crash_rate_per_ms(spec: &PodSpec, health: NodeHealth, config: &ModelConfig) -> f64 {
    let base = spec.behaviour.crash_rate_per_hour;
    if !(base.is_finite() && base > 0.0) {
        return 0.0;
    }
    let rate = base * health.crash_factor(config) / 3_600_000.0;
    if rate.is_finite() { rate } else { 0.0 }
}

/// The time from a container's start to the moment its leak
/// (`memory_growth_per_hour`) reaches its memory limit, when the kernel
/// kills it, exactly as the lifecycle schedules it (also for drivers that
/// play one container by themselves: the workload image). None: no limit,
/// no leak, a start already past the limit (that is `oom_delay`'s), or not
/// within the horizon.
pub fn leak_reaches_limit(draw: &super::draw::ContainerDraw, spec: &PodSpec) -> Option<Span> {
    let limit = spec.memory_limit()?;
    if draw.memory_growth_per_ms <= 0.0 || draw.exceeds_memory_limit(spec) {
        return None;
    }
    let ms = (limit.saturating_sub(draw.memory_demand) as f64 / draw.memory_growth_per_ms).ceil();
    (ms < CRASH_HORIZON_MS).then_some(Span(ms as u64))
}

/// The time from a container's start to its crash on a healthy node whose
/// health never changes, exactly as the lifecycle schedules it: for drivers
/// that play one container by themselves (the workload image). None: no
/// crash within the horizon.
pub fn crash_after_start(spec: &PodSpec, budget: f64) -> Option<Span> {
    let run = Run {
        started: Time::ZERO,
        memory_start: 0,
        memory_growth_per_ms: 0.0,
        budget,
        budget_at: Time::ZERO,
        rate_per_ms: crash_rate_per_ms(spec, NodeHealth::HEALTHY, &ModelConfig::default()),
        growth_per_ms: crash_growth_per_ms(spec),
    };
    let ms = run.until_crash().ceil();
    (ms < CRASH_HORIZON_MS).then_some(Span(ms as u64))
}

/// How fast `spec`'s crash hazard grows with its container's age, per millisecond.
fn crash_growth_per_ms(spec: &PodSpec) -> f64 {
    let g = spec.behaviour.crash_rate_growth_per_hour;
    if g.is_finite() && g > 0.0 { g / 3_600_000.0 } else { 0.0 }
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
