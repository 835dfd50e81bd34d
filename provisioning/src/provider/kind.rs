//! `--cluster kind`: a kind cluster made for the invocation from the
//! scenario's nodes (docker and kind), with the images built and loaded
//! and the in-cluster agmarl scheduler deployed; deleted afterwards unless
//! kept.

use super::{CLIENT_GO_RATE, ClusterProvider, Connect, Connected, Runs, runs_line};
use crate::external::CommandRunner;
use crate::interrupt::Interrupt;
use crate::kind::{KindOptions, KindPlan};
use crate::real_cluster::{kind_fault_line, up};
use crate::scheduler_deploy;
use std::sync::Arc;

/// A kind cluster for the scenario.
#[derive(Debug, Clone)]
pub struct KindProvider {
    pub opts: KindOptions,
    pub connect: Connect,
}

impl KindProvider {
    fn kind_plan(&self, runs: &Runs<'_>) -> crate::Result<KindPlan> {
        KindPlan::new(runs.nodes, self.opts.clone())
    }
}

impl ClusterProvider for KindProvider {
    fn name(&self) -> &'static str {
        "kind"
    }

    fn check(&self, runs: &Runs<'_>) -> crate::Result<()> {
        self.kind_plan(runs).map(drop)
    }

    fn deploys_in_cluster_scheduler(&self, _runs: &Runs<'_>) -> bool {
        true
    }

    fn plan(&self, runs: &Runs<'_>) -> crate::Result<String> {
        let plan = self.kind_plan(runs)?;
        let images = plan.opts.images.clone();
        let emulated = if plan.emulated.is_empty() {
            String::new()
        } else {
            format!(", {} nodes emulated by the node emulator", plan.emulated.len())
        };
        let deploy = scheduler_deploy::plan(&scheduler_deploy::overlay_dir(&plan.opts.repo_root, "kind"), &images);
        let runs = runs_line(runs, true, &images.workload, kind_fault_line(plan.opts.fault_mode));
        Ok(format!(
            "\nkind cluster {}: a control plane and {} workers{emulated}\n\nkind config ({}):\n{}\nPlan:\n{}",
            plan.opts.name,
            plan.workers.len(),
            plan.config_path().display(),
            plan.config_yaml,
            plan.plan(deploy, &runs).render()
        ))
    }

    fn up(self: Box<Self>, runs: &Runs<'_>, interrupt: &Interrupt) -> crate::Result<Connected> {
        let runtime = super::runtime()?;
        let rate = self.connect.rate(CLIENT_GO_RATE);
        let plan = self.kind_plan(runs)?;
        schedlab_core::noteln!(
            "creating kind cluster {} ({} workers); building the images takes minutes the first time",
            plan.opts.name,
            plan.workers.len()
        );
        let repo = plan.opts.repo_root.clone();
        let runner = Arc::new(CommandRunner::execute());
        let flag = interrupt.flag();
        let provisioned = up::kind(plan, runs.nodes, &repo, runner, &flag, &runtime, rate)?;
        Ok(super::connected_to(
            "kind",
            provisioned,
            rate,
            runtime,
            interrupt,
            self.connect.time_scale,
        ))
    }
}
