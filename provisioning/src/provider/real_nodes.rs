//! `--cluster local --nodes real:N[+emulated]`: a private local control
//! plane whose first N scenario nodes are real kubelets on this machine
//! (containerd and runc; root), the rest, if asked, on the node emulator.

use super::{ClusterProvider, Connect, Connected, Runs, runs_line};
use crate::interrupt::Interrupt;
use crate::kubelets::PodPrograms;
use crate::kubelets::scenario::RealNodesFlag;
use crate::real_cluster::IN_CLUSTER_ARM;
use crate::real_cluster::up::{self, LOCAL_FAULT_LINE};
use crate::scheduler_deploy::Images;
use kube_backend::backend::ClientRate;
use std::path::{Path, PathBuf};

/// Real nodes of this machine under a private control plane.
#[derive(Debug, Clone)]
pub struct RealNodesProvider {
    pub flag: RealNodesFlag,
    /// the folder holding the programs of the workload and scheduler images
    /// (the schedlab program's own)
    pub programs_dir: PathBuf,
    /// the repository whose local overlay deploys the in-cluster scheduler
    pub repo: PathBuf,
    pub connect: Connect,
}

impl RealNodesProvider {
    /// The repository whose overlay deploys the in-cluster scheduler, when the runs have its arm.
    fn scheduler_repo(&self, runs: &Runs<'_>) -> Option<&Path> {
        self.deploys_in_cluster_scheduler(runs).then_some(self.repo.as_path())
    }
}

impl ClusterProvider for RealNodesProvider {
    fn name(&self) -> &'static str {
        "local"
    }

    fn check(&self, runs: &Runs<'_>) -> crate::Result<()> {
        up::check_local(self.flag, runs.nodes.len(), self.scheduler_repo(runs)).map(drop)
    }

    fn deploys_in_cluster_scheduler(&self, runs: &Runs<'_>) -> bool {
        runs.arms.iter().any(|a| a == IN_CLUSTER_ARM)
    }

    fn plan(&self, runs: &Runs<'_>) -> crate::Result<String> {
        let overlay = up::check_local(self.flag, runs.nodes.len(), self.scheduler_repo(runs))?;
        let rest = runs.nodes.len().saturating_sub(self.flag.count);
        let emulated = if rest > 0 {
            format!(", the other {rest} on the node emulator")
        } else {
            String::new()
        };
        let scheduler = match overlay {
            Some(overlay) => format!(
                "\n  3. deploy the in-cluster agmarl-scheduler from {}",
                overlay.display()
            ),
            None => String::new(),
        };
        Ok(format!(
            "Plan:\n  1. bring a private local control plane up (etcd, kube-apiserver, kube-scheduler on loopback; a \
             cold cache builds Kubernetes first), taken down after the runs\n  2. start {} real kubelets with \
             containerd and runc on this machine (root), labelled and priced as the scenario's first {} \
             nodes{emulated}{scheduler}\n  {}. {}",
            self.flag.count,
            self.flag.count,
            if scheduler.is_empty() { 3 } else { 4 },
            runs_line(runs, !scheduler.is_empty(), &Images::dev().workload, LOCAL_FAULT_LINE)
        ))
    }

    fn up(self: Box<Self>, runs: &Runs<'_>, interrupt: &Interrupt) -> crate::Result<Connected> {
        let runtime = super::runtime()?;
        // on the local control plane every scheduler gets the default scheduler's client rate
        let rate = self.connect.rate(ClientRate {
            qps: crate::local::DEFAULT_CLIENT_QPS,
            burst: crate::local::DEFAULT_CLIENT_BURST,
        });
        let target = up::LocalTarget {
            flag: self.flag,
            programs: PodPrograms::beside(&self.programs_dir)?,
            cancel: interrupt.flag(),
            scheduler_repo: self.scheduler_repo(runs).map(Path::to_path_buf),
        };
        schedlab_core::noteln!(
            "bringing a local control plane up with {} real nodes (a cold cache builds Kubernetes: several minutes)",
            self.flag.count
        );
        let provisioned = up::local(target, runs.nodes, &runtime, rate)?;
        Ok(super::connected_to(
            "local",
            provisioned,
            rate,
            runtime,
            interrupt,
            self.connect.time_scale,
        ))
    }
}
