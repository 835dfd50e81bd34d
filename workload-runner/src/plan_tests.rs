use super::*;
use schedlab_core::behaviour::{
    Effects, Input, ModelConfig, NodeHealth, PodContext, PodIdent, PodLifecycle, TimerKind,
};
use schedlab_core::dist::Dist;
use schedlab_core::node::NodeId;
use schedlab_core::pod::{Behaviour, PodId, PodSlot, WorkloadId};
use schedlab_core::record::EventKind;
use schedlab_core::time::Time;

const MI: u64 = 1 << 20;

fn settings(behaviour: Behaviour, limits: Resources, ordinal: u32) -> Settings {
    Settings {
        behaviour,
        seed: 11,
        pod: PodId(100 + u64::from(ordinal)),
        slot: PodSlot {
            workload: WorkloadId(2),
            ordinal,
        },
        incarnation: 1,
        limits,
        time_scale: 1.0,
        model: ModelConfig::default(),
    }
}

fn busy() -> Behaviour {
    Behaviour {
        cpu_usage: Dist::Uniform { min: 100.0, max: 900.0 },
        memory_usage: Dist::Uniform {
            min: 40.0 * MI as f64,
            max: 120.0 * MI as f64,
        },
        run_seconds: Some(Dist::Exponential { mean: 3600.0 }),
        crash_rate_per_hour: 2.0,
        crash_rate_growth_per_hour: 0.0,
        unstable: false,
        memory_growth_per_hour: None,
    }
}

#[test]
fn same_seed_same_plan_other_start_other_plan() {
    let s = settings(busy(), Resources::new(0, 100 * MI), 3);
    let a = Plan::new(&s, 0);
    assert_eq!(a, Plan::new(&s, 0));
    assert_ne!(a, Plan::new(&s, 1));
    let other_seed = Settings { seed: 12, ..s.clone() };
    assert_ne!(a, Plan::new(&other_seed, 0));
    // the pod id does not enter the draws: a pod recreated under a new id
    // with the same slot and incarnation plays the same
    let other_id = Settings {
        pod: PodId(999),
        ..s.clone()
    };
    let b = Plan::new(&other_id, 0);
    assert_eq!((b.usage(), b.end), (a.usage(), a.end));
}

/// [`busy`], leaking 0.5–4 GiB an hour while it runs.
fn leaky() -> Behaviour {
    Behaviour {
        memory_growth_per_hour: Some(Dist::Uniform {
            min: 512.0 * MI as f64,
            max: 4096.0 * MI as f64,
        }),
        ..busy()
    }
}

/// The plans agree with the lifecycle the simulator and the node emulator
/// run: same usage, same end, same time, start after start (a leak that
/// reaches the limit included).
#[test]
fn agrees_with_the_pod_lifecycle() {
    let limits = Resources::new(500, 100 * MI);
    let config = ModelConfig::default();
    let mut kinds = std::collections::HashSet::new();
    let mut leak_ooms = 0;
    for (ordinal, behaviour) in (0..60).flat_map(|o| [(o, busy()), (o, leaky())]) {
        let leaks = behaviour.memory_growth_per_hour.is_some();
        let s = settings(behaviour, limits, ordinal);
        let spec = pod_spec(&s);
        let ctx = PodContext {
            spec: &spec,
            config: &config,
            seed: s.seed,
        };
        let ident = PodIdent {
            pod: s.pod,
            slot: s.slot,
            incarnation: s.incarnation,
        };
        let mut out = Effects::default();
        let mut lc = PodLifecycle::bind(ident, NodeId(0), NodeHealth::HEALTHY, Time::ZERO, &ctx, &mut out);
        let mut pending = out.timers.clone();
        for start in 0..4u32 {
            // the timer that starts the container: Start, then Restart after each exit
            let t = pending
                .iter()
                .find(|t| matches!(t.kind, TimerKind::Start | TimerKind::Restart))
                .copied()
                .unwrap();
            out.clear();
            lc.handle(
                Input::Timer {
                    kind: t.kind,
                    generation: t.generation,
                },
                t.at,
                &ctx,
                &mut out,
            );
            let now = t.at;
            let usage = out
                .events
                .iter()
                .find_map(|e| match e {
                    EventKind::ContainerStarted {
                        usage, restart_count, ..
                    } => {
                        assert_eq!(*restart_count, start);
                        Some(*usage)
                    }
                    _ => None,
                })
                .unwrap();
            let plan = Plan::new(&s, start);
            assert_eq!(plan.usage(), usage, "ordinal {ordinal} start {start}");
            // the lifecycle's earliest end timer, ties in the order it set them
            let model_end = out
                .timers
                .iter()
                .enumerate()
                .filter_map(|(i, t)| {
                    let kind = match t.kind {
                        TimerKind::Complete => EndKind::Complete,
                        TimerKind::OomLimit => EndKind::OomLimit,
                        TimerKind::Crash => EndKind::Crash,
                        _ => return None,
                    };
                    Some((t.at, i, kind))
                })
                .min_by_key(|&(at, i, _)| (at, i))
                .map(|(at, _, kind)| (kind, at.since(now).as_millis()));
            assert_eq!(
                plan.end.map(|e| (e.kind, e.scenario_ms)),
                model_end,
                "ordinal {ordinal} start {start}"
            );
            if let Some(e) = plan.end {
                kinds.insert(e.kind);
                if leaks && e.kind == EndKind::OomLimit && plan.memory_demand <= limits.memory_bytes {
                    leak_ooms += 1;
                }
            }
            // end this start by a kill, so the next start is a restart
            out.clear();
            lc.handle(Input::Kill, now + Span(1), &ctx, &mut out);
            pending = out.timers.clone();
        }
    }
    // the sample covers every way to end, a leak's OOM kill among them
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    assert!(leak_ooms > 0, "no leak reached the limit");
}

#[test]
fn demand_past_the_limit_plans_an_oom_kill_past_the_limit() {
    let b = Behaviour {
        cpu_usage: Dist::Const { value: 0.0 },
        memory_usage: Dist::Const {
            value: (96 * MI) as f64,
        },
        run_seconds: None,
        crash_rate_per_hour: 0.0,
        crash_rate_growth_per_hour: 0.0,
        unstable: false,
        memory_growth_per_hour: None,
    };
    let s = settings(b, Resources::new(0, 64 * MI), 0);
    let p = Plan::new(&s, 0);
    assert_eq!(p.memory_demand, 96 * MI);
    assert_eq!(p.memory_bytes, 64 * MI);
    assert_eq!(p.memory_limit, Some(64 * MI));
    let end = p.end.unwrap();
    assert_eq!(end.kind, EndKind::OomLimit);
    // held below the limit until the OOM delay, then grown past it
    assert_eq!(p.hold_bytes, 64 * MI - RUNTIME_RESERVE);
    assert!(p.grow_to_bytes.unwrap() > 64 * MI + RUNTIME_RESERVE - 1);
    // within the limit: no OOM, nothing to grow to
    let fits = Settings {
        limits: Resources::new(0, 200 * MI),
        ..s.clone()
    };
    let p = Plan::new(&fits, 0);
    assert_eq!(p.end, None);
    assert_eq!(p.grow_to_bytes, None);
    assert_eq!(p.hold_bytes, 96 * MI);
    // no limit: holds the demand
    let unlimited = Settings {
        limits: Resources::ZERO,
        ..s
    };
    assert_eq!(Plan::new(&unlimited, 0).hold_bytes, 96 * MI);
}

#[test]
fn tiny_limits_keep_half_free() {
    let b = Behaviour {
        memory_usage: Dist::Const { value: (4 * MI) as f64 },
        ..busy()
    };
    let p = Plan::new(&settings(b, Resources::new(0, 4 * MI), 0), 0);
    assert_eq!(p.hold_bytes, 2 * MI);
}

#[test]
fn time_scale_compresses_wall_time_only() {
    let b = Behaviour {
        run_seconds: Some(Dist::Const { value: 120.0 }),
        crash_rate_per_hour: 0.0,
        crash_rate_growth_per_hour: 0.0,
        ..busy()
    };
    let real = settings(b, Resources::ZERO, 0);
    let fast = Settings {
        time_scale: 60.0,
        ..real.clone()
    };
    let (a, f) = (Plan::new(&real, 0).end.unwrap(), Plan::new(&fast, 0).end.unwrap());
    assert_eq!(a.kind, EndKind::Complete);
    assert_eq!((a.scenario_ms, f.scenario_ms), (120_000, 120_000));
    assert_eq!(a.wall, Duration::from_secs(120));
    assert_eq!(f.wall, Duration::from_secs(2));
}

#[test]
fn no_hazard_no_run_time_runs_forever() {
    let b = Behaviour {
        run_seconds: None,
        crash_rate_per_hour: 0.0,
        crash_rate_growth_per_hour: 0.0,
        ..busy()
    };
    assert_eq!(Plan::new(&settings(b, Resources::ZERO, 0), 0).end, None);
}

#[test]
fn cpu_is_capped_at_the_limit() {
    let b = Behaviour {
        cpu_usage: Dist::Const { value: 2500.0 },
        ..busy()
    };
    let p = Plan::new(&settings(b.clone(), Resources::new(1200, 0), 0), 0);
    assert_eq!(p.cpu_milli, 1200);
    assert_eq!(p.memory_limit, None);
    assert_eq!(Plan::new(&settings(b, Resources::ZERO, 0), 0).cpu_milli, 2500);
}

#[test]
fn plans_serialise_with_wall_seconds() {
    let b = Behaviour {
        run_seconds: Some(Dist::Const { value: 3.0 }),
        crash_rate_per_hour: 0.0,
        crash_rate_growth_per_hour: 0.0,
        ..busy()
    };
    let json = serde_json::to_value(Plan::new(&settings(b, Resources::ZERO, 0), 2)).unwrap();
    assert_eq!(json["start"], 2);
    assert_eq!(json["end"]["kind"], "complete");
    assert_eq!(json["end"]["wall_seconds"], 3.0);
}
