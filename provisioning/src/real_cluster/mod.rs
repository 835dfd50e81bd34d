//! A cluster with real kubelets made or checked for a scenario (kind, GKE),
//! as the kube backend uses it ([`kube_backend::backend::RealNodes`]): which
//! scenario node each real node plays, the images its pods run, the arm the
//! in-cluster scheduler serves, and how node faults are played there
//! (docker, a cordon, a VM). [`up`] makes one ready for the runs; the
//! manifests say what was made ([`ProvisionFacts`]).

pub mod up;

use crate::external::CommandRunner;
use crate::faults::{self, NodeFaults, PumpOptions};
use crate::gke::{self, GkeCluster, GkeFaultMode, GkeFaults};
use crate::kind::{KindCluster, KindFaultMode, KindFaults};
use crate::scheduler_deploy::Images;
use kube_backend::backend::{FaultPump, RealNodes};
use kube_backend::emulator::EmulatorCommand;
use kube_backend::{ApiClient, objects};
use schedlab_core::NodeSpec;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;

/// The arm the in-cluster scheduler serves: its pods get this scheduler
/// name and the harness runs no bind loop for it.
pub const IN_CLUSTER_ARM: &str = "agmarl";

/// One scenario pool on the cluster, for the manifest.
#[derive(Debug, Clone, Serialize)]
pub struct PoolFact {
    pub pool: String,
    pub machine_type: String,
    pub hourly_price: f64,
    /// scenario nodes of the pool played by real kubelets
    pub real_nodes: Vec<String>,
    /// the GKE node pool that plays it
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_pool: Option<String>,
    /// scenario nodes of the pool played by the node emulator (kind beyond its worker cap)
    pub emulated_nodes: usize,
}

/// What the invocation manifest says about a kind or GKE cluster.
#[derive(Debug, Clone, Serialize)]
pub struct ProvisionFacts {
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// whether schedlab created the cluster (and deletes it unless kept)
    pub created: bool,
    pub kept: bool,
    pub node_pools: Vec<PoolFact>,
    pub images: Images,
    /// the arm the in-cluster scheduler serves (none: every arm but
    /// `default` through schedlab's bind loop)
    #[serde(skip_serializing_if = "Option::is_none")]
    pub in_cluster_arm: Option<&'static str>,
    pub node_faults: String,
    /// every external command run to provision (shell-quoted)
    pub commands: Vec<String>,
}

/// How a run's node faults are played.
#[derive(Debug, Clone)]
pub(crate) enum FaultPlan {
    Kind(KindFaultMode),
    Cordon,
    Vm {
        zones: HashMap<String, String>,
    },
    /// real nodes of this machine: their kubelets stop and start again
    Kubelet {
        nodes: Vec<crate::kubelets::NodeLayout>,
        hierarchies: Vec<std::path::PathBuf>,
    },
}

/// Everything a run on kind or GKE needs beyond a plain kubeconfig cluster.
pub struct RealCluster {
    /// per scenario node: the real node's name, or None for an emulated one
    pub(crate) placement: Vec<Option<String>>,
    /// the scenario's nodes (to check each run's timeline against)
    pub(crate) nodes: Vec<NodeSpec>,
    pub selector: String,
    pub images: Images,
    pub(crate) faults: FaultPlan,
    pub(crate) runner: Arc<CommandRunner>,
    /// deleted when dropped (after the runs)
    pub(crate) made: Made,
}

/// What was made for the runs, and goes when the cluster is dropped.
#[derive(Debug)]
#[expect(dead_code, reason = "each variant holds what it made only for its Drop")]
pub(crate) enum Made {
    /// deleted unless kept
    Kind(KindCluster),
    /// deleted unless kept when it was provisioned; an existing cluster is only used
    Gke(Option<GkeCluster>),
    /// the local control plane with real nodes, stopped; `scheduler`: the
    /// in-cluster scheduler's Deployment runs there (the runs have its arm)
    Local {
        plane: crate::local::ScopedCluster,
        scheduler: bool,
    },
}

impl Made {
    /// The arm a scheduler inside the cluster serves: kind and GKE always run
    /// the in-cluster scheduler's Deployment; real nodes of this machine when
    /// the runs have its arm.
    pub(crate) fn in_cluster_arm(&self) -> Option<&'static str> {
        match self {
            Made::Kind(_) | Made::Gke(_) => Some(IN_CLUSTER_ARM),
            Made::Local { scheduler, .. } => scheduler.then_some(IN_CLUSTER_ARM),
        }
    }
}

impl RealCluster {
    /// Whether every scenario node is a real node (none emulated beside them).
    pub fn all_real(&self) -> bool {
        self.placement.iter().all(Option::is_some)
    }
}

impl std::fmt::Debug for RealCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealCluster")
            .field("selector", &self.selector)
            .field("images", &self.images)
            .finish_non_exhaustive()
    }
}

impl RealNodes for RealCluster {
    /// Whether the in-cluster scheduler serves `arm`.
    fn in_cluster(&self, arm: &str) -> bool {
        self.made.in_cluster_arm() == Some(arm)
    }

    fn workload_image(&self) -> String {
        self.images.workload.clone()
    }

    /// The timeline's nodes that the node emulator plays (kind beyond its cap), with their NodeIds.
    fn emulated(&self) -> Vec<(schedlab_core::NodeId, NodeSpec)> {
        // a scenario's nodes do not depend on the seed (workloads builds them
        // from the model alone), so the cluster made for the first seed
        // serves them all
        self.placement
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_none())
            .map(|(i, _)| (schedlab_core::NodeId(i as u32), self.nodes[i].clone()))
            .collect()
    }

    /// Starts the run's fault pump: real nodes' faults go to docker, a
    /// cordon or a VM; emulated nodes' to `emulator`.
    fn start_faults(
        &self,
        admin: &ApiClient,
        run: &str,
        emulator: Option<UnboundedSender<EmulatorCommand>>,
    ) -> FaultPump {
        let real: Vec<String> = self.placement.iter().flatten().cloned().collect();
        let sink: Arc<dyn NodeFaults> = match &self.faults {
            FaultPlan::Kind(mode) => Arc::new(KindFaults::new(self.runner.clone(), *mode, real.clone())),
            FaultPlan::Cordon => Arc::new(GkeFaults::new(
                GkeFaultMode::Cordon {
                    api: admin.clone(),
                    namespace: run.to_string(),
                },
                real.clone(),
            )),
            FaultPlan::Vm { zones } => Arc::new(GkeFaults::new(
                GkeFaultMode::Vm {
                    runner: self.runner.clone(),
                    zones: zones.clone(),
                },
                real.clone(),
            )),
            FaultPlan::Kubelet { nodes, hierarchies } => Arc::new(crate::kubelets::faults::KubeletFaults::new(
                nodes.iter().cloned(),
                hierarchies.clone(),
            )),
        };
        // every node as the run names it: emulated ones are objects of the run
        let intended: Vec<String> = self
            .placement
            .iter()
            .zip(&self.nodes)
            .map(|(p, spec)| p.clone().unwrap_or_else(|| objects::node_name(run, spec)))
            .collect();
        let emulated: HashSet<String> = self
            .placement
            .iter()
            .zip(&intended)
            .filter(|(p, _)| p.is_none())
            .map(|(_, name)| name.clone())
            .collect();
        let opts = PumpOptions {
            rename: faults::rename_map(&intended),
            emulator: emulator.map(|e| (e, emulated)),
        };
        let (sender, handle) = faults::spawn_pump(sink, opts);
        let stats = tokio::spawn(async move {
            let stats = handle.await.map_err(|e| e.to_string())?;
            Ok(serde_json::to_value(&stats).unwrap_or(serde_json::Value::Null))
        });
        FaultPump { sender, stats }
    }
}

/// How the manifest names the way node faults are played on kind.
pub fn kind_fault_line(mode: KindFaultMode) -> &'static str {
    match mode {
        KindFaultMode::Stop => "docker stop/start <worker> (DegradeNode and KillPod are not played)",
        KindFaultMode::Pause => "docker pause/unpause <worker> (DegradeNode and KillPod are not played)",
    }
}

/// How the manifest names the way node faults are played on GKE (`vm`: by stopping VMs).
pub fn gke_fault_line(vm: bool) -> &'static str {
    if vm {
        "gcloud compute instances stop/start <node> --zone <its zone> --quiet (DegradeNode and KillPod are not played)"
    } else {
        "cordon the node and delete the run's pods on it; uncordon to recover (DegradeNode and KillPod are not played)"
    }
}

/// The manifest's pools: per scenario pool, its real nodes and how many of its nodes are emulated.
pub fn pool_facts(
    nodes: &[NodeSpec],
    placement: &[Option<String>],
    matches: Option<&[gke::PoolMatch]>,
) -> Vec<PoolFact> {
    let mut out: Vec<PoolFact> = Vec::new();
    for (spec, place) in nodes.iter().zip(placement) {
        let i = match out.iter().position(|p| p.pool == spec.pool.name) {
            Some(i) => i,
            None => {
                out.push(PoolFact {
                    pool: spec.pool.name.clone(),
                    machine_type: spec.pool.machine_type.clone(),
                    hourly_price: spec.pool.hourly_price,
                    real_nodes: Vec::new(),
                    node_pool: matches
                        .and_then(|ms| ms.iter().find(|m| m.pool == spec.pool.name))
                        .map(|m| m.node_pool.clone()),
                    emulated_nodes: 0,
                });
                out.len() - 1
            }
        };
        match place {
            Some(name) => out[i].real_nodes.push(name.clone()),
            None => out[i].emulated_nodes += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::testing::{GI, NodeSpecChanges, node};

    #[test]
    fn pool_facts_count_real_and_emulated_nodes_per_pool() {
        let nodes: Vec<NodeSpec> = (0..5)
            .map(|i| {
                let pool = if i < 3 { "small" } else { "large" };
                node(&format!("n{i}"), 2000, 4 * GI, 0.1).pool(pool, "e2-standard-2")
            })
            .collect();
        let placement: Vec<Option<String>> = (0..nodes.len())
            .map(|i| (i % 2 == 0).then(|| format!("w{i}")))
            .collect();
        let facts = pool_facts(&nodes, &placement, None);
        let pools: Vec<(&str, usize, usize)> = facts
            .iter()
            .map(|f| (f.pool.as_str(), f.real_nodes.len(), f.emulated_nodes))
            .collect();
        assert_eq!(pools, [("small", 2, 1), ("large", 1, 1)]);
        assert_eq!(facts[0].real_nodes, ["w0", "w2"]);
        assert!(facts.iter().all(|f| f.node_pool.is_none()));
    }
}
