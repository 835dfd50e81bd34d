//! Running scenarios on GKE: the current kubeconfig context (or a given
//! one) is used as it is, after checking that its node pools fit the
//! scenario ([`pools`]); a cluster is created and deleted only when asked
//! (`--provision`), after printing what it will cost ([`cost`]).
//!
//! [`GkePlan`] decides every gcloud command up front, so `--dry-run` prints
//! exactly what [`GkeCluster::create`] and the guard's drop run through the
//! [`CommandRunner`].

pub mod cost;
pub mod faults;
pub mod nodes;
pub mod pools;

pub use cost::{CostEstimate, estimate};
pub use faults::{GkeFaultMode, GkeFaults};
pub use pools::{NodeInfo, PoolMatch, PoolNeed, PoolsMissing, check_pools, pool_needs};

use super::external::{CommandPlan, CommandRunner, ExternalCommand, ExternalError};
use kube_backend::{labels, objects};
use schedlab_core::node::Provisioning;
use std::path::PathBuf;
use std::sync::Arc;

/// An error of the GKE provisioner.
#[derive(Debug, thiserror::Error)]
pub enum GkeError {
    #[error("--zone {0:?}: give a zone such as us-central1-a (a region such as us-central1 is not enough)")]
    BadZone(String),
    #[error("--zone is needed with {0}")]
    NoZone(&'static str),
    #[error("GKE cluster name {0:?}: give lower-case letters, digits and '-' (at most 40, starting with a letter)")]
    BadName(String),
    #[error("node pool name {0:?} (from the scenario's pool) is not a valid GKE node pool name")]
    BadPool(String),
    #[error("the scenario has no nodes")]
    NoNodes,
    #[error(transparent)]
    PoolsMissing(#[from] PoolsMissing),
    #[error(transparent)]
    Command(#[from] ExternalError),
}

impl GkeError {
    /// Whether the user's input is at fault (exit code 2).
    pub fn is_input_error(&self) -> bool {
        match self {
            GkeError::BadZone(_)
            | GkeError::NoZone(_)
            | GkeError::BadName(_)
            | GkeError::BadPool(_)
            | GkeError::NoNodes
            | GkeError::PoolsMissing(_) => true,
            GkeError::Command(_) => false,
        }
    }
}

/// How to use or make the GKE cluster.
#[derive(Debug, Clone, PartialEq)]
pub struct GkeOptions {
    /// the cluster to create with `provision`
    pub cluster_name: String,
    pub zone: Option<String>,
    /// create the cluster before and delete it after
    pub provision: bool,
    /// with `provision`: keep the cluster
    pub keep: bool,
    /// where `provision` writes the new cluster's credentials (gcloud's
    /// KUBECONFIG), so the user's kubeconfig is left alone
    pub kubeconfig: PathBuf,
}

/// Checks a GCP zone's form: `<region>-<letter>`, the region being
/// `<area>-<direction><digit(s)>` (us-central1-a, europe-west4-b, asia-northeast1-c).
pub fn check_zone(zone: &str) -> crate::Result<()> {
    let bad = || GkeError::BadZone(zone.to_string());
    let parts: Vec<&str> = zone.split('-').collect();
    let [area, direction, letter] = parts.as_slice() else {
        return Err(bad().into());
    };
    let lower = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase());
    let digits_at = direction.find(|c: char| c.is_ascii_digit()).ok_or_else(bad)?;
    let (word, number) = direction.split_at(digits_at);
    let ok = lower(area)
        && lower(word)
        && !number.is_empty()
        && number.chars().all(|c| c.is_ascii_digit())
        && letter.len() == 1
        && lower(letter);
    if ok { Ok(()) } else { Err(bad().into()) }
}

fn check_name(name: &str) -> Result<(), GkeError> {
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
        Err(GkeError::BadName(name.to_string()))
    }
}

/// A GKE node pool's name for a scenario pool.
pub fn node_pool_name(pool: &str) -> String {
    objects::dns_label(&[pool]).chars().take(40).collect::<String>()
}

/// What a run on GKE will do, decided without side effects.
#[derive(Debug, Clone)]
pub struct GkePlan {
    pub opts: GkeOptions,
    pub needs: Vec<PoolNeed>,
}

impl GkePlan {
    pub fn new(needs: Vec<PoolNeed>, opts: GkeOptions) -> crate::Result<GkePlan> {
        if needs.is_empty() {
            return Err(GkeError::NoNodes.into());
        }
        if let Some(zone) = &opts.zone {
            check_zone(zone)?;
        }
        if opts.provision {
            check_name(&opts.cluster_name)?;
            if opts.zone.is_none() {
                return Err(GkeError::NoZone("--provision").into());
            }
            for need in &needs {
                let name = node_pool_name(&need.name);
                if name.is_empty() || !name.starts_with(|c: char| c.is_ascii_lowercase()) {
                    return Err(GkeError::BadPool(need.name.clone()).into());
                }
            }
        }
        Ok(GkePlan { opts, needs })
    }

    fn zone(&self) -> &str {
        self.opts.zone.as_deref().unwrap_or("")
    }

    /// `--node-labels` and `--node-taints` (and `--spot`) for a pool.
    fn pool_flags(need: &PoolNeed) -> Vec<String> {
        let mut node_labels = crate::kind::config::user_labels(&need.labels);
        node_labels.insert(labels::POOL.to_string(), objects::dns_label(&[&need.name]));
        node_labels.insert(
            labels::PROVISIONING.to_string(),
            match need.provisioning {
                Provisioning::OnDemand => "on-demand",
                Provisioning::Spot => "spot",
            }
            .to_string(),
        );
        let joined: Vec<String> = node_labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let mut flags = vec![
            "--machine-type".to_string(),
            need.machine_type.clone(),
            "--num-nodes".to_string(),
            need.count.to_string(),
            format!("--node-labels={}", joined.join(",")),
        ];
        if !need.taints.is_empty() {
            let taints: Vec<String> = need.taints.iter().map(ToString::to_string).collect();
            flags.push(format!("--node-taints={}", taints.join(",")));
        }
        if need.provisioning == Provisioning::Spot {
            flags.push("--spot".to_string());
        }
        flags
    }

    /// With `provision`: the cluster (its default pool playing the first
    /// scenario pool) and a node pool per further scenario pool. Empty without.
    pub fn create_commands(&self) -> Vec<ExternalCommand> {
        if !self.opts.provision {
            return Vec::new();
        }
        let name = self.opts.cluster_name.as_str();
        let zone = self.zone();
        let kubeconfig = self.opts.kubeconfig.to_string_lossy().into_owned();
        let mut out = Vec::new();
        for (i, need) in self.needs.iter().enumerate() {
            let mut args: Vec<String> = if i == 0 {
                vec!["container".into(), "clusters".into(), "create".into(), name.into()]
            } else {
                vec![
                    "container".into(),
                    "node-pools".into(),
                    "create".into(),
                    node_pool_name(&need.name),
                    "--cluster".into(),
                    name.into(),
                ]
            };
            args.extend(["--zone".to_string(), zone.to_string()]);
            args.extend(Self::pool_flags(need));
            let why = if i == 0 {
                format!(
                    "create GKE cluster {name}; its default pool plays pool {} ({} × {})",
                    need.name, need.count, need.machine_type
                )
            } else {
                format!(
                    "create node pool {} ({} × {})",
                    node_pool_name(&need.name),
                    need.count,
                    need.machine_type
                )
            };
            out.push(ExternalCommand::new("gcloud", args, why).with_env("KUBECONFIG", kubeconfig.clone()));
        }
        out
    }

    /// With `provision` and not `keep`: the cluster's deletion.
    pub fn delete_command(&self) -> Option<ExternalCommand> {
        (self.opts.provision && !self.opts.keep).then(|| {
            ExternalCommand::new(
                "gcloud",
                [
                    "container",
                    "clusters",
                    "delete",
                    self.opts.cluster_name.as_str(),
                    "--zone",
                    self.zone(),
                    "--quiet",
                ],
                format!("delete GKE cluster {}", self.opts.cluster_name),
            )
            .with_env("KUBECONFIG", self.opts.kubeconfig.to_string_lossy().into_owned())
        })
    }

    /// The whole plan as `--dry-run` prints it (the cost estimate is printed beside it).
    pub fn plan(&self, context: &str, deploy: CommandPlan, runs: &str) -> CommandPlan {
        let mut plan = CommandPlan::default();
        for command in self.create_commands() {
            plan.command(command);
        }
        let needs: Vec<String> = self
            .needs
            .iter()
            .map(|n| format!("{} ({} × {})", n.name, n.count, n.machine_type))
            .collect();
        plan.in_process(format!(
            "connect to {context}; check its node pools fit the scenario: {}",
            needs.join(", ")
        ));
        plan.in_process("label the nodes used with their scenario pool and annotate their hourly prices");
        plan.extend(deploy);
        plan.in_process(runs.to_string());
        match self.delete_command() {
            Some(delete) => plan.command(delete),
            None if self.opts.provision => plan.in_process(format!(
                "keep GKE cluster {} (--keep): delete it with `gcloud container clusters delete {} --zone {} --quiet`",
                self.opts.cluster_name,
                self.opts.cluster_name,
                self.zone()
            )),
            None => {}
        }
        plan
    }
}

/// A GKE cluster created by [`GkeCluster::create`], deleted when dropped
/// (also after an error or Ctrl-C) unless kept.
#[derive(Debug)]
pub struct GkeCluster {
    plan: GkePlan,
    runner: Arc<CommandRunner>,
    armed: bool,
}

impl GkeCluster {
    /// Runs the plan's create commands. On error, what was created is
    /// deleted before this returns (unless kept).
    pub fn create(plan: GkePlan, runner: Arc<CommandRunner>) -> crate::Result<GkeCluster> {
        let cluster = GkeCluster {
            plan,
            runner,
            armed: true,
        };
        for command in cluster.plan.create_commands() {
            cluster.runner.run(&command)?;
        }
        Ok(cluster)
    }

    pub fn plan(&self) -> &GkePlan {
        &self.plan
    }

    /// Deletes the cluster now (unless kept).
    pub fn down(mut self) -> crate::Result<()> {
        self.armed = false;
        Ok(self.delete()?)
    }

    fn delete(&self) -> Result<(), GkeError> {
        match self.plan.delete_command() {
            Some(delete) => self.runner.run(&delete).map(|_| ()).map_err(GkeError::from),
            None => {
                if self.plan.opts.provision {
                    schedlab_core::noteln!(
                        "keeping GKE cluster {} (--keep): it costs money until you delete it",
                        self.plan.opts.cluster_name
                    );
                }
                Ok(())
            }
        }
    }
}

impl Drop for GkeCluster {
    fn drop(&mut self) {
        if self.armed
            && let Err(err) = self.delete()
        {
            tracing::warn!(error = %err, "deleting the GKE cluster failed");
            schedlab_core::noteln!(
                "warning: deleting GKE cluster {} failed ({err}); delete it by hand, it costs money",
                self.plan.opts.cluster_name
            );
        }
    }
}

#[cfg(test)]
mod tests;
