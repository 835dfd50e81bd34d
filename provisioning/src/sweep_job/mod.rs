//! The Kubernetes objects of a sweep: what `schedlab sweep run --on kube`
//! submits for one attempt of a sweep (a grid of cells, each one simulator
//! or training run), as pure functions of a [`SweepJobSpec`], and the one
//! check against the cluster before anything is created ([`preflight`]).
//!
//! One submission is a ServiceAccount without API access, one immutable
//! ConfigMap holding the plan and the attempt's cell list, and the Job(s)
//! that run the cells, in one of two [`JobShape`]s chosen from the server's
//! version: one Indexed Job with retries per index where the server has
//! them (1.29 and later), else one Job per cell.
//!
//! Building the objects does no HTTP, so `--dry-run` shows exactly what
//! `run` creates ([`SweepObjects::to_yaml`]).

mod error;
mod names;
mod objects;
mod preflight;
mod shape;
mod spec;
mod summary;
mod yaml;

#[cfg(test)]
mod tests;

pub use error::{Denied, SweepJobError};
pub use names::{MAX_NAME_BASE, name_base};
pub use objects::{SweepObjects, cell_command, objects};
pub use preflight::{Permission, preflight, required_permissions, server_shape};
pub use shape::{INDEXED_SINCE, JobShape};
pub use spec::{PodSettings, SweepJobSpec};

/// Where the image holds the schedlab binary.
pub const BINARY: &str = "/usr/local/bin/schedlab";
/// Where the plan's ConfigMap is mounted, read-only.
pub const PLAN_DIR: &str = "/sweep/plan";
/// Where a volume claim is mounted for the cells' folders.
pub const OUT_DIR: &str = "/sweep/out";
/// The writable emptyDir (the root filesystem is read-only).
pub const TMP_DIR: &str = "/tmp";
/// Where a cell writes its folder when it streams it back (no volume claim).
pub const STREAM_OUT_DIR: &str = "/tmp/schedlab-cell";
/// The cell container's name.
pub const CONTAINER: &str = "cell";
/// The uid (and gid) the cell image is built for: distroless' nonroot.
pub const CELL_UID: i64 = 65532;

/// The most cells one submission runs: Kubernetes caps an Indexed Job's
/// completions at 10^5 when `backoffLimitPerIndex` is set and
/// `maxFailedIndexes` is not (which a sweep needs: a failed cell must not
/// stop the others).
pub const MAX_CELLS: usize = 100_000;
/// The most bytes a ConfigMap holds (its data and binaryData together).
pub const CONFIG_MAP_MAX_BYTES: usize = 1 << 20;

/// The labels every object of a sweep carries.
pub const LABEL_APP: &str = "app.kubernetes.io/name";
pub const APP: &str = "schedlab-sweep";
pub const LABEL_MANAGED_BY: &str = "app.kubernetes.io/managed-by";
pub const MANAGER: &str = "schedlab";
/// The sweep's id: `status` lists a sweep's Jobs and pods by it.
pub const LABEL_SWEEP: &str = "schedlab.io/sweep";
/// Which submission of the sweep (1 for `run`, 2.. for each `resume`).
pub const LABEL_ATTEMPT: &str = "schedlab.io/attempt";
/// The plan index of a per-cell Job and its pod (the per-cell shape only:
/// an Indexed Job's pods carry their completion index instead).
pub const LABEL_CELL: &str = "schedlab.io/cell";
/// Kueue's queue, on the Job(s) only, when a queue is given.
pub const KUEUE_QUEUE_LABEL: &str = "kueue.x-k8s.io/queue-name";
