use super::*;
use crate::dist::Dist;
use crate::node::{NodeCondition, TaintEffect};
use crate::pod::{Toleration, TolerationOperator, WorkloadId};

use crate::testing::{MI, PodSpecChanges, pod};

fn spec() -> PodSpec {
    pod(100, 100 * MI).usage(
        Dist::Const { value: 150.0 },
        Dist::Const {
            value: (80 * MI) as f64,
        },
    )
}

fn secs(s: f64) -> Time {
    Time::from_secs_f64(s)
}

/// Plays one lifecycle the way a driver does: timers in time order (ties in
/// request order), inputs at given times.
struct Driver {
    spec: PodSpec,
    config: ModelConfig,
    seed: u64,
    lc: PodLifecycle,
    timers: Vec<TimerRequest>,
    log: Vec<(Time, EventKind)>,
}

impl Driver {
    fn bind(spec: PodSpec, ordinal: u32, health: NodeHealth) -> Driver {
        Driver::bind_with(spec, ordinal, health, ModelConfig::default())
    }

    fn bind_with(spec: PodSpec, ordinal: u32, health: NodeHealth, config: ModelConfig) -> Driver {
        let ident = PodIdent {
            pod: PodId(u64::from(ordinal) + 1000),
            slot: PodSlot {
                workload: WorkloadId(0),
                ordinal,
            },
            incarnation: 0,
        };
        let mut out = Effects::default();
        let ctx = PodContext {
            spec: &spec,
            config: &config,
            seed: 42,
        };
        let lc = PodLifecycle::bind(ident, NodeId(0), health, Time::ZERO, &ctx, &mut out);
        let mut d = Driver {
            lc,
            timers: Vec::new(),
            log: Vec::new(),
            spec: spec.clone(),
            config: config.clone(),
            seed: 42,
        };
        d.absorb(Time::ZERO, out);
        d
    }

    fn absorb(&mut self, now: Time, out: Effects) {
        self.log.extend(out.events.into_iter().map(|e| (now, e)));
        self.timers.extend(out.timers);
    }

    fn feed(&mut self, input: Input, now: Time) {
        let mut out = Effects::default();
        let ctx = PodContext {
            spec: &self.spec,
            config: &self.config,
            seed: self.seed,
        };
        self.lc.handle(input, now, &ctx, &mut out);
        self.absorb(now, out);
    }

    /// Fires the earliest timer due by `until`; false when there is none.
    fn step(&mut self, until: Time) -> bool {
        let Some(i) = (0..self.timers.len())
            .filter(|&i| self.timers[i].at <= until)
            .min_by_key(|&i| (self.timers[i].at, i))
        else {
            return false;
        };
        let t = self.timers.remove(i);
        self.feed(
            Input::Timer {
                kind: t.kind,
                generation: t.generation,
            },
            t.at,
        );
        true
    }

    fn run_until(&mut self, until: Time) {
        while self.step(until) {}
    }

    fn input(&mut self, at: Time, input: Input) {
        self.run_until(at);
        self.feed(input, at);
    }

    fn starts(&self) -> Vec<(Time, u32)> {
        self.log
            .iter()
            .filter_map(|(t, e)| match e {
                EventKind::ContainerStarted { restart_count, .. } => Some((*t, *restart_count)),
                _ => None,
            })
            .collect()
    }

    fn exits(&self) -> Vec<(Time, ExitReason, Option<OomCause>)> {
        self.log
            .iter()
            .filter_map(|(t, e)| match e {
                EventKind::ContainerExited { reason, oom_cause, .. } => Some((*t, *reason, *oom_cause)),
                _ => None,
            })
            .collect()
    }

    fn first_crash_after_start(&mut self) -> f64 {
        while self.exits().is_empty() {
            assert!(self.step(Time(u64::MAX)), "no crash coming");
        }
        let start = self.starts()[0].0;
        let exit = self.exits()[0];
        assert_eq!(exit.1, ExitReason::Error);
        exit.0.since(start).as_secs_f64()
    }
}

fn degraded(memory_pressure: bool) -> NodeHealth {
    NodeHealth {
        condition: NodeCondition::Degraded,
        memory_pressure,
    }
}

#[test]
fn starts_after_the_start_delay_with_the_drawn_usage() {
    let mut d = Driver::bind(spec(), 0, NodeHealth::HEALTHY);
    assert_eq!(d.lc.phase(), PodPhase::Starting);
    d.run_until(secs(0.999));
    assert!(d.starts().is_empty());
    d.run_until(secs(3600.0));
    assert_eq!(d.starts(), vec![(secs(1.0), 0)]);
    assert_eq!(d.lc.usage(), Resources::new(150, 80 * MI));
    assert!(d.lc.is_running());
}

#[test]
fn kills_restart_with_doubling_backoff_that_resets_after_ten_minutes() {
    let mut d = Driver::bind(spec(), 0, NodeHealth::HEALTHY);
    // killed one second after every start
    for _ in 0..7 {
        d.run_until(d.timers.iter().map(|t| t.at).max().unwrap_or(Time::ZERO));
        let (started, _) = *d.starts().last().unwrap();
        d.input(started + Span::from_secs(1), Input::Kill);
    }
    d.run_until(secs(10_000.0));
    let starts = d.starts();
    let gaps: Vec<u64> = d
        .exits()
        .iter()
        .zip(&starts[1..])
        .map(|(exit, start)| start.0.since(exit.0).as_millis() / 1000)
        .collect();
    assert_eq!(gaps, [10, 20, 40, 80, 160, 300, 300]);
    assert_eq!(
        starts.iter().map(|s| s.1).collect::<Vec<_>>(),
        (0..8).collect::<Vec<_>>()
    );
    assert_eq!(d.lc.restart_count(), 7);
    // ten trouble-free minutes later a kill restarts after 10 s again
    let (last_start, _) = *starts.last().unwrap();
    d.input(last_start + Span::from_secs(600), Input::Kill);
    d.run_until(last_start + Span::from_secs(700));
    assert_eq!(d.starts().last().unwrap().0, last_start + Span::from_secs(610));
}

#[test]
fn memory_over_the_limit_oom_kills_in_a_crash_loop() {
    let mut s = spec();
    s.limits = Some(Resources::new(0, 60 * MI));
    let mut d = Driver::bind(s, 0, NodeHealth::HEALTHY);
    d.run_until(secs(3600.0));
    let exits = d.exits();
    assert!(exits.len() >= 8, "{exits:?}");
    assert!(
        exits
            .iter()
            .all(|e| e.1 == ExitReason::OOMKilled && e.2 == Some(OomCause::Limit))
    );
    // usage is held at the limit while the container lives
    assert_eq!(d.starts().len(), exits.len() + usize::from(d.lc.is_running()));
    let gaps: Vec<u64> = exits
        .iter()
        .zip(&d.starts()[1..])
        .map(|(exit, start)| start.0.since(exit.0).as_millis() / 1000)
        .take(7)
        .collect();
    assert_eq!(gaps, [10, 20, 40, 80, 160, 300, 300]);
}

#[test]
fn usage_is_capped_at_the_memory_limit() {
    let mut s = spec();
    s.limits = Some(Resources::new(100, 60 * MI));
    let mut d = Driver::bind(s, 0, NodeHealth::HEALTHY);
    d.run_until(secs(1.0));
    assert_eq!(d.lc.usage(), Resources::new(100, 60 * MI));
}

fn outcome(policy: RestartPolicy, complete: bool) -> Driver {
    let mut s = spec();
    s.restart_policy = policy;
    if complete {
        s.behaviour.run_seconds = Some(Dist::Const { value: 5.0 });
    }
    let mut d = Driver::bind(s, 0, NodeHealth::HEALTHY);
    if !complete {
        d.input(secs(3.0), Input::Kill);
    }
    d.run_until(secs(17.0));
    d
}

#[test]
fn restart_policies() {
    // Always restarts a completed container, 10 s after it completed at 6 s
    let d = outcome(RestartPolicy::Always, true);
    assert_eq!(d.exits(), vec![(secs(6.0), ExitReason::Completed, None)]);
    assert_eq!(d.starts(), vec![(secs(1.0), 0), (secs(16.0), 1)]);
    assert_eq!(d.lc.ended(), None);

    for policy in [RestartPolicy::OnFailure, RestartPolicy::Never] {
        let d = outcome(policy, true);
        assert_eq!(d.lc.ended(), Some(PodEnd::Succeeded), "{policy:?}");
        assert!(matches!(d.log.last(), Some((t, EventKind::PodSucceeded { .. })) if *t == secs(6.0)));
        assert_eq!(d.starts().len(), 1);
        assert_eq!(d.lc.usage(), Resources::ZERO);
    }

    let d = outcome(RestartPolicy::OnFailure, false);
    assert_eq!(d.starts(), vec![(secs(1.0), 0), (secs(13.0), 1)]);
    assert_eq!(d.lc.ended(), None);

    let d = outcome(RestartPolicy::Never, false);
    assert_eq!(d.exits(), vec![(secs(3.0), ExitReason::Error, None)]);
    assert_eq!(d.lc.ended(), Some(PodEnd::Failed));
    assert!(matches!(d.log.last(), Some((_, EventKind::PodFailed { .. }))));
}

#[test]
fn evicted_exactly_at_the_toleration_time() {
    let down = NodeHealth {
        condition: NodeCondition::NotReady,
        memory_pressure: false,
    };
    let mut d = Driver::bind(spec(), 0, NodeHealth::HEALTHY);
    d.input(secs(100.0), Input::NodeChanged(down));
    // the container stopped silently
    assert_eq!(d.lc.usage(), Resources::ZERO);
    assert_eq!(d.lc.phase(), PodPhase::NodeDown);
    assert_eq!(d.log.len(), 1);
    d.run_until(secs(399.999));
    assert_eq!(d.lc.ended(), None);
    d.run_until(secs(400.0));
    assert_eq!(d.lc.ended(), Some(PodEnd::Evicted));
    assert_eq!(
        d.log.last(),
        Some(&(
            secs(400.0),
            EventKind::PodEvicted {
                pod: PodId(1000),
                node: NodeId(0)
            }
        ))
    );

    // the pod's own toleration for the unreachable taint sets the time
    let mut s = spec();
    s.tolerations = vec![Toleration {
        key: "node.kubernetes.io/unreachable".into(),
        operator: TolerationOperator::Exists,
        value: None,
        effect: Some(TaintEffect::NoExecute),
        toleration_seconds: Some(30),
    }];
    let mut d = Driver::bind(s, 0, NodeHealth::HEALTHY);
    d.input(secs(100.0), Input::NodeChanged(down));
    d.run_until(secs(129.999));
    assert_eq!(d.lc.ended(), None);
    d.run_until(secs(130.0));
    assert_eq!(d.lc.ended(), Some(PodEnd::Evicted));
}

#[test]
fn not_evicted_when_the_node_recovers_in_time() {
    let down = NodeHealth {
        condition: NodeCondition::NotReady,
        memory_pressure: false,
    };
    let mut d = Driver::bind(spec(), 0, NodeHealth::HEALTHY);
    d.input(secs(100.0), Input::NodeChanged(down));
    d.input(secs(399.999), Input::NodeChanged(NodeHealth::HEALTHY));
    d.run_until(secs(5000.0));
    assert_eq!(d.lc.ended(), None);
    assert_eq!(d.starts(), vec![(secs(1.0), 0), (secs(399.999), 1)]);
    assert!(d.exits().is_empty());
    assert!(d.lc.is_running());
}

#[test]
fn bound_to_a_down_node_waits_and_starts_on_recovery() {
    let down = NodeHealth {
        condition: NodeCondition::NotReady,
        memory_pressure: false,
    };
    let mut d = Driver::bind(spec(), 0, down);
    assert_eq!(d.lc.phase(), PodPhase::NodeDown);
    d.input(secs(50.0), Input::NodeChanged(NodeHealth::HEALTHY));
    d.run_until(secs(1000.0));
    assert_eq!(d.starts(), vec![(secs(50.0), 0)]);
}

#[test]
fn crash_factors_scale_the_crash_rate() {
    let mut s = spec();
    s.behaviour.crash_rate_per_hour = 1.0;
    let n = 3000;
    let mean = |health: NodeHealth| {
        (0..n)
            .map(|ordinal| Driver::bind(s.clone(), ordinal, health).first_crash_after_start())
            .sum::<f64>()
            / f64::from(n)
    };
    let healthy = mean(NodeHealth::HEALTHY);
    let on_degraded = mean(degraded(false));
    let degraded_and_pressed = mean(degraded(true));
    // exponential with a mean of one hour; sd of the mean ~ 1.8 %
    assert!((healthy / 3600.0 - 1.0).abs() < 0.08, "{healthy}");
    assert!(
        (healthy / on_degraded / 5.0 - 1.0).abs() < 0.08,
        "{}",
        healthy / on_degraded
    );
    assert!(
        (healthy / degraded_and_pressed / 15.0 - 1.0).abs() < 0.08,
        "{}",
        healthy / degraded_and_pressed
    );
}

#[test]
fn a_health_change_spends_the_remaining_budget_at_the_new_rate() {
    let mut s = spec();
    s.behaviour.crash_rate_per_hour = 1.0;
    let crash_at = 1.0 + Driver::bind(s.clone(), 7, NodeHealth::HEALTHY).first_crash_after_start();
    assert!(
        crash_at > 20.0,
        "pick another slot: this one crashes too soon for the test"
    );
    let halfway = crash_at / 2.0;
    let mut d = Driver::bind(s.clone(), 7, NodeHealth::HEALTHY);
    d.input(secs(halfway), Input::NodeChanged(degraded(false)));
    d.run_until(secs(crash_at + 10.0));
    let expected = halfway + (crash_at - halfway) / 5.0;
    let got = d.exits()[0].0.as_secs_f64();
    assert!((got - expected).abs() <= 0.003, "{got} vs {expected}");
    // and back to healthy restores the rate for the rest
    let mut d = Driver::bind(s, 7, NodeHealth::HEALTHY);
    d.input(secs(halfway), Input::NodeChanged(degraded(false)));
    d.input(secs(halfway + 1.0), Input::NodeChanged(NodeHealth::HEALTHY));
    d.run_until(secs(crash_at + 10.0));
    let expected = crash_at - 4.0;
    let got = d.exits()[0].0.as_secs_f64();
    assert!((got - expected).abs() <= 0.003, "{got} vs {expected}");
}

#[test]
fn a_hazard_that_grows_with_age_crashes_where_the_accumulated_hazard_meets_the_budget() {
    let mut s = spec();
    s.behaviour.crash_rate_per_hour = 1.0;
    // at one crash an hour the flat crash age in hours is the drawn budget
    let budget = Driver::bind(s.clone(), 7, NodeHealth::HEALTHY).first_crash_after_start() / 3600.0;
    let g = 2.0;
    s.behaviour.crash_rate_growth_per_hour = g;
    // age a (hours) where a + g·a²/2 reaches a cumulative hazard of h
    let age_at = |h: f64| ((1.0 + 2.0 * g * h).sqrt() - 1.0) / g;
    let mut d = Driver::bind(s.clone(), 7, NodeHealth::HEALTHY);
    let got = d.first_crash_after_start();
    let expected = age_at(budget) * 3600.0;
    assert!((got - expected).abs() <= 0.003, "{got} vs {expected}");
    assert!(got < budget * 3600.0 - 1.0, "the growing hazard crashes sooner");
    // degraded (5×) halfway: the rest of the budget is spent five times as fast along the same line
    let mut d = Driver::bind(s.clone(), 7, NodeHealth::HEALTHY);
    d.step(Time(u64::MAX));
    let start = d.starts()[0].0.as_secs_f64();
    let half = got / 2.0 / 3600.0;
    d.input(secs(start + half * 3600.0), Input::NodeChanged(degraded(false)));
    d.run_until(secs(start + got + 10.0));
    let spent = half + g * half * half / 2.0;
    let expected = start + age_at(spent + (budget - spent) / 5.0) * 3600.0;
    let exit = d.exits()[0].0.as_secs_f64();
    assert!((exit - expected).abs() <= 0.003, "{exit} vs {expected}");
}

#[test]
fn crash_after_start_is_the_lifecycles_crash_on_a_healthy_node() {
    let mut s = spec();
    let with_rate = |s: &mut PodSpec, rate: f64| {
        s.behaviour.crash_rate_per_hour = rate;
        s.clone()
    };
    assert_eq!(crash_after_start(&with_rate(&mut s, f64::NAN), 1.0), None);
    assert_eq!(crash_after_start(&with_rate(&mut s, 3600.0), 0.5), Some(Span(500)));
    // a budget too large to spend within the horizon never crashes
    assert_eq!(crash_after_start(&with_rate(&mut s, 1e-12), 1.0), None);
    s.behaviour.crash_rate_per_hour = 1.0;
    s.behaviour.crash_rate_growth_per_hour = 2.0;
    let mut d = Driver::bind(s.clone(), 7, NodeHealth::HEALTHY);
    let lived = d.first_crash_after_start();
    let slot = PodSlot {
        workload: WorkloadId(0),
        ordinal: 7,
    };
    let draw = super::draw_container(42, slot, 0, 0, &s, &ModelConfig::default());
    assert_eq!(
        crash_after_start(&s, draw.crash_budget).map(|span| span.as_millis()),
        Some((lived * 1000.0).round() as u64)
    );
}

#[test]
fn stale_timers_change_nothing() {
    let mut s = spec();
    s.behaviour.crash_rate_per_hour = 10.0;
    s.behaviour.run_seconds = Some(Dist::Const { value: 100_000.0 });
    let mut d = Driver::bind(s, 0, NodeHealth::HEALTHY);
    d.run_until(secs(1.0));
    let crash = *d.timers.iter().find(|t| t.kind == TimerKind::Crash).unwrap();
    d.input(secs(2.0), Input::Kill);
    let before = d.lc.clone();
    d.feed(
        Input::Timer {
            kind: crash.kind,
            generation: crash.generation,
        },
        crash.at.max(secs(2.0)),
    );
    assert_eq!(d.lc, before);
    // a timer fires once
    let restart = *d.timers.iter().find(|t| t.kind == TimerKind::Restart).unwrap();
    let input = Input::Timer {
        kind: restart.kind,
        generation: restart.generation,
    };
    d.feed(input, restart.at);
    assert_eq!(d.starts().len(), 2);
    d.feed(input, restart.at);
    assert_eq!(d.starts().len(), 2);
}

#[test]
fn node_oom_kill_exits_and_restarts() {
    let mut d = Driver::bind(spec(), 0, NodeHealth::HEALTHY);
    d.input(secs(5.0), Input::OomKill);
    assert_eq!(
        d.exits(),
        vec![(secs(5.0), ExitReason::OOMKilled, Some(OomCause::NodePressure))]
    );
    assert_eq!(d.lc.usage(), Resources::ZERO);
    d.run_until(secs(15.0));
    assert_eq!(d.starts().last(), Some(&(secs(15.0), 1)));
}

#[test]
fn delete_ends_the_pod_and_later_inputs_are_ignored() {
    let mut d = Driver::bind(spec(), 0, NodeHealth::HEALTHY);
    d.input(secs(5.0), Input::Delete(DeleteCause::Churn));
    assert_eq!(d.lc.ended(), Some(PodEnd::Deleted(DeleteCause::Churn)));
    assert_eq!(d.lc.usage(), Resources::ZERO);
    assert_eq!(
        d.log.last(),
        Some(&(
            secs(5.0),
            EventKind::PodDeleted {
                pod: PodId(1000),
                node: Some(NodeId(0)),
                cause: DeleteCause::Churn
            }
        ))
    );
    let n = d.log.len();
    d.input(secs(6.0), Input::Kill);
    d.run_until(secs(1000.0));
    assert_eq!(d.log.len(), n);
}

#[test]
fn same_slot_same_draws_whatever_the_pod_id() {
    let mut s = spec();
    s.behaviour.memory_usage = Dist::Uniform { min: 0.0, max: 1e9 };
    s.behaviour.crash_rate_per_hour = 2.0;
    let mut a = Driver::bind(s.clone(), 3, NodeHealth::HEALTHY);
    let mut b = Driver::bind(s, 3, NodeHealth::HEALTHY);
    b.lc.ident.pod = PodId(99);
    a.run_until(secs(1.0));
    b.run_until(secs(1.0));
    assert_eq!(a.lc.usage(), b.lc.usage());
    assert_eq!(a.first_crash_after_start(), b.first_crash_after_start());
}

/// 80 MiB at the start (the spec's constant usage), growing 10 KiB a second.
fn leaking(limit_mi: Option<u64>) -> PodSpec {
    let mut s = spec();
    s.behaviour.memory_growth_per_hour = Some(Dist::Const {
        value: 10240.0 * 3600.0,
    });
    s.limits = limit_mi.map(|l| Resources::new(0, l * MI));
    s
}

#[test]
fn a_leak_grows_every_step_and_hits_its_limit_exactly() {
    let mut d = Driver::bind(leaking(Some(81)), 0, NodeHealth::HEALTHY);
    // started at 1 s with 80 MiB; after 60 s of running: 80 MiB + 600 KiB
    d.run_until(secs(61.0));
    assert_eq!(d.lc.usage().memory_bytes, 80 * MI + 600 * 1024);
    // 1 MiB of head-room at 10 KiB/s: killed at its limit 102.4 s after the start
    d.run_until(secs(104.0));
    assert_eq!(
        d.exits(),
        vec![(Time(1000 + 102_400), ExitReason::OOMKilled, Some(OomCause::Limit))]
    );
    assert_eq!(d.lc.usage(), Resources::ZERO);
    // the restart leaks again from its start value
    d.run_until(secs(113.5));
    assert_eq!(d.starts().last(), Some(&(Time(1000 + 102_400 + 10_000), 1)));
    assert_eq!(d.lc.usage().memory_bytes, 80 * MI);
}

#[test]
fn a_leak_without_a_limit_grows_until_something_else_stops_it() {
    let mut d = Driver::bind(leaking(None), 0, NodeHealth::HEALTHY);
    d.run_until(secs(3601.0));
    assert!(d.exits().is_empty());
    assert_eq!(d.lc.usage().memory_bytes, 80 * MI + 10240 * 3600);
    // the node's OOM killer is what ends it
    d.input(secs(3602.0), Input::OomKill);
    assert_eq!(d.exits().len(), 1);
}

#[test]
fn no_growth_draws_nothing_more() {
    // the same slot draws the same start with or without a growth field set to None
    let mut flat = Driver::bind(spec(), 3, NodeHealth::HEALTHY);
    flat.run_until(secs(2.0));
    let mut s = spec();
    s.behaviour.memory_growth_per_hour = None;
    let mut same = Driver::bind(s, 3, NodeHealth::HEALTHY);
    same.run_until(secs(2.0));
    assert_eq!(flat.log, same.log);
    assert!(flat.timers.iter().all(|t| t.kind != TimerKind::Grow));
}

#[test]
fn evicted_at_once_from_a_lost_node() {
    let mut d = Driver::bind(spec(), 0, NodeHealth::HEALTHY);
    d.input(secs(30.0), Input::Evict);
    assert_eq!(d.lc.ended(), Some(PodEnd::Evicted));
    assert_eq!(d.lc.usage(), Resources::ZERO);
    assert!(matches!(d.log.last(), Some((t, EventKind::PodEvicted { .. })) if *t == secs(30.0)));
    // nothing is left to fire
    d.run_until(secs(4000.0));
    assert_eq!(d.exits(), vec![]);
}
