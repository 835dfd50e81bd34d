//! `--cluster local`: a real control plane on loopback (etcd,
//! kube-apiserver, kube-scheduler) whose nodes are API objects the node
//! emulator plays: the one `schedlab cluster up --local` left running, else
//! a private one brought up for the invocation and taken down after it.

use super::{ClusterFacts, ClusterProvider, Connect, Connected, Runs, runs_line};
use crate::interrupt::Interrupt;
use crate::local::{self, LocalOptions, ScopedCluster};
use kube_backend::backend::{ClientRate, Connection};
use kube_backend::run::NodeSource;
use kube_backend::{ApiClient, ClientOptions};
use std::path::PathBuf;

/// The local control plane with emulated nodes.
#[derive(Debug, Clone)]
pub struct LocalProvider {
    /// the state folder of a running control plane to use (`--local-state`);
    /// None: the default state folder's when it runs, else a private one
    pub state: Option<PathBuf>,
    pub connect: Connect,
}

/// Where the runs' control plane comes from.
enum Plane {
    /// a healthy one recorded in a state folder
    Running(local::ClusterRecord),
    /// none runs (or none in the default folder): one is brought up
    Private,
}

impl LocalProvider {
    fn plane(&self) -> crate::Result<Plane> {
        let dir = match &self.state {
            Some(dir) => dir.clone(),
            None => local::default_state_dir()?,
        };
        if let Ok(status) = local::status(&dir)
            && status.healthy()
            && let Some(record) = status.record
        {
            return Ok(Plane::Running(record));
        }
        match &self.state {
            Some(_) => Err(super::BadSetting(format!(
                "--local-state {}: no healthy control plane runs there (start one with `schedlab cluster up --local \
                 --state {}`)",
                dir.display(),
                dir.display()
            ))
            .into()),
            None => Ok(Plane::Private),
        }
    }
}

impl ClusterProvider for LocalProvider {
    fn name(&self) -> &'static str {
        "local"
    }

    fn check(&self, _runs: &Runs<'_>) -> crate::Result<()> {
        // a state folder named must hold a running control plane
        if self.state.is_some() {
            self.plane()?;
        }
        Ok(())
    }

    fn plan(&self, runs: &Runs<'_>) -> crate::Result<String> {
        let plane = match self.plane()? {
            Plane::Running(record) => format!(
                "use the running local control plane at {} (its admin kubeconfig {})",
                record.server,
                record.admin_kubeconfig.display()
            ),
            Plane::Private => "bring a private local control plane up (etcd, kube-apiserver, kube-scheduler on \
                               loopback, in a temporary state folder; a cold cache builds Kubernetes first), and take \
                               it down after the runs"
                .to_string(),
        };
        Ok(format!(
            "Plan:\n  1. {plane}\n  2. {}",
            runs_line(runs, false, "on the node emulator", "played by the node emulator")
        ))
    }

    fn up(self: Box<Self>, _runs: &Runs<'_>, interrupt: &Interrupt) -> crate::Result<Connected> {
        let runtime = super::runtime()?;
        let (admin_config, scheduler_config, default_rate, plane) = match self.plane()? {
            Plane::Running(record) => {
                tracing::info!(server = %record.server, "using the running local control plane");
                let rate = ClientRate {
                    qps: record.scheduler_qps,
                    burst: record.scheduler_burst,
                };
                (record.admin_kubeconfig, record.agmarl_kubeconfig, rate, None)
            }
            Plane::Private => {
                schedlab_core::noteln!(
                    "bringing a local control plane up for this run (a cold cache builds Kubernetes: several minutes)"
                );
                let mut opts = LocalOptions::private("scenario")?;
                opts.cancel = Some(interrupt.flag());
                let plane = ScopedCluster::up(&opts)?;
                let (qps, burst) = plane.client_rate();
                let admin = plane.admin_kubeconfig().to_path_buf();
                let sched = plane.agmarl_kubeconfig().to_path_buf();
                (admin, sched, ClientRate { qps, burst }, Some(plane))
            }
        };
        let project_rate = self.connect.rate(default_rate);
        let admin_opts = ClientOptions {
            kubeconfig: Some(admin_config.clone()),
            qps: project_rate.qps,
            burst: project_rate.burst,
            ..ClientOptions::default()
        };
        let sched_opts = ClientOptions {
            kubeconfig: Some(scheduler_config),
            ..admin_opts.clone()
        };
        let (admin, scheduler) = runtime.block_on(async {
            Ok::<_, kube_backend::KubeError>((
                ApiClient::connect(&admin_opts).await?,
                ApiClient::connect(&sched_opts).await?,
            ))
        })?;
        let facts = ClusterFacts {
            server: admin.server().to_string(),
            time_scale: self.connect.time_scale,
            nodes: "emulated",
            default_scheduler_client: Some(default_rate),
            project_scheduler_client: project_rate,
            provisioned: None,
        };
        Ok(super::connected(
            Connection {
                name: "local",
                admin,
                scheduler,
                admin_kubeconfig: Some(admin_config),
                admin_context: None,
                time_scale: self.connect.time_scale,
                project_rate,
                nodes: NodeSource::Emulated,
                real: None,
                runtime,
            },
            facts,
            interrupt,
            plane,
        ))
    }
}
