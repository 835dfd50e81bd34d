//! What /healthz and /readyz answer.
//!
//! - Live: the process's loops still turn. The control loop and the
//!   election loop each beat at least every second; one silent for
//!   [`WEDGED_AFTER`] means a wedged task, and the kubelet should restart
//!   the container.
//! - Ready: the watch of this scheduler's nodes and pods has listed them
//!   once, and the replica is either the leader with its bind loop running
//!   or a follower standing by. A leader whose bind loop is not running (yet)
//!   is not ready; neither is a replica shutting down.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a loop may stay silent before the process counts as wedged.
pub const WEDGED_AFTER: Duration = Duration::from_secs(30);

/// This replica's part in the election.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// not yet connected to the Lease
    Starting,
    /// another replica holds the Lease
    Follower,
    /// this replica holds the Lease; `binding`: its bind loop runs
    Leader { binding: bool },
    /// stopping after SIGTERM/SIGINT
    ShuttingDown,
}

#[derive(Debug)]
struct State {
    role: Role,
    synced: bool,
    control_beat: Instant,
    election_beat: Instant,
}

/// Shared between the loops (writers) and the HTTP server (reader).
#[derive(Debug)]
pub struct Health {
    state: Mutex<State>,
}

impl Default for Health {
    fn default() -> Self {
        Health::new(Instant::now())
    }
}

/// One probe's answer: whether it passes and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub ok: bool,
    pub reason: String,
}

impl Health {
    pub fn new(now: Instant) -> Health {
        Health {
            state: Mutex::new(State {
                role: Role::Starting,
                synced: false,
                control_beat: now,
                election_beat: now,
            }),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        // The state is plain data; a panic elsewhere leaves it usable.
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        f(&mut state)
    }

    pub fn set_role(&self, role: Role) {
        self.with(|s| {
            // once shutting down, stay so
            if s.role != Role::ShuttingDown {
                s.role = role;
            }
        });
    }

    /// The election has reached the Lease: a replica that is not leading
    /// is now a follower (a no-op in any other role).
    pub fn started(&self) {
        self.with(|s| {
            if s.role == Role::Starting {
                s.role = Role::Follower;
            }
        });
    }

    pub fn role(&self) -> Role {
        self.with(|s| s.role)
    }

    pub fn set_synced(&self, synced: bool) {
        self.with(|s| s.synced = synced);
    }

    pub fn control_beat(&self, now: Instant) {
        self.with(|s| s.control_beat = now);
    }

    pub fn election_beat(&self, now: Instant) {
        self.with(|s| s.election_beat = now);
    }

    /// /healthz at `now`.
    pub fn live(&self, now: Instant) -> Verdict {
        self.with(|s| {
            let silent = |beat: Instant| now.saturating_duration_since(beat);
            let (control, election) = (silent(s.control_beat), silent(s.election_beat));
            if control > WEDGED_AFTER {
                Verdict::fail(format!("the control loop has been silent for {control:?}"))
            } else if election > WEDGED_AFTER && s.role != Role::ShuttingDown {
                Verdict::fail(format!("the leader election has been silent for {election:?}"))
            } else {
                Verdict::pass("ok")
            }
        })
    }

    /// /readyz.
    pub fn ready(&self) -> Verdict {
        self.with(|s| match (s.synced, s.role) {
            (_, Role::ShuttingDown) => Verdict::fail("shutting down"),
            (false, _) => Verdict::fail("the node and pod watches have not listed yet"),
            (true, Role::Starting) => Verdict::fail("not yet in the leader election"),
            (true, Role::Leader { binding: false }) => Verdict::fail("leader, bind loop not running"),
            (true, Role::Leader { binding: true }) => Verdict::pass("leader, binding"),
            (true, Role::Follower) => Verdict::pass("follower, standing by"),
        })
    }
}

impl Verdict {
    fn pass(reason: impl Into<String>) -> Verdict {
        Verdict {
            ok: true,
            reason: reason.into(),
        }
    }

    fn fail(reason: impl Into<String>) -> Verdict {
        Verdict {
            ok: false,
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_needs_synced_caches_and_a_settled_role() {
        let h = Health::new(Instant::now());
        assert!(!h.ready().ok, "starting");
        h.started();
        assert_eq!(h.role(), Role::Follower);
        assert!(!h.ready().ok, "watches not listed yet");
        h.set_synced(true);
        assert_eq!(h.ready().reason, "follower, standing by");
        assert!(h.ready().ok);
        h.set_role(Role::Leader { binding: false });
        assert!(!h.ready().ok, "leader without a bind loop");
        h.set_role(Role::Leader { binding: true });
        assert!(h.ready().ok);
        h.set_synced(false);
        assert!(!h.ready().ok, "watch relisting");
        h.set_synced(true);
        h.set_role(Role::ShuttingDown);
        assert!(!h.ready().ok);
        h.set_role(Role::Follower);
        assert_eq!(h.role(), Role::ShuttingDown, "shutdown is final");
    }

    #[test]
    fn live_until_a_loop_goes_silent() {
        let t0 = Instant::now();
        let h = Health::new(t0);
        assert!(h.live(t0 + Duration::from_secs(5)).ok);
        let late = t0 + WEDGED_AFTER + Duration::from_secs(1);
        let v = h.live(late);
        assert!(!v.ok && v.reason.contains("control loop"), "{v:?}");
        h.control_beat(late);
        let v = h.live(late);
        assert!(!v.ok && v.reason.contains("election"), "{v:?}");
        h.election_beat(late);
        assert!(h.live(late).ok);
    }
}
