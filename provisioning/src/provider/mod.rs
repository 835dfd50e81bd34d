//! The provider seam: every real cluster the runs can play on (a local
//! control plane with emulated nodes, one with real nodes of this machine,
//! any cluster of a kubeconfig, kind, GKE) is a [`ClusterProvider`]. The
//! binary picks one from its flags and then only calls it: check the
//! provider's settings against the runs before anything starts, plan (what
//! `--dry-run` prints: every command, config and cost, nothing executed),
//! and bring the cluster up to a connected backend that holds its teardown
//! guard. One Ctrl-C ([`Interrupt`]) stops whichever step is running.

pub mod gke;
pub mod kind;
pub mod kubeconfig;
pub mod local;
pub mod real_nodes;

use crate::interrupt::Interrupt;
use crate::local::ScopedCluster;
use crate::real_cluster::IN_CLUSTER_ARM;
use kube_backend::backend::{ClientRate, KubeBackend};
use schedlab_core::NodeSpec;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// What the runs on the cluster will be, for checks and plans.
#[derive(Debug, Clone, Copy)]
pub struct Runs<'a> {
    /// the scenario's nodes (of its first seed: every seed has the same)
    pub nodes: &'a [NodeSpec],
    /// every arm, in order
    pub arms: &'a [String],
    /// the arms a scheduler already in the cluster decides
    pub external: &'a BTreeSet<String>,
    pub seeds: usize,
    /// how long one run plays, in scenario seconds
    pub scenario_seconds: f64,
}

/// How schedlab's clients talk to any real cluster.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Connect {
    /// scenario seconds per wall second
    pub time_scale: f64,
    /// schedlab's client rate, when given; else the provider's default
    pub qps: Option<f32>,
    pub burst: Option<u32>,
}

impl Default for Connect {
    fn default() -> Connect {
        Connect {
            time_scale: 1.0,
            qps: None,
            burst: None,
        }
    }
}

impl Connect {
    /// The rate given, each part falling back to `default`'s.
    pub fn rate(&self, default: ClientRate) -> ClientRate {
        ClientRate {
            qps: self.qps.unwrap_or(default.qps),
            burst: self.burst.unwrap_or(default.burst),
        }
    }
}

/// client-go's rate, the default of clusters schedlab did not start.
pub const CLIENT_GO_RATE: ClientRate = ClientRate {
    qps: kube_backend::client::CLIENT_GO_QPS,
    burst: kube_backend::client::CLIENT_GO_BURST,
};

/// A setting of a provider that cannot be used (bad input, exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadSetting(pub String);

/// A real cluster the runs can play on.
pub trait ClusterProvider {
    /// The cluster's kind as `--cluster` names it: local, kube, kind, gke.
    fn name(&self) -> &'static str;

    /// Checks the provider's settings against the runs before anything is
    /// started or written; every error is the user's input.
    fn check(&self, runs: &Runs<'_>) -> crate::Result<()>;

    /// Whether the runs' `agmarl` arm is the in-cluster scheduler the
    /// provider deploys from its image (so flags that change schedlab's own
    /// agmarl arm would change nothing there).
    fn deploys_in_cluster_scheduler(&self, runs: &Runs<'_>) -> bool {
        let _ = runs;
        false
    }

    /// What [`ClusterProvider::up`] would do, as `--dry-run` prints it:
    /// nothing is executed and nothing is written.
    fn plan(&self, runs: &Runs<'_>) -> crate::Result<String>;

    /// Makes the cluster ready (brings it up, or connects to it) and
    /// returns the backend that plays the runs there, holding whatever must
    /// be taken down after them. `interrupt` stops it between steps, and is
    /// the runs' cancellation too.
    fn up(self: Box<Self>, runs: &Runs<'_>, interrupt: &Interrupt) -> crate::Result<Connected>;
}

/// What the manifests say about the cluster a run played on.
#[derive(Debug, Clone, Serialize)]
pub struct ClusterFacts {
    pub server: String,
    /// scenario seconds per wall second
    pub time_scale: f64,
    pub nodes: &'static str,
    /// the cluster's kube-scheduler (the `default` arm), when known
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_scheduler_client: Option<ClientRate>,
    /// schedlab's watch-and-bind loop (every other arm)
    pub project_scheduler_client: ClientRate,
    /// kind and GKE: the cluster made or checked for the scenario
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<crate::real_cluster::ProvisionFacts>,
}

/// A connected real cluster, for the whole invocation: the backend that
/// plays the runs, what the manifests say about it, and what must live as
/// long as it.
pub struct Connected {
    pub backend: KubeBackend,
    pub facts: ClusterFacts,
    /// a control plane brought up for this invocation, taken down when
    /// dropped (after the backend: fields drop in order)
    _plane: Option<ScopedCluster>,
}

impl std::fmt::Debug for Connected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connected").field("facts", &self.facts).finish()
    }
}

/// What `--dry-run` says the runs will do: who binds each arm's pods, and
/// on what. `pods` says where pods run (an image, or the node emulator).
pub fn runs_line(runs: &Runs<'_>, in_cluster: bool, pods: &str, faults: &str) -> String {
    let who: Vec<String> = runs
        .arms
        .iter()
        .map(|arm| {
            let by = match arm.as_str() {
                a if runs.external.contains(a) => "the cluster's own scheduler of that name",
                "default" => "the cluster's kube-scheduler",
                a if in_cluster && a == IN_CLUSTER_ARM => "the in-cluster agmarl-scheduler",
                _ => "schedlab's bind loop",
            };
            format!("{arm} by {by}")
        })
        .collect();
    let plural = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    format!(
        "play {} ({} × {}): {}; pods run {pods}; node faults: {faults}",
        plural(runs.arms.len() * runs.seeds, "run"),
        plural(runs.arms.len(), "arm"),
        plural(runs.seeds, "seed"),
        who.join(", "),
    )
}

/// The backend over `conn`, its runs cancelled by `interrupt`, with what
/// the manifest says about the cluster and what must outlive the backend.
pub(crate) fn connected(
    conn: kube_backend::backend::Connection,
    facts: ClusterFacts,
    interrupt: &Interrupt,
    plane: Option<ScopedCluster>,
) -> Connected {
    Connected {
        backend: KubeBackend::new(conn, interrupt.token()),
        facts,
        _plane: plane,
    }
}

/// The backend over a cluster made ready for the runs (kind, GKE, real
/// nodes of this machine), and what the manifest says about it.
pub(crate) fn connected_to(
    name: &'static str,
    provisioned: crate::real_cluster::up::Provisioned,
    rate: ClientRate,
    runtime: tokio::runtime::Runtime,
    interrupt: &Interrupt,
    time_scale: f64,
) -> Connected {
    let crate::real_cluster::up::Provisioned {
        admin,
        client,
        facts,
        cluster,
    } = provisioned;
    let facts = ClusterFacts {
        server: admin.server().to_string(),
        time_scale,
        nodes: if cluster.all_real() {
            "existing"
        } else {
            "existing+emulated"
        },
        default_scheduler_client: None,
        project_scheduler_client: rate,
        provisioned: Some(facts),
    };
    connected(
        kube_backend::backend::Connection {
            name,
            scheduler: admin.clone(),
            admin,
            admin_kubeconfig: client.kubeconfig,
            admin_context: client.context,
            time_scale,
            project_rate: rate,
            nodes: kube_backend::run::NodeSource::Existing {
                selector: cluster.selector.clone(),
            },
            real: Some(Box::new(cluster)),
            runtime,
        },
        facts,
        interrupt,
        None,
    )
}

/// A folder of its own for a made cluster's config and kubeconfig.
pub fn work_dir(kind: &str, name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("schedlab-{kind}-{name}-{}", std::process::id()))
}

/// The kubeconfig kubectl would use: the first of KUBECONFIG's files that
/// exists, else ~/.kube/config.
pub fn default_kubeconfig() -> Option<PathBuf> {
    if let Some(list) = std::env::var_os("KUBECONFIG")
        && !list.is_empty()
    {
        return std::env::split_paths(&list).find(|p| p.exists());
    }
    let home = std::env::var_os("HOME")?;
    Some(PathBuf::from(home).join(".kube").join("config"))
}

/// The async runtime a kube backend runs on.
pub(crate) fn runtime() -> crate::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::Error::from(crate::real_cluster::up::UpError::Runtime(e)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler_deploy::Images;

    #[test]
    fn runs_line_says_who_schedules_each_arm() {
        let arms = ["default", "agmarl", "binpack", "my-scheduler"].map(String::from);
        let external = BTreeSet::from(["my-scheduler".to_string()]);
        let runs = Runs {
            nodes: &[],
            arms: &arms,
            external: &external,
            seeds: 2,
            scenario_seconds: 60.0,
        };
        let line = runs_line(&runs, true, &Images::dev().workload, "docker");
        assert!(line.starts_with("play 8 runs (4 arms × 2 seeds)"), "{line}");
        assert!(
            line.contains("my-scheduler by the cluster's own scheduler of that name"),
            "{line}"
        );
        assert!(line.contains("default by the cluster's kube-scheduler"), "{line}");
        assert!(line.contains("agmarl by the in-cluster agmarl-scheduler"), "{line}");
        assert!(line.contains("binpack by schedlab's bind loop"), "{line}");
        assert!(line.contains("schedlab/workload:dev"), "{line}");
        let emulated = runs_line(&runs, false, "on the node emulator", "none");
        assert!(emulated.contains("agmarl by schedlab's bind loop"), "{emulated}");
    }

    #[test]
    fn a_given_rate_part_overrides_the_default() {
        let connect = Connect {
            qps: Some(7.0),
            ..Connect::default()
        };
        assert_eq!(
            connect.rate(CLIENT_GO_RATE),
            ClientRate {
                qps: 7.0,
                burst: CLIENT_GO_RATE.burst
            }
        );
    }
}
