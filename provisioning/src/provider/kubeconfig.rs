//! `--cluster kube`: any cluster a kubeconfig reaches. schedlab creates
//! nothing there but the runs' namespaces and, with emulated nodes, the
//! nodes the scenario names.

use super::{CLIENT_GO_RATE, ClusterFacts, ClusterProvider, Connect, Connected, Runs, default_kubeconfig, runs_line};
use crate::interrupt::Interrupt;
use kube_backend::backend::Connection;
use kube_backend::run::NodeSource;
use kube_backend::{ApiClient, ClientOptions};
use std::path::PathBuf;

/// Whose nodes the runs use on a kubeconfig's cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KubeNodes {
    /// node objects made from the scenario, played by the node emulator
    Emulated,
    /// the cluster's own nodes matching a label selector ("" for all)
    Existing { selector: String },
}

/// A cluster through a kubeconfig.
#[derive(Debug, Clone)]
pub struct KubeconfigProvider {
    /// None: KUBECONFIG, else ~/.kube/config
    pub kubeconfig: Option<PathBuf>,
    /// None: the current context
    pub context: Option<String>,
    pub nodes: KubeNodes,
    pub connect: Connect,
}

impl ClusterProvider for KubeconfigProvider {
    fn name(&self) -> &'static str {
        "kube"
    }

    fn check(&self, _runs: &Runs<'_>) -> crate::Result<()> {
        // the kubeconfig itself is read, bounded and checked when connecting
        // (kube_backend::client), with its own messages
        Ok(())
    }

    fn plan(&self, runs: &Runs<'_>) -> crate::Result<String> {
        let config = self.kubeconfig.clone().or_else(default_kubeconfig);
        let nodes = match &self.nodes {
            KubeNodes::Emulated => {
                "create the scenario's nodes as node objects, played by the node emulator".to_string()
            }
            KubeNodes::Existing { selector } if selector.is_empty() => "use the cluster's existing nodes".to_string(),
            KubeNodes::Existing { selector } => format!("use the cluster's existing nodes matching {selector:?}"),
        };
        let pods = match self.nodes {
            KubeNodes::Emulated => "on the node emulator",
            KubeNodes::Existing { .. } => "on the cluster's nodes",
        };
        Ok(format!(
            "Plan:\n  1. connect to context {} of kubeconfig {}\n  2. {nodes}\n  3. {}",
            self.context.as_deref().unwrap_or("(current)"),
            config.map_or_else(|| "(none found)".to_string(), |p| p.display().to_string()),
            runs_line(runs, false, pods, "played by the node emulator on its nodes")
        ))
    }

    fn up(self: Box<Self>, _runs: &Runs<'_>, interrupt: &Interrupt) -> crate::Result<Connected> {
        let runtime = super::runtime()?;
        let project_rate = self.connect.rate(CLIENT_GO_RATE);
        let opts = ClientOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            qps: project_rate.qps,
            burst: project_rate.burst,
            ..ClientOptions::default()
        };
        let admin = runtime.block_on(ApiClient::connect(&opts))?;
        let facts = ClusterFacts {
            server: admin.server().to_string(),
            time_scale: self.connect.time_scale,
            nodes: match self.nodes {
                KubeNodes::Emulated => "emulated",
                KubeNodes::Existing { .. } => "existing",
            },
            default_scheduler_client: None,
            project_scheduler_client: project_rate,
            provisioned: None,
        };
        Ok(super::connected(
            Connection {
                name: "kube",
                scheduler: admin.clone(),
                admin,
                admin_kubeconfig: self.kubeconfig,
                admin_context: self.context,
                time_scale: self.connect.time_scale,
                project_rate,
                nodes: match self.nodes {
                    KubeNodes::Emulated => NodeSource::Emulated,
                    KubeNodes::Existing { selector } => NodeSource::Existing { selector },
                },
                real: None,
                runtime,
            },
            facts,
            interrupt,
            None,
        ))
    }
}
