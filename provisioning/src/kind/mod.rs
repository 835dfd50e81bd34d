//! A kind cluster made for a scenario: one worker per scenario node (up to
//! a cap; optionally the rest as emulated nodes), the two images built and
//! loaded, the in-cluster scheduler deployed, and the cluster deleted when
//! the [`KindCluster`] guard is dropped unless kept.
//!
//! [`KindPlan::new`] decides everything up front (config, commands) without
//! touching anything, so `--dry-run` prints exactly what [`KindCluster::up`]
//! and the guard's drop run through the [`CommandRunner`].

pub mod config;
pub mod faults;

pub use config::{KindConfig, KindNode, WORKER_LABEL};
pub use faults::{KindFaultMode, KindFaults};

use super::external::{CommandPlan, CommandRunner, ExternalCommand, ExternalError};
use super::scheduler_deploy::Images;
use schedlab_core::node::NodeSpec;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The most workers a kind cluster gets by default: each is a container
/// running a kubelet and containerd on this one machine.
pub const DEFAULT_MAX_WORKERS: usize = 20;
/// `kind create cluster --wait`.
pub const CREATE_WAIT: &str = "120s";

/// An error of the kind provisioner.
#[derive(Debug, thiserror::Error)]
pub enum KindError {
    #[error(
        "the scenario has {nodes} nodes but a kind cluster gets at most {max} workers here \
         (lower the node count, e.g. `--set nodes={max}`, raise --kind-max-workers, or play the rest \
         as emulated nodes with --kind-extra-emulated)"
    )]
    TooManyNodes { nodes: usize, max: usize },
    #[error("the scenario has no nodes")]
    NoNodes,
    #[error("kind cluster name {0:?}: give lower-case letters, digits and '-' (at most 40, starting with a letter)")]
    BadName(String),
    #[error("--kind-max-workers must be at least 1")]
    NoWorkers,
    #[error("writing the kind config: {0}")]
    Yaml(String),
    #[error("{what} {}: {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Command(#[from] ExternalError),
    #[error("interrupted; the kind cluster is being deleted")]
    Interrupted,
}

impl KindError {
    /// Whether the user's input is at fault (exit code 2).
    pub fn is_input_error(&self) -> bool {
        match self {
            KindError::TooManyNodes { .. } | KindError::NoNodes | KindError::BadName(_) | KindError::NoWorkers => true,
            KindError::Yaml(_) | KindError::Io { .. } | KindError::Command(_) | KindError::Interrupted => false,
        }
    }
}

/// How to make the kind cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct KindOptions {
    /// the kind cluster's name (its nodes are `<name>-control-plane`, `<name>-worker`, ...)
    pub name: String,
    /// where the config and the kubeconfig go (created by `up`, removed by the guard unless kept)
    pub work_dir: PathBuf,
    /// the repository root: the docker build context and the kustomize overlays
    pub repo_root: PathBuf,
    pub max_workers: usize,
    /// play the nodes beyond `max_workers` as emulated nodes
    pub extra_emulated: bool,
    /// keep the cluster (and work folder) after the run
    pub keep: bool,
    /// `kind create cluster --image` (None: kind's default node image)
    pub node_image: Option<String>,
    /// build the images with docker before loading them
    pub build_images: bool,
    pub images: Images,
    pub fault_mode: KindFaultMode,
}

impl KindOptions {
    /// Defaults for cluster `name`, working in `work_dir`, building from `repo_root`.
    pub fn new(name: &str, work_dir: &Path, repo_root: &Path) -> KindOptions {
        KindOptions {
            name: name.to_string(),
            work_dir: work_dir.to_path_buf(),
            repo_root: repo_root.to_path_buf(),
            max_workers: DEFAULT_MAX_WORKERS,
            extra_emulated: false,
            keep: false,
            node_image: None,
            build_images: true,
            images: Images::dev(),
            fault_mode: KindFaultMode::Stop,
        }
    }
}

/// Where a scenario node is played.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// by the kind worker of this name
    Worker(String),
    /// by the node emulator, as an API object of the run
    Emulated,
}

/// Everything a kind cluster for a scenario will be, decided without side effects.
#[derive(Debug, Clone)]
pub struct KindPlan {
    pub opts: KindOptions,
    /// per scenario node, in NodeId order
    pub placement: Vec<Placement>,
    /// the scenario nodes the workers play, in worker order
    pub workers: Vec<NodeSpec>,
    /// the scenario nodes played as emulated nodes, in NodeId order
    pub emulated: Vec<NodeSpec>,
    pub config: KindConfig,
    pub config_yaml: String,
}

impl KindPlan {
    /// Plans a cluster for `nodes` (a timeline's nodes).
    pub fn new(nodes: &[NodeSpec], opts: KindOptions) -> crate::Result<KindPlan> {
        check_name(&opts.name)?;
        if opts.max_workers == 0 {
            return Err(KindError::NoWorkers.into());
        }
        if nodes.is_empty() {
            return Err(KindError::NoNodes.into());
        }
        if nodes.len() > opts.max_workers && !opts.extra_emulated {
            return Err(KindError::TooManyNodes {
                nodes: nodes.len(),
                max: opts.max_workers,
            }
            .into());
        }
        let real = real_nodes(nodes, opts.max_workers);
        let mut placement = Vec::with_capacity(nodes.len());
        let mut workers = Vec::new();
        let mut emulated = Vec::new();
        for (i, spec) in nodes.iter().enumerate() {
            if real[i] {
                placement.push(Placement::Worker(config::worker_name(&opts.name, workers.len())));
                workers.push(spec.clone());
            } else {
                placement.push(Placement::Emulated);
                emulated.push(spec.clone());
            }
        }
        let config = config::config(&workers, opts.node_image.as_deref())?;
        let config_yaml = config::to_yaml(&config)?;
        Ok(KindPlan {
            opts,
            placement,
            workers,
            emulated,
            config,
            config_yaml,
        })
    }

    pub fn config_path(&self) -> PathBuf {
        self.opts.work_dir.join("kind-config.yaml")
    }

    /// The kubeconfig kind writes for this cluster (not the user's own).
    pub fn kubeconfig_path(&self) -> PathBuf {
        self.opts.work_dir.join("kubeconfig")
    }

    /// The context kind names in it.
    pub fn context(&self) -> String {
        format!("kind-{}", self.opts.name)
    }

    /// The kind workers' names, in worker order.
    pub fn worker_names(&self) -> Vec<String> {
        (0..self.workers.len())
            .map(|i| config::worker_name(&self.opts.name, i))
            .collect()
    }

    /// Builds, creates and loads: the commands of [`KindCluster::up`], in order.
    pub fn up_commands(&self) -> Vec<ExternalCommand> {
        let name = self.opts.name.as_str();
        let mut out = Vec::new();
        if self.opts.build_images {
            for (target, tag) in [
                ("agmarl-scheduler", &self.opts.images.scheduler),
                ("workload", &self.opts.images.workload),
            ] {
                out.push(
                    ExternalCommand::new(
                        "docker",
                        ["build", "-f", "deploy/Dockerfile", "--target", target, "-t", tag, "."],
                        format!("build the {target} image"),
                    )
                    .in_dir(&self.opts.repo_root),
                );
            }
        }
        let mut create = vec![
            "create".to_string(),
            "cluster".into(),
            "--name".into(),
            name.into(),
            "--config".into(),
            self.config_path().to_string_lossy().into_owned(),
            "--kubeconfig".into(),
            self.kubeconfig_path().to_string_lossy().into_owned(),
            "--wait".into(),
            CREATE_WAIT.into(),
        ];
        if let Some(image) = &self.opts.node_image {
            create.extend(["--image".to_string(), image.clone()]);
        }
        out.push(ExternalCommand::new(
            "kind",
            create,
            format!(
                "create kind cluster {name}: a control plane and {} workers",
                self.workers.len()
            ),
        ));
        for tag in [&self.opts.images.scheduler, &self.opts.images.workload] {
            out.push(ExternalCommand::new(
                "kind",
                ["load", "docker-image", tag.as_str(), "--name", name],
                format!("load {tag} into the cluster's nodes"),
            ));
        }
        out
    }

    /// Deletes the cluster: what the guard runs on drop unless kept.
    pub fn delete_command(&self) -> ExternalCommand {
        ExternalCommand::new(
            "kind",
            [
                "delete",
                "cluster",
                "--name",
                self.opts.name.as_str(),
                "--kubeconfig",
                &self.kubeconfig_path().to_string_lossy(),
            ],
            format!("delete kind cluster {}", self.opts.name),
        )
    }

    /// The whole plan, as `--dry-run` prints it; `deploy` are the scheduler's
    /// deploy steps and `runs` what happens between deploying and deleting.
    pub fn plan(&self, deploy: CommandPlan, runs: &str) -> CommandPlan {
        let mut plan = CommandPlan::default();
        plan.in_process(format!(
            "write the kind config ({} lines, below) to {}",
            self.config_yaml.lines().count(),
            self.config_path().display()
        ));
        for command in self.up_commands() {
            plan.command(command);
        }
        plan.extend(deploy);
        plan.in_process(format!(
            "annotate the {} workers with their pools' hourly prices",
            self.workers.len()
        ));
        plan.in_process(runs.to_string());
        if self.opts.keep {
            plan.in_process(format!(
                "keep kind cluster {} (--keep): delete it with `{}`",
                self.opts.name,
                self.delete_command().shell()
            ));
        } else {
            plan.command(self.delete_command());
        }
        plan
    }
}

/// Which nodes kind plays (true) when only `max` may be workers: every
/// pool keeps its share (largest remainder), the first of each pool real.
fn real_nodes(nodes: &[NodeSpec], max: usize) -> Vec<bool> {
    if nodes.len() <= max {
        return vec![true; nodes.len()];
    }
    let mut pools: Vec<(&str, usize)> = Vec::new();
    for spec in nodes {
        match pools.iter_mut().find(|(name, _)| *name == spec.pool.name) {
            Some((_, count)) => *count += 1,
            None => pools.push((&spec.pool.name, 1)),
        }
    }
    let total = nodes.len();
    let mut quota: Vec<usize> = pools.iter().map(|(_, c)| c * max / total).collect();
    let mut by_remainder: Vec<usize> = (0..pools.len()).collect();
    by_remainder.sort_by_key(|&i| std::cmp::Reverse((pools[i].1 * max) % total));
    let mut left = max - quota.iter().sum::<usize>();
    for i in by_remainder {
        if left == 0 {
            break;
        }
        if quota[i] < pools[i].1 {
            quota[i] += 1;
            left -= 1;
        }
    }
    let mut taken = vec![0usize; pools.len()];
    nodes
        .iter()
        .map(|spec| {
            let p = pools.iter().position(|(name, _)| *name == spec.pool.name).unwrap_or(0);
            let real = taken[p] < quota[p];
            taken[p] += 1;
            real
        })
        .collect()
}

fn check_name(name: &str) -> Result<(), KindError> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(KindError::BadName(name.to_string()))
    }
}

/// A kind cluster made by [`KindCluster::up`]; deleted (with its work folder)
/// when dropped, unless kept. Dropping it after an error or Ctrl-C deletes
/// what was created so far.
#[derive(Debug)]
pub struct KindCluster {
    plan: KindPlan,
    runner: Arc<CommandRunner>,
    armed: bool,
}

impl KindCluster {
    /// Writes the config and runs the plan's up commands; stops between
    /// commands when `cancel` is set. On error the cluster is deleted before
    /// this returns (unless kept).
    pub fn up(plan: KindPlan, runner: Arc<CommandRunner>, cancel: Option<&AtomicBool>) -> crate::Result<KindCluster> {
        let mut cluster = KindCluster {
            plan,
            runner,
            armed: false,
        };
        let dir = cluster.plan.opts.work_dir.clone();
        if !cluster.runner.is_dry_run() {
            std::fs::create_dir_all(&dir).map_err(|source| KindError::Io {
                what: "cannot create",
                path: dir.clone(),
                source,
            })?;
            let path = cluster.plan.config_path();
            std::fs::write(&path, &cluster.plan.config_yaml).map_err(|source| KindError::Io {
                what: "cannot write",
                path: path.clone(),
                source,
            })?;
        }
        // from here on, what fails leaves something to delete
        cluster.armed = true;
        for command in cluster.plan.up_commands() {
            if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
                return Err(KindError::Interrupted.into());
            }
            cluster.runner.run(&command)?;
        }
        Ok(cluster)
    }

    pub fn plan(&self) -> &KindPlan {
        &self.plan
    }

    /// Deletes the cluster now (unless kept), reporting a failure.
    pub fn down(mut self) -> crate::Result<()> {
        self.armed = false;
        Ok(self.delete()?)
    }

    fn delete(&self) -> Result<(), KindError> {
        if self.plan.opts.keep {
            schedlab_core::noteln!(
                "keeping kind cluster {} (kubeconfig {}); delete it with `{}`",
                self.plan.opts.name,
                self.plan.kubeconfig_path().display(),
                self.plan.delete_command().shell()
            );
            return Ok(());
        }
        let outcome = self.runner.run(&self.plan.delete_command());
        if !self.runner.is_dry_run() {
            let _ = std::fs::remove_dir_all(&self.plan.opts.work_dir);
        }
        outcome.map(|_| ()).map_err(KindError::from)
    }
}

impl Drop for KindCluster {
    fn drop(&mut self) {
        if self.armed
            && let Err(err) = self.delete()
        {
            tracing::warn!(error = %err, cluster = %self.plan.opts.name, "deleting the kind cluster failed");
            schedlab_core::noteln!("warning: deleting kind cluster {} failed: {err}", self.plan.opts.name);
        }
    }
}

#[cfg(test)]
mod tests;

/// Loads an image tarball (a docker archive, as [`crate::images::write_docker_archive`] writes it) into every node
/// of the kind cluster `cluster`, so pods find it without a registry.
pub fn load_archive_command(cluster: &str, tarball: &Path) -> ExternalCommand {
    ExternalCommand::new(
        "kind",
        [
            std::ffi::OsStr::new("load"),
            std::ffi::OsStr::new("image-archive"),
            tarball.as_os_str(),
            std::ffi::OsStr::new("--name"),
            std::ffi::OsStr::new(cluster),
        ],
        format!(
            "load the image {} into kind cluster {cluster}'s nodes",
            tarball.display()
        ),
    )
}
