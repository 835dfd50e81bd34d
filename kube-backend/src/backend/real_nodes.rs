//! Clusters whose nodes are real kubelets (kind, GKE): what the kube
//! backend asks of whoever provisioned them.

use crate::ApiClient;
use crate::emulator::EmulatorCommand;
use schedlab_core::{NodeId, NodeSpec};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;

/// A run's fault pump: node faults sent here are played on the real node
/// (or passed to the emulator for an emulated one); once the sender is
/// dropped the pump finishes and says what it did.
#[derive(Debug)]
pub struct FaultPump {
    pub sender: UnboundedSender<EmulatorCommand>,
    /// what the pump did, or why it failed
    pub stats: JoinHandle<Result<serde_json::Value, String>>,
}

/// What differs on a cluster with real kubelets.
pub trait RealNodes: Send + Sync {
    /// The scenario's nodes beyond the cluster's own, played by the node
    /// emulator beside them, with their ids.
    fn emulated(&self) -> Vec<(NodeId, NodeSpec)>;
    /// The image the workload's pods run.
    fn workload_image(&self) -> String;
    /// Whether a scheduler inside the cluster serves `arm` (no bind loop here).
    fn in_cluster(&self, arm: &str) -> bool;
    /// Starts the run's fault pump; faults of emulated nodes go to `emulator`.
    fn start_faults(
        &self,
        admin: &ApiClient,
        run: &str,
        emulator: Option<UnboundedSender<EmulatorCommand>>,
    ) -> FaultPump;
}
