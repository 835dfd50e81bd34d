//! The `pods/status` patches the emulator writes, as kubelet reports a pod
//! (see the conventions in the kube module's contract): phase, the Ready,
//! ContainersReady, Initialized and [`labels::USAGE_CONDITION`] conditions,
//! the one container's status with a new container ID per start, startTime
//! and hostIP. They are strategic merge patches: conditions merge by type
//! (the scheduler's PodScheduled stays), containerStatuses is replaced whole.

use super::view::{Containers, Exit, PodView};
use crate::clock::ScenarioClock;
use crate::{labels, objects};
use schedlab_core::behaviour::{PodEnd, PodPhase};
use schedlab_core::record::{ExitReason, OomCause};
use schedlab_core::time::Time;
use serde_json::{Value, json};
use std::time::Instant;

/// The host IP every emulated node reports.
pub const HOST_IP: &str = "127.0.0.1";

/// Scenario time as wall-clock timestamps, for the status's times.
#[derive(Debug, Clone, Copy)]
pub struct WallTime {
    clock: ScenarioClock,
    anchor: Instant,
    anchor_ts: jiff::Timestamp,
}

impl WallTime {
    pub fn new(clock: ScenarioClock) -> WallTime {
        WallTime {
            clock,
            anchor: Instant::now(),
            anchor_ts: jiff::Timestamp::now(),
        }
    }

    /// The wall timestamp at which scenario time reaches `t`.
    pub fn of(&self, t: Time) -> jiff::Timestamp {
        let at = self.clock.instant_of(t);
        let shifted = if at >= self.anchor {
            jiff::SignedDuration::try_from(at - self.anchor).map(|d| self.anchor_ts.checked_add(d))
        } else {
            jiff::SignedDuration::try_from(self.anchor - at).map(|d| self.anchor_ts.checked_sub(d))
        };
        match shifted {
            Ok(Ok(ts)) => ts,
            _ => self.anchor_ts,
        }
    }

    /// As core/v1 writes a metav1.Time: RFC 3339 in whole seconds, UTC.
    pub fn text(&self, t: Time) -> String {
        rfc3339(self.of(t))
    }
}

/// A timestamp as metav1.Time serialises it.
pub fn rfc3339(ts: jiff::Timestamp) -> String {
    let whole = jiff::Timestamp::from_second(ts.as_second()).unwrap_or(ts);
    whole.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// The container ID of start `number` of pod `uid`: a new one per start, as
/// a container runtime gives.
pub fn container_id(uid: &str, number: u32) -> String {
    format!("emulated://{uid}/{number}")
}

fn exit_code(reason: ExitReason) -> i32 {
    match reason {
        ExitReason::Completed => 0,
        ExitReason::Error => 1,
        ExitReason::OOMKilled => 137,
    }
}

fn terminated(uid: &str, exit: &Exit, wall: &WallTime) -> Value {
    let mut t = json!({
        "exitCode": exit_code(exit.reason),
        "reason": format!("{:?}", exit.reason),
        "startedAt": wall.text(exit.start.at),
        "finishedAt": wall.text(exit.finished),
        "containerID": container_id(uid, exit.start.number),
    });
    if let Some(cause) = exit.oom_cause {
        t["message"] = json!(match cause {
            OomCause::Limit => labels::OOM_LIMIT_MESSAGE,
            OomCause::NodePressure => labels::OOM_NODE_PRESSURE_MESSAGE,
        });
    }
    json!({ "terminated": t })
}

fn container_status(view: &PodView, wall: &WallTime) -> Value {
    let c = &view.containers;
    let uid = view.uid.as_str();
    let ended = matches!(view.phase, PodPhase::Ended(_));
    // what the container is doing now, and the one before it
    let (state, last, id) = match (c.current, c.last_exit) {
        // the node went away under the container: no exit, no CrashLoopBackOff
        (current, last_exit) if view.phase == PodPhase::NodeDown => (
            json!({ "waiting": {
                "reason": "NodeNotReady",
                "message": "the node stopped reporting; the container is not running",
            }}),
            c.last_exit.as_ref(),
            current
                .map(|s| s.number)
                .or(last_exit.map(|e| e.start.number))
                .map(|n| container_id(uid, n)),
        ),
        (Some(start), _) => (
            json!({ "running": { "startedAt": wall.text(start.at) } }),
            c.last_exit.as_ref(),
            Some(container_id(uid, start.number)),
        ),
        (None, Some(exit)) if ended => (
            terminated(uid, &exit, wall),
            c.prev_exit.as_ref(),
            Some(container_id(uid, exit.start.number)),
        ),
        (None, Some(exit)) => (
            json!({ "waiting": {
                "reason": "CrashLoopBackOff",
                "message": format!("back-off restarting failed container {} in pod {}", objects::CONTAINER, view.key.name),
            }}),
            c.last_exit.as_ref(),
            Some(container_id(uid, exit.start.number)),
        ),
        (None, None) => (json!({ "waiting": { "reason": "ContainerCreating" } }), None, None),
    };
    let mut status = json!({
        "name": objects::CONTAINER,
        "image": objects::EMULATED_IMAGE,
        "imageID": "",
        "ready": c.ready,
        "started": c.ready,
        "restartCount": c.restart_count(),
        "state": state,
        "lastState": last.map_or_else(|| json!({}), |e| terminated(uid, e, wall)),
    });
    if let Some(id) = id {
        status["containerID"] = json!(id);
    }
    status
}

fn phase_text(view: &PodView) -> &'static str {
    match view.phase {
        PodPhase::Starting => "Pending",
        PodPhase::Running | PodPhase::BackOff => "Running",
        // the node's containers stopped, but nobody reports a new phase
        PodPhase::NodeDown if view.containers.starts == 0 => "Pending",
        PodPhase::NodeDown => "Running",
        PodPhase::Ended(PodEnd::Succeeded) => "Succeeded",
        PodPhase::Ended(_) => "Failed",
    }
}

fn condition(type_: &str, ok: bool, since: Time, wall: &WallTime) -> Value {
    json!({
        "type": type_,
        "status": if ok { "True" } else { "False" },
        "lastProbeTime": Value::Null,
        "lastTransitionTime": wall.text(since),
    })
}

/// The strategic merge patch of `view`'s pod status.
pub fn status_patch(view: &PodView, wall: &WallTime) -> Value {
    let c: &Containers = &view.containers;
    let mut ready = condition("Ready", c.ready, c.ready_changed, wall);
    let mut containers_ready = condition("ContainersReady", c.ready, c.ready_changed, wall);
    let (reason, message) = if c.ready {
        (Value::Null, Value::Null)
    } else {
        (
            json!("ContainersNotReady"),
            json!(format!("containers with unready status: [{}]", objects::CONTAINER)),
        )
    };
    for cond in [&mut ready, &mut containers_ready] {
        cond["reason"] = reason.clone();
        cond["message"] = message.clone();
    }
    let mut usage = condition(labels::USAGE_CONDITION, c.ready, c.ready_changed, wall);
    // null removes a stale message: a merge patch keeps what it does not name
    usage["message"] = if c.ready {
        json!(objects::format_usage(c.usage))
    } else {
        Value::Null
    };
    json!({
        "status": {
            "phase": phase_text(view),
            "hostIP": HOST_IP,
            "startTime": wall.text(c.bound_at),
            "conditions": [
                condition("Initialized", true, c.bound_at, wall),
                ready,
                containers_ready,
                usage,
            ],
            "containerStatuses": [container_status(view, wall)],
        }
    })
}

/// The strategic merge patch of an evicted pod: Failed, reason Evicted, not
/// ready. Its container statuses stay as they were: the node was gone and no
/// kubelet reported the container's end (nor does the simulator).
pub fn evicted_patch(view: &PodView, wall: &WallTime) -> Value {
    let since = view.containers.ready_changed;
    json!({
        "status": {
            "phase": "Failed",
            "reason": labels::EVICTED_REASON,
            "message": "The node was unreachable and the pod's toleration of it ran out.",
            "conditions": [
                condition("Ready", false, since, wall),
                condition("ContainersReady", false, since, wall),
                {
                    "type": labels::USAGE_CONDITION,
                    "status": "False",
                    "message": Value::Null,
                    "lastTransitionTime": wall.text(since),
                },
            ],
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::driver::PodKey;
    use crate::emulator::view::Start;
    use schedlab_core::resources::Resources;

    fn wall() -> WallTime {
        WallTime::new(ScenarioClock::starting_now(60.0).unwrap())
    }

    fn view(phase: PodPhase, containers: Containers) -> PodView {
        PodView {
            key: PodKey {
                namespace: "ns".into(),
                name: "p".into(),
            },
            uid: "u1".into(),
            phase,
            containers,
        }
    }

    fn exit(number: u32, reason: ExitReason, oom_cause: Option<OomCause>) -> Exit {
        Exit {
            start: Start { number, at: Time(1000) },
            finished: Time(2000),
            reason,
            oom_cause,
        }
    }

    #[test]
    fn a_running_container_after_an_oom_kill() {
        let c = Containers {
            starts: 2,
            current: Some(Start {
                number: 1,
                at: Time(3000),
            }),
            last_exit: Some(exit(0, ExitReason::OOMKilled, Some(OomCause::Limit))),
            ready: true,
            usage: Resources::new(100, 1 << 20),
            ..Default::default()
        };
        let p = status_patch(&view(PodPhase::Running, c), &wall());
        let s = &p["status"];
        assert_eq!(s["phase"], "Running");
        let cs = &s["containerStatuses"][0];
        assert_eq!(cs["containerID"], "emulated://u1/1");
        assert_eq!(cs["restartCount"], 1);
        assert!(cs["state"]["running"]["startedAt"].is_string());
        let last = &cs["lastState"]["terminated"];
        assert_eq!(last["reason"], "OOMKilled");
        assert_eq!(last["exitCode"], 137);
        assert_eq!(last["message"], labels::OOM_LIMIT_MESSAGE);
        assert_eq!(last["containerID"], "emulated://u1/0");
        let usage = s["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == labels::USAGE_CONDITION)
            .unwrap();
        assert_eq!(usage["status"], "True");
        assert_eq!(
            objects::parse_usage(usage["message"].as_str().unwrap()),
            Some(Resources::new(100, 1 << 20))
        );
    }

    #[test]
    fn back_off_waits_and_ended_pods_show_their_last_container() {
        let mut c = Containers {
            starts: 1,
            last_exit: Some(exit(0, ExitReason::Error, None)),
            ..Default::default()
        };
        let p = status_patch(&view(PodPhase::BackOff, c.clone()), &wall());
        let cs = &p["status"]["containerStatuses"][0];
        assert_eq!(cs["state"]["waiting"]["reason"], "CrashLoopBackOff");
        assert_eq!(cs["lastState"]["terminated"]["reason"], "Error");
        assert_eq!(cs["lastState"]["terminated"]["exitCode"], 1);
        assert_eq!(cs["restartCount"], 0);
        c.prev_exit = c.last_exit;
        c.last_exit = Some(Exit {
            reason: ExitReason::Completed,
            start: Start {
                number: 1,
                at: Time(5000),
            },
            ..exit(1, ExitReason::Completed, None)
        });
        c.starts = 2;
        let p = status_patch(&view(PodPhase::Ended(PodEnd::Succeeded), c), &wall());
        assert_eq!(p["status"]["phase"], "Succeeded");
        let cs = &p["status"]["containerStatuses"][0];
        assert_eq!(cs["state"]["terminated"]["reason"], "Completed");
        assert_eq!(cs["state"]["terminated"]["containerID"], "emulated://u1/1");
        assert_eq!(cs["lastState"]["terminated"]["containerID"], "emulated://u1/0");
    }

    #[test]
    fn before_the_first_start_the_container_is_being_created() {
        let p = status_patch(&view(PodPhase::Starting, Containers::default()), &wall());
        assert_eq!(p["status"]["phase"], "Pending");
        let cs = &p["status"]["containerStatuses"][0];
        assert_eq!(cs["state"]["waiting"]["reason"], "ContainerCreating");
        assert!(cs.get("containerID").is_none());
        assert_eq!(p["status"]["hostIP"], HOST_IP);
    }

    #[test]
    fn a_container_on_a_failed_node_waits_without_an_exit() {
        let c = Containers {
            starts: 2,
            current: Some(Start {
                number: 1,
                at: Time(3000),
            }),
            last_exit: Some(exit(0, ExitReason::Error, None)),
            ..Default::default()
        };
        let p = status_patch(&view(PodPhase::NodeDown, c), &wall());
        assert_eq!(p["status"]["phase"], "Running");
        let cs = &p["status"]["containerStatuses"][0];
        assert_eq!(cs["state"]["waiting"]["reason"], "NodeNotReady");
        assert_eq!(cs["containerID"], "emulated://u1/1");
        assert_eq!(cs["lastState"]["terminated"]["containerID"], "emulated://u1/0");
        assert_eq!(cs["ready"], false);
    }

    #[test]
    fn evictions_fail_the_pod_with_reason_evicted() {
        let p = evicted_patch(&view(PodPhase::Ended(PodEnd::Evicted), Containers::default()), &wall());
        assert_eq!(p["status"]["phase"], "Failed");
        assert_eq!(p["status"]["reason"], labels::EVICTED_REASON);
        assert!(p["status"].get("containerStatuses").is_none());
    }

    #[test]
    fn wall_times_follow_the_scale() {
        let w = wall();
        let a = w.of(Time(0));
        let b = w.of(Time(60_000));
        // a scenario minute is a wall second at scale 60
        let d = b.duration_since(a);
        assert!((d.as_secs_f64() - 1.0).abs() < 1e-6, "{d:?}");
        assert!(rfc3339(a).ends_with('Z'));
    }
}
