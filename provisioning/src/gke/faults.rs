//! Node faults on GKE. By default a failed node is cordoned and the run's
//! pods on it are deleted (their owners replace them elsewhere), and a
//! recovered one is uncordoned: nothing of the cluster is harmed. With
//! `--allow-vm-faults` the node's VM is stopped and started instead
//! (`gcloud compute instances stop|start`), which GKE may repair on its own.

use crate::external::{CommandRunner, ExternalCommand};
use crate::faults::{Carried, FaultError, NodeFaults, node_of};
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1 as core;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube_backend::emulator::EmulatorCommand;
use kube_backend::{ApiClient, KubeError};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// How faults reach the nodes.
#[derive(Debug)]
pub enum GkeFaultMode {
    /// cordon, and delete the pods of `namespace` on the node
    Cordon { api: ApiClient, namespace: String },
    /// stop and start the node's VM; each node's zone
    Vm {
        runner: Arc<CommandRunner>,
        zones: HashMap<String, String>,
    },
}

/// Plays FailNode/RecoverNode on GKE nodes.
#[derive(Debug)]
pub struct GkeFaults {
    mode: GkeFaultMode,
    /// the nodes it may touch: the run's
    nodes: HashSet<String>,
    down: Mutex<HashSet<String>>,
}

/// The gcloud command that stops (fail) or starts (recover) a node's VM.
pub fn vm_command(command: &EmulatorCommand, zone: &str) -> Option<ExternalCommand> {
    let (verb, node) = match command {
        EmulatorCommand::FailNode { name } => ("stop", name),
        EmulatorCommand::RecoverNode { name } => ("start", name),
        _ => return None,
    };
    Some(ExternalCommand::new(
        "gcloud",
        ["compute", "instances", verb, node.as_str(), "--zone", zone, "--quiet"],
        format!("{verb} the VM of node {node}"),
    ))
}

impl GkeFaults {
    pub fn new(mode: GkeFaultMode, nodes: impl IntoIterator<Item = String>) -> GkeFaults {
        GkeFaults {
            mode,
            nodes: nodes.into_iter().collect(),
            down: Mutex::new(HashSet::new()),
        }
    }

    /// Whether `command` changes a node's state (it is down after a fail,
    /// up after a recover); None: not this sink's.
    fn changes(&self, command: &EmulatorCommand) -> Option<bool> {
        let node = node_of(command)?;
        if !self.nodes.contains(node) {
            return None;
        }
        let mut down = self.down.lock().ok()?;
        match command {
            EmulatorCommand::FailNode { .. } | EmulatorCommand::LoseNode { .. } => Some(down.insert(node.to_string())),
            EmulatorCommand::RecoverNode { .. } => Some(down.remove(node)),
            _ => None,
        }
    }
}

/// Cordons (or uncordons) `node`.
pub async fn set_unschedulable(api: &ApiClient, node: &str, unschedulable: bool) -> Result<(), KubeError> {
    let nodes: Api<core::Node> = Api::all(api.client());
    let patch = serde_json::json!({ "spec": { "unschedulable": unschedulable } });
    api.throttle().await;
    nodes
        .patch(node, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(KubeError::api(format!("cordoning node {node}")))?;
    Ok(())
}

/// Deletes the pods of `namespace` bound to `node`; returns how many.
pub async fn delete_pods_on(api: &ApiClient, namespace: &str, node: &str) -> Result<usize, KubeError> {
    let pods: Api<core::Pod> = Api::namespaced(api.client(), namespace);
    api.throttle().await;
    let list = pods
        .list(&ListParams::default().fields(&format!("spec.nodeName={node}")))
        .await
        .map_err(KubeError::api(format!("listing the pods on node {node}")))?;
    let mut deleted = 0;
    for pod in list.items {
        let Some(name) = pod.metadata.name else { continue };
        api.throttle().await;
        match pods.delete(&name, &DeleteParams::default()).await {
            Ok(_) => deleted += 1,
            Err(e) if kube_backend::error::status_code(&e) == Some(404) => {}
            Err(e) => return Err(KubeError::api(format!("deleting pod {namespace}/{name}"))(e)),
        }
    }
    Ok(deleted)
}

impl NodeFaults for GkeFaults {
    fn carry_out<'a>(&'a self, command: &'a EmulatorCommand) -> BoxFuture<'a, Result<Carried, FaultError>> {
        Box::pin(async move {
            let (node, fail) = match command {
                // a real node that leaves is played as a failure: cordon, delete its pods
                EmulatorCommand::FailNode { name } | EmulatorCommand::LoseNode { name } => (name, true),
                EmulatorCommand::RecoverNode { name } => (name, false),
                EmulatorCommand::DegradeNode { .. } | EmulatorCommand::KillPod { .. } => {
                    return Ok(Carried::Unsupported);
                }
            };
            match self.changes(command) {
                None => return Ok(Carried::Unsupported),
                Some(false) => return Ok(Carried::NoOp),
                Some(true) => {}
            }
            match &self.mode {
                GkeFaultMode::Cordon { api, namespace } => {
                    set_unschedulable(api, node, fail).await?;
                    if fail {
                        let deleted = delete_pods_on(api, namespace, node).await?;
                        Ok(Carried::Done(format!(
                            "cordon {node}; delete its {deleted} pods of {namespace}"
                        )))
                    } else {
                        Ok(Carried::Done(format!("uncordon {node}")))
                    }
                }
                GkeFaultMode::Vm { runner, zones } => {
                    let zone = zones
                        .get(node)
                        .ok_or_else(|| FaultError::Other(format!("the zone of node {node} is unknown")))?;
                    let Some(gcloud) = vm_command(command, zone) else {
                        return Ok(Carried::Unsupported);
                    };
                    let line = gcloud.shell();
                    let runner = runner.clone();
                    tokio::task::spawn_blocking(move || runner.run(&gcloud))
                        .await
                        .map_err(|e| FaultError::Other(format!("`{line}` did not finish: {e}")))??;
                    Ok(Carried::Done(line))
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn vm_faults_stop_and_start_the_vm_once() {
        let runner = Arc::new(CommandRunner::dry_run());
        let zones = HashMap::from([("gke-c-p-1".to_string(), "europe-west4-a".to_string())]);
        let sink = GkeFaults::new(
            GkeFaultMode::Vm {
                runner: runner.clone(),
                zones,
            },
            ["gke-c-p-1".to_string()],
        );
        let fail = EmulatorCommand::FailNode {
            name: "gke-c-p-1".into(),
        };
        let recover = EmulatorCommand::RecoverNode {
            name: "gke-c-p-1".into(),
        };
        assert_eq!(
            sink.carry_out(&fail).await.unwrap(),
            Carried::Done("gcloud compute instances stop gke-c-p-1 --zone europe-west4-a --quiet".into())
        );
        assert_eq!(sink.carry_out(&fail).await.unwrap(), Carried::NoOp);
        assert!(matches!(sink.carry_out(&recover).await.unwrap(), Carried::Done(_)));
        assert_eq!(
            sink.carry_out(&EmulatorCommand::FailNode { name: "other".into() })
                .await
                .unwrap(),
            Carried::Unsupported
        );
        assert_eq!(
            sink.carry_out(&EmulatorCommand::DegradeNode {
                name: "gke-c-p-1".into()
            })
            .await
            .unwrap(),
            Carried::Unsupported
        );
        let lines: Vec<String> = runner.commands().iter().map(|c| c.shell()).collect();
        assert_eq!(
            lines,
            vec![
                "gcloud compute instances stop gke-c-p-1 --zone europe-west4-a --quiet",
                "gcloud compute instances start gke-c-p-1 --zone europe-west4-a --quiet"
            ]
        );
    }
}
