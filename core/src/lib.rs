//! schedlab's core: what a cluster is, how its pods behave, and the
//! simulator that plays a scenario's timeline against a policy in virtual
//! time. It owns the cluster model, the pod-behaviour model, cluster views,
//! records, timelines and the simulator, and may use nothing of schedlab
//! above it: no async runtime and no Kubernetes client, so `workloads`,
//! `scheduler` and `results` build without the kube stack. The backend over
//! real API servers is `kube-backend`; clusters to run on come from
//! `provisioning`.
//!
//! - [`resources`], [`node`], [`pod`], [`dist`]: what a cluster is made of.
//! - [`timeline`]: what a backend plays (nodes, workloads, timed actions).
//! - [`view`]: what a scheduler sees and answers.
//! - [`verdict`]: what a backend makes of an answer.
//! - [`record`]: what a backend writes (events and samples).
//! - [`behaviour`]: the pod-behaviour model, one pure state machine shared by
//!   every backend.
//! - [`sample`]: node and cluster samples, as every backend writes them.
//! - [`trouble`]: recent trouble per node and per workload, as schedulers see it.
//! - [`queue`]: the scheduling queue's order and back-off, for every backend.
//! - [`backend`]: the one interface every backend implements: play a run.
//! - [`sim`]: the in-process discrete-event backend.
//! - [`error`]: the crate's one error type, and [`error::UserInput`], which
//!   every crate's error implements for the command line's exit code.
//! - [`claims`]: the paper's claims the lab tests, and the roles a scenario
//!   plays for them (one catalogue for `workloads` and `results`).
//! - [`budget`], [`input`], [`json_input`], [`digest`]: reading what a user
//!   hands us, bounded, and checking it.
//! - [`text`]: outside text as messages show it (control characters
//!   escaped, capped) and a file's byte-order mark stripped.
//! - `testing` (feature `testing`): builders and placers for the tests of
//!   every crate above.

pub mod backend;
pub mod behaviour;
pub mod budget;
pub mod claims;
pub mod decision;
pub mod digest;
pub mod dist;
pub mod error;
pub mod error_text;
pub mod explanation;
pub mod input;
pub mod json_input;
pub mod node;
pub mod pod;
pub mod policy;
pub mod queue;
pub mod record;
pub mod resources;
pub mod rng;
pub mod sample;
pub mod sim;
#[cfg(feature = "testing")]
pub mod testing;
pub mod text;
pub mod time;
pub mod timeline;
pub mod timing;
pub mod trouble;
pub mod verdict;
pub mod view;

pub use claims::{ClaimName, ClaimRole, ClaimUse};
pub use dist::Dist;
pub use error::{Error, Result};
pub use node::{NodeCondition, NodeId, NodePool, NodeSpec, NodeState, Provisioning, Taint, TaintEffect};
pub use pod::{
    Behaviour, PodId, PodSlot, PodSpec, QosClass, RestartPolicy, Toleration, TolerationOperator, WorkloadId,
};
pub use policy::Scheduler;
pub use record::{Event, EventKind, Record, RecordSink};
pub use resources::Resources;
pub use time::{Span, Time};
pub use timeline::{Action, TimedAction, Timeline, Workload};
pub use view::{BoundPod, ClusterView, Nomination, PendingPod, Placement, WorkloadHistory};

/// `eprintln!` for a note to the person at the terminal (progress, a
/// warning), which drops the line when standard error is closed or full
/// instead of panicking: a note must never end a command.
#[macro_export]
macro_rules! noteln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}
