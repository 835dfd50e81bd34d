use super::testkit::{self, Exit, Kubelet, MI, NodeDownStyle, Shown, write_status};
use super::*;
use rand::Rng;
use schedlab_core::behaviour::{Input, ModelConfig, NodeHealth};
use schedlab_core::node::NodeCondition;
use schedlab_core::pod::RestartPolicy;
use schedlab_core::record::OomCause;
use schedlab_core::time::{Span, Time};

fn nodes(name: &str) -> Option<NodeId> {
    match name {
        "r1-a" => Some(NodeId(0)),
        "r1-b" => Some(NodeId(1)),
        _ => None,
    }
}

fn pending_pod() -> (core::Pod, PodObservation) {
    let w = testkit::workload(0, RestartPolicy::Always);
    let ident = testkit::ident(5, 0, 0);
    (testkit::pod(&ident, &w), PodObservation::new(PodId(5)))
}

fn observe(obs: &mut PodObservation, pod: &core::Pod) -> Vec<EventKind> {
    let mut out = Vec::new();
    obs.observe(pod, &nodes, &mut out);
    out
}

fn started(restart_count: u32, usage: Resources) -> EventKind {
    EventKind::ContainerStarted {
        pod: PodId(5),
        node: NodeId(0),
        restart_count,
        usage,
    }
}

fn exited(reason: ExitReason, oom_cause: Option<OomCause>) -> EventKind {
    EventKind::ContainerExited {
        pod: PodId(5),
        node: NodeId(0),
        reason,
        oom_cause,
    }
}

fn id(n: u32) -> String {
    format!("emulated://uid-5/{n}")
}

#[test]
fn answers_are_recorded_when_they_change() {
    let (mut pod, mut obs) = pending_pod();
    assert!(observe(&mut obs, &pod).is_empty());
    testkit::not_scheduled(&mut pod, "Unschedulable", "0/3 nodes are available");
    assert_eq!(
        observe(&mut obs, &pod),
        vec![EventKind::PodUnschedulable {
            pod: PodId(5),
            reason: "0/3 nodes are available".into()
        }]
    );
    // kube-scheduler rewrites the condition at every attempt
    testkit::not_scheduled(&mut pod, "Unschedulable", "0/4 nodes are available");
    assert!(observe(&mut obs, &pod).is_empty());
    testkit::not_scheduled(&mut pod, "Declined", "restraint");
    assert_eq!(
        observe(&mut obs, &pod),
        vec![EventKind::PodDeclined {
            pod: PodId(5),
            reason: "restraint".into()
        }]
    );
    assert_eq!(obs.last_answer(), Some(Answer::Declined));
    testkit::not_scheduled(&mut pod, "Unschedulable", "again");
    assert_eq!(observe(&mut obs, &pod).len(), 1);
    // a reason that is no scheduler's answer is not one
    testkit::not_scheduled(&mut pod, "SchedulerError", "boom");
    assert!(observe(&mut obs, &pod).is_empty());
    assert!(!obs.is_bound());
}

#[test]
fn binding_waits_for_a_known_node() {
    let (mut pod, mut obs) = pending_pod();
    testkit::bind(&mut pod, "r1-new");
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running {
            id: id(1),
            usage: Resources::new(10, MI),
        },
        0,
        None,
    );
    assert!(observe(&mut obs, &pod).is_empty());
    assert_eq!(obs.awaiting_node(), Some("r1-new"));
    assert!(!obs.is_bound());
    assert_eq!(obs.running_usage(), Resources::ZERO);
    let later = |name: &str| (name == "r1-new").then_some(NodeId(4));
    let mut out = Vec::new();
    obs.observe(&pod, &later, &mut out);
    assert_eq!(
        out,
        vec![
            EventKind::PodBound {
                pod: PodId(5),
                node: NodeId(4)
            },
            EventKind::ContainerStarted {
                pod: PodId(5),
                node: NodeId(4),
                restart_count: 0,
                usage: Resources::new(10, MI)
            }
        ]
    );
    assert_eq!(obs.node(), Some(NodeId(4)));
    assert_eq!(obs.awaiting_node(), None);
    assert_eq!(obs.running_usage(), Resources::new(10, MI));
    // the same state again changes nothing
    out.clear();
    obs.observe(&pod, &later, &mut out);
    assert!(out.is_empty());
}

#[test]
fn a_crash_then_a_restart() {
    let (mut pod, mut obs) = pending_pod();
    testkit::bind(&mut pod, "r1-a");
    write_status(&mut pod, "Pending", None, &Shown::Creating, 0, None);
    assert_eq!(
        observe(&mut obs, &pod),
        vec![EventKind::PodBound {
            pod: PodId(5),
            node: NodeId(0)
        }]
    );
    let u = Resources::new(120, 300 * MI);
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(1), usage: u },
        0,
        None,
    );
    assert_eq!(observe(&mut obs, &pod), vec![started(0, u)]);
    assert_eq!(obs.running_usage(), u);
    let crash = Exit::new(&id(1), ExitReason::Error, None);
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::BackOff { id: id(1) },
        0,
        Some(&crash),
    );
    assert_eq!(observe(&mut obs, &pod), vec![exited(ExitReason::Error, None)]);
    assert_eq!(obs.running_usage(), Resources::ZERO);
    assert!(!obs.is_running());
    let u2 = Resources::new(90, 200 * MI);
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(2), usage: u2 },
        1,
        Some(&crash),
    );
    assert_eq!(observe(&mut obs, &pod), vec![started(1, u2)]);
    assert_eq!(obs.starts(), 2);
    // exit and restart seen at once: the exit first
    let oom = Exit::new(&id(2), ExitReason::OOMKilled, Some(OomCause::Limit));
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(3), usage: u },
        2,
        Some(&oom),
    );
    assert_eq!(
        observe(&mut obs, &pod),
        vec![exited(ExitReason::OOMKilled, Some(OomCause::Limit)), started(2, u)]
    );
}

#[test]
fn missed_restarts_count_as_errors() {
    let (mut pod, mut obs) = pending_pod();
    testkit::bind(&mut pod, "r1-a");
    let u = Resources::new(1, 1);
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(1), usage: u },
        0,
        None,
    );
    observe(&mut obs, &pod);
    // a relist shows the fourth container; the third one's record is visible
    let oom = Exit::new(&id(3), ExitReason::OOMKilled, Some(OomCause::NodePressure));
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(4), usage: u },
        3,
        Some(&oom),
    );
    assert_eq!(
        observe(&mut obs, &pod),
        vec![
            exited(ExitReason::Error, None),
            started(1, Resources::ZERO),
            exited(ExitReason::Error, None),
            started(2, Resources::ZERO),
            exited(ExitReason::OOMKilled, Some(OomCause::NodePressure)),
            started(3, u),
        ]
    );
}

#[test]
fn a_restart_without_a_record_is_a_node_coming_back() {
    let (mut pod, mut obs) = pending_pod();
    testkit::bind(&mut pod, "r1-a");
    let u = Resources::new(1, 1);
    let old = Exit::new("emulated://uid-5/0", ExitReason::Error, None);
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(1), usage: u },
        0,
        Some(&old),
    );
    // first sight: the record is of no container this pod's count knows
    assert_eq!(observe(&mut obs, &pod)[1..], [started(0, u)]);
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(2), usage: u },
        1,
        Some(&old),
    );
    assert_eq!(observe(&mut obs, &pod), vec![started(1, u)]);
}

#[test]
fn ends_are_last_and_final() {
    let (mut pod, mut obs) = pending_pod();
    testkit::bind(&mut pod, "r1-b");
    let u = Resources::new(1, 1);
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(1), usage: u },
        0,
        None,
    );
    observe(&mut obs, &pod);
    let done = Exit::new(&id(1), ExitReason::Completed, None);
    write_status(&mut pod, "Succeeded", None, &Shown::Terminated(done), 0, None);
    let node = NodeId(1);
    assert_eq!(
        observe(&mut obs, &pod),
        vec![
            EventKind::ContainerExited {
                pod: PodId(5),
                node,
                reason: ExitReason::Completed,
                oom_cause: None
            },
            EventKind::PodSucceeded { pod: PodId(5), node }
        ]
    );
    assert_eq!(obs.ended(), Some(PodEnd::Succeeded));
    assert_eq!(obs.running_usage(), Resources::ZERO);
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(9), usage: u },
        8,
        None,
    );
    assert!(observe(&mut obs, &pod).is_empty());
}

#[test]
fn a_failed_pod_without_a_record_failed_with_an_error() {
    let (mut pod, mut obs) = pending_pod();
    testkit::bind(&mut pod, "r1-a");
    let u = Resources::new(1, 1);
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(1), usage: u },
        0,
        None,
    );
    observe(&mut obs, &pod);
    pod.status.as_mut().unwrap().phase = Some("Failed".into());
    assert_eq!(
        observe(&mut obs, &pod),
        vec![
            exited(ExitReason::Error, None),
            EventKind::PodFailed {
                pod: PodId(5),
                node: NodeId(0)
            }
        ]
    );
    assert_eq!(obs.ended(), Some(PodEnd::Failed));
}

#[test]
fn eviction_stops_the_container_without_an_exit() {
    let (mut pod, mut obs) = pending_pod();
    testkit::bind(&mut pod, "r1-a");
    let u = Resources::new(1, 1);
    write_status(
        &mut pod,
        "Running",
        None,
        &Shown::Running { id: id(1), usage: u },
        0,
        None,
    );
    observe(&mut obs, &pod);
    let status = pod.status.as_mut().unwrap();
    status.phase = Some("Failed".into());
    status.reason = Some("Evicted".into());
    assert_eq!(
        observe(&mut obs, &pod),
        vec![EventKind::PodEvicted {
            pod: PodId(5),
            node: NodeId(0)
        }]
    );
    assert_eq!(obs.ended(), Some(PodEnd::Evicted));
}

#[test]
fn a_real_kubelets_pod_without_usage() {
    let (mut pod, mut obs) = pending_pod();
    testkit::bind(&mut pod, "r1-a");
    let status = pod.status.get_or_insert_with(Default::default);
    status.phase = Some("Running".into());
    status.container_statuses = Some(vec![core::ContainerStatus {
        name: "main".into(),
        container_id: Some("containerd://abc".into()),
        restart_count: 0,
        state: Some(core::ContainerState {
            running: Some(Default::default()),
            ..Default::default()
        }),
        ..Default::default()
    }]);
    assert_eq!(observe(&mut obs, &pod)[1..], [started(0, Resources::ZERO)]);
    let cs = &mut pod.status.as_mut().unwrap().container_statuses.as_mut().unwrap()[0];
    cs.container_id = Some("containerd://def".into());
    cs.restart_count = 1;
    cs.last_state = Some(core::ContainerState {
        terminated: Some(core::ContainerStateTerminated {
            container_id: Some("containerd://abc".into()),
            exit_code: 2,
            reason: Some("Error".into()),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(
        observe(&mut obs, &pod),
        vec![exited(ExitReason::Error, None), started(1, Resources::ZERO)]
    );
}

/// What the simulator records of a pod, less the deletion (the player's).
fn sim_events(k: &Kubelet) -> Vec<EventKind> {
    k.events
        .iter()
        .filter(|e| !matches!(e, EventKind::PodDeleted { .. }))
        .cloned()
        .collect()
}

/// Plays one pod for an hour of random faults; `watch` says whether each
/// written state is seen. Returns what was observed and the stand-in.
fn play(
    seed: u64,
    style: NodeDownStyle,
    restart: RestartPolicy,
    watch: &mut dyn FnMut() -> bool,
) -> (Vec<EventKind>, Kubelet, PodObservation) {
    let mut rng = schedlab_core::rng::stream(seed, &[99]);
    let mut w = testkit::workload(0, restart);
    w.spec.behaviour.crash_rate_per_hour = rng.random_range(0.0..30.0);
    let ident = testkit::ident(5, 0, 0);
    let mut pod = testkit::pod(&ident, &w);
    let mut obs = PodObservation::new(PodId(5));
    let mut out = Vec::new();
    obs.observe(&pod, &nodes, &mut out);
    let config = ModelConfig {
        default_toleration_seconds: rng.random_range(30..900),
        ..ModelConfig::default()
    };
    let mut k = Kubelet::bind_with(&mut pod, NodeId(0), "r1-a", style, config);
    let see = |pod: &core::Pod, obs: &mut PodObservation, out: &mut Vec<EventKind>, watch: &mut dyn FnMut() -> bool| {
        if watch() {
            obs.observe(pod, &nodes, out);
        }
    };
    see(&pod, &mut obs, &mut out, watch);
    let end = Time::from_secs_f64(3600.0);
    let mut health = NodeHealth::HEALTHY;
    while k.now < end && k.lc.ended().is_none() {
        let next = k.now + Span::from_secs(rng.random_range(1..240));
        while k.next_timer(next, &mut pod) {
            see(&pod, &mut obs, &mut out, watch);
        }
        k.now = next;
        let input = match rng.random_range(0..10) {
            0 => Input::Kill,
            1 => Input::OomKill,
            2 | 3 => {
                health.condition = match rng.random_range(0..3) {
                    0 => NodeCondition::Ready,
                    1 => NodeCondition::Degraded,
                    _ => NodeCondition::NotReady,
                };
                Input::NodeChanged(health)
            }
            4 => {
                health.memory_pressure = !health.memory_pressure;
                Input::NodeChanged(health)
            }
            _ => continue,
        };
        k.input(input, &mut pod);
        see(&pod, &mut obs, &mut out, watch);
    }
    // a last look, as a relist would show it
    obs.observe(&pod, &nodes, &mut out);
    (out, k, obs)
}

#[test]
fn every_state_seen_gives_the_simulators_events() {
    let styles = [NodeDownStyle::Silent, NodeDownStyle::Waiting, NodeDownStyle::Unknown];
    let policies = [RestartPolicy::Always, RestartPolicy::OnFailure, RestartPolicy::Never];
    let mut ends = std::collections::HashSet::new();
    let mut restarts_seen = 0;
    for seed in 0..150u64 {
        let style = styles[(seed % 3) as usize];
        let restart = policies[((seed / 3) % 3) as usize];
        let (seen, k, obs) = play(seed, style, restart, &mut || true);
        assert_eq!(seen, sim_events(&k), "seed {seed} {style:?} {restart:?}");
        assert_eq!(obs.ended(), k.lc.ended(), "seed {seed}");
        assert_eq!(obs.running_usage(), k.lc.usage(), "seed {seed}");
        ends.insert(format!("{:?}", k.lc.ended()));
        restarts_seen += k.lc.restart_count();
    }
    // the scripts reached every kind of end and many restarts
    assert!(ends.len() >= 4, "{ends:?}");
    assert!(restarts_seen > 100, "{restarts_seen}");
}

fn count(events: &[EventKind], f: impl Fn(&EventKind) -> bool) -> usize {
    events.iter().filter(|e| f(e)).count()
}

#[test]
fn states_skipped_by_a_relist_keep_the_counts() {
    for seed in 0..150u64 {
        let mut rng = schedlab_core::rng::stream(seed, &[7]);
        let restart = [RestartPolicy::Always, RestartPolicy::OnFailure, RestartPolicy::Never][(seed % 3) as usize];
        let (seen, k, obs) = play(seed, NodeDownStyle::Unknown, restart, &mut || rng.random_bool(0.3));
        let sim = sim_events(&k);
        let starts = |e: &EventKind| matches!(e, EventKind::ContainerStarted { .. });
        assert_eq!(count(&seen, starts), count(&sim, starts), "seed {seed}");
        let restart_counts: Vec<u32> = seen
            .iter()
            .filter_map(|e| match e {
                EventKind::ContainerStarted { restart_count, .. } => Some(*restart_count),
                _ => None,
            })
            .collect();
        assert!(
            restart_counts.iter().enumerate().all(|(i, &r)| r == i as u32),
            "seed {seed}"
        );
        let terminal = |e: &&EventKind| {
            matches!(
                e,
                EventKind::PodSucceeded { .. } | EventKind::PodFailed { .. } | EventKind::PodEvicted { .. }
            )
        };
        assert_eq!(seen.iter().rfind(terminal), sim.iter().rfind(terminal), "seed {seed}");
        if let Some(t) = seen.iter().find(terminal) {
            assert_eq!(seen.last(), Some(t), "seed {seed}: the end is last");
        }
        assert_eq!(obs.ended(), k.lc.ended(), "seed {seed}");
        // exits are at most one per stopped container
        let exits = |e: &EventKind| matches!(e, EventKind::ContainerExited { .. });
        assert!(count(&seen, exits) <= count(&seen, starts), "seed {seed}");
    }
}
