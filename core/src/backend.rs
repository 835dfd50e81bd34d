//! The one seam between a scenario run and where it is played: a backend
//! plays one (scenario, arm, seed) timeline with the arm's policy into a
//! record sink and returns what the run did. The simulator
//! ([`crate::sim::SimBackend`]) and the backend over API servers
//! (`kube-backend`) implement it; local, kind and GKE provisioning only hand
//! the latter a connected cluster. The caller (the command line) checks its
//! flags, prepares the run folder and asks a backend for each run, never
//! what kind of backend it is.

use crate::policy::Scheduler;
use crate::record::RecordSink;
use crate::timeline::Timeline;
use hdrhistogram::Histogram;

/// How often a backend reports progress over one run: this many steps of scenario time.
pub const PROGRESS_STEPS: u64 = 200;

/// One run to play.
pub struct RunRequest<'a> {
    /// the scenario expanded for `seed`
    pub timeline: Timeline,
    pub arm: &'a str,
    pub seed: u64,
    /// the arm's policy; `None` exactly when the backend's cluster decides
    /// the arm itself ([`Backend::decided_by_cluster`])
    pub policy: Option<Box<dyn Scheduler>>,
}

impl std::fmt::Debug for RunRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunRequest")
            .field("arm", &self.arm)
            .field("seed", &self.seed)
            .field("policy", &self.policy.is_some())
            .finish_non_exhaustive()
    }
}

/// Told how far a run has come. A backend calls it between decisions,
/// never inside one, so what it does there (drawing a progress bar,
/// writing decision records out) is never counted as the policy's time.
pub trait RunObserver: Sync {
    /// `done` of [`PROGRESS_STEPS`] steps of the run's scenario time have
    /// been played; `done` never decreases, and the last call of a run says
    /// [`PROGRESS_STEPS`].
    fn progressed(&self, done: u64);
}

/// An observer that does nothing, for callers that need no progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unobserved;

impl RunObserver for Unobserved {
    fn progressed(&self, _done: u64) {}
}

/// The wall-clock time of each of the policy's decisions in a run.
#[derive(Debug, Clone)]
pub struct PolicyTimes {
    /// nanoseconds per decision
    pub nanos: Histogram<u64>,
    /// whether the simulator charged them to the run's virtual time
    pub charged: bool,
}

/// What one run did, as its backend tells it.
#[derive(Debug, Clone)]
pub struct Played<F> {
    /// the scenario seconds played
    pub scenario_seconds: f64,
    /// the policy's decision times; `None` when the cluster decided the arm
    pub policy_times: Option<PolicyTimes>,
    /// what the backend says about the run in its manifest (`None` on the simulator)
    pub facts: Option<F>,
}

/// Where runs are played.
pub trait Backend: Sync {
    type Error: std::error::Error + Send + Sync + 'static;
    /// What the run manifest says about a run on this backend.
    type RunFacts: serde::Serialize;

    /// The backend's name in manifests and messages (`sim`, `local`, `kube`, `kind`, `gke`).
    fn name(&self) -> &'static str;

    /// How many runs may play at once; `None` for as many as the caller
    /// likes. Runs on one real cluster would see each other's pods and nodes.
    fn max_parallel_runs(&self) -> Option<usize>;

    /// The scheduler of the cluster that decides `arm` itself (such an arm
    /// is played without a policy), or `None` when the arm's policy decides.
    fn decided_by_cluster(&self, arm: &str) -> Option<ClusterScheduler>;

    /// Plays `run` to its end, writing every record into `sink` (which the
    /// caller finishes), and tears down whatever the run made, also after an
    /// error.
    fn play(
        &self,
        run: RunRequest<'_>,
        sink: &mut (dyn RecordSink + Send),
        observer: &dyn RunObserver,
    ) -> Result<Played<Self::RunFacts>, Self::Error>;
}

/// A scheduler of the cluster's own that decides an arm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterScheduler {
    /// what it is, in words (`kube-scheduler`, `in-cluster scheduler`)
    pub kind: &'static str,
    /// the `schedulerName` its pods carry
    pub scheduler_name: String,
}
