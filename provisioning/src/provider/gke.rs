//! `--cluster gke`: a GKE cluster, the current kubeconfig context (or a
//! named one) with its node pools checked against the scenario; created
//! first and deleted after only when asked to provision one.

use super::{BadSetting, CLIENT_GO_RATE, ClusterProvider, Connect, Connected, Runs, default_kubeconfig, runs_line};
use crate::external::CommandRunner;
use crate::gke::{self, GkeOptions, GkePlan};
use crate::interrupt::Interrupt;
use crate::real_cluster::{gke_fault_line, up};
use crate::scheduler_deploy::{self, Images};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A GKE cluster for the scenario.
#[derive(Debug, Clone)]
pub struct GkeProvider {
    /// the cluster to make (with `provision`), its zone, where its credentials go
    pub opts: GkeOptions,
    /// without `provision`: the existing cluster's kubeconfig (None: KUBECONFIG, else ~/.kube/config)
    pub kubeconfig: Option<PathBuf>,
    /// without `provision`: its context (None: the current one)
    pub context: Option<String>,
    /// the registry holding agmarl-scheduler:dev and workload:dev
    pub image_registry: String,
    /// play node failures by stopping VMs (else by cordoning)
    pub allow_vm_faults: bool,
    /// the repository whose GKE overlay deploys the in-cluster scheduler
    pub repo: PathBuf,
    pub connect: Connect,
}

impl GkeProvider {
    fn gke_plan(&self, runs: &Runs<'_>) -> crate::Result<GkePlan> {
        if self.allow_vm_faults && !self.opts.provision && self.opts.zone.is_none() {
            tracing::debug!("VM faults will use each node's zone label");
        }
        GkePlan::new(gke::pool_needs(runs.nodes), self.opts.clone())
    }

    fn settings(&self) -> crate::Result<()> {
        let bad = |text: &str| Err(BadSetting(text.to_string()).into());
        if self.opts.keep && !self.opts.provision {
            return bad("--keep is for --provision: without it schedlab never creates or deletes a GKE cluster");
        }
        if self.image_registry.trim().is_empty() {
            return bad(
                "--cluster gke needs --image-registry: the registry holding agmarl-scheduler:dev and workload:dev",
            );
        }
        if self.opts.provision && (self.kubeconfig.is_some() || self.context.is_some()) {
            return bad("--provision connects to the cluster it creates; drop --kubeconfig/--context");
        }
        Ok(())
    }
}

impl ClusterProvider for GkeProvider {
    fn name(&self) -> &'static str {
        "gke"
    }

    fn check(&self, runs: &Runs<'_>) -> crate::Result<()> {
        self.settings()?;
        self.gke_plan(runs)?;
        if !self.opts.provision {
            let config = self.kubeconfig.clone().or_else(default_kubeconfig);
            if !config.as_deref().is_some_and(Path::exists) {
                return Err(BadSetting(format!(
                    "--cluster gke: no kubeconfig ({}); give --kubeconfig, set KUBECONFIG, or use --provision",
                    config.map_or_else(|| "none found".to_string(), |p| p.display().to_string())
                ))
                .into());
            }
        }
        Ok(())
    }

    fn deploys_in_cluster_scheduler(&self, _runs: &Runs<'_>) -> bool {
        true
    }

    fn plan(&self, runs: &Runs<'_>) -> crate::Result<String> {
        self.settings()?;
        let plan = self.gke_plan(runs)?;
        let images = Images::in_registry(&self.image_registry);
        let cost = if self.opts.provision {
            let cost = gke::estimate(
                &plan.needs,
                (runs.arms.len() * runs.seeds) as u64,
                runs.scenario_seconds,
                self.connect.time_scale,
            );
            format!("\n{}\n", cost.render())
        } else {
            String::new()
        };
        let context = if self.opts.provision {
            format!("the new cluster (credentials in {})", plan.opts.kubeconfig.display())
        } else {
            let config = self.kubeconfig.clone().or_else(default_kubeconfig);
            format!(
                "context {} of kubeconfig {}",
                self.context.as_deref().unwrap_or("(current)"),
                config.map_or_else(|| "(none found)".to_string(), |p| p.display().to_string())
            )
        };
        let deploy = scheduler_deploy::plan(&scheduler_deploy::overlay_dir(&self.repo, "gke"), &images);
        let runs = runs_line(runs, true, &images.workload, gke_fault_line(self.allow_vm_faults));
        Ok(format!("{cost}Plan:\n{}", plan.plan(&context, deploy, &runs).render()))
    }

    fn up(self: Box<Self>, runs: &Runs<'_>, interrupt: &Interrupt) -> crate::Result<Connected> {
        let runtime = super::runtime()?;
        let rate = self.connect.rate(CLIENT_GO_RATE);
        let target = up::GkeTarget {
            plan: self.gke_plan(runs)?,
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            image_registry: self.image_registry.clone(),
            allow_vm_faults: self.allow_vm_faults,
            zone: self.opts.zone.clone(),
            runs: (runs.arms.len() * runs.seeds) as u64,
            scenario_seconds: runs.scenario_seconds,
            time_scale: self.connect.time_scale,
        };
        let runner = Arc::new(CommandRunner::execute());
        let provisioned = up::gke(target, runs.nodes, &self.repo, runner, &runtime, rate)?;
        Ok(super::connected_to(
            "gke",
            provisioned,
            rate,
            runtime,
            interrupt,
            self.connect.time_scale,
        ))
    }
}
