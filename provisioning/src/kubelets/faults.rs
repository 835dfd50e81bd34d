//! Node faults on real nodes of this machine: a failed node's kubelet is
//! stopped (its containers keep running, as on a machine whose kubelet
//! died; the node-lifecycle controller marks it NotReady and evicts its
//! pods), and a recovered node's kubelet is started again in the node's
//! namespace and cgroup.

use super::error::KubeletError;
use super::layout::NodeLayout;
use super::node;
use crate::faults::{Carried, FaultError, NodeFaults};
use futures::future::BoxFuture;
use kube_backend::emulator::EmulatorCommand;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Plays FailNode/LoseNode/RecoverNode on real nodes by their kubelets.
#[derive(Debug)]
pub struct KubeletFaults {
    /// the nodes it may touch, by their API names
    nodes: HashMap<String, NodeLayout>,
    hierarchies: Arc<Vec<PathBuf>>,
    /// nodes it took down and has not brought back
    down: Mutex<HashSet<String>>,
}

/// What to do to a node's kubelet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    Stop,
    Start,
}

impl KubeletFaults {
    pub fn new(nodes: impl IntoIterator<Item = NodeLayout>, hierarchies: Vec<PathBuf>) -> KubeletFaults {
        KubeletFaults {
            nodes: nodes.into_iter().map(|n| (n.name.clone(), n)).collect(),
            hierarchies: Arc::new(hierarchies),
            down: Mutex::new(HashSet::new()),
        }
    }

    /// The action for `command`, keeping track of which nodes are down, so a
    /// recovery only touches a node this sink took down.
    fn next(&self, command: &EmulatorCommand) -> Result<Option<(Action, NodeLayout)>, Carried> {
        let action = match command {
            EmulatorCommand::FailNode { .. } | EmulatorCommand::LoseNode { .. } => Action::Stop,
            EmulatorCommand::RecoverNode { .. } => Action::Start,
            EmulatorCommand::DegradeNode { .. } | EmulatorCommand::KillPod { .. } => return Err(Carried::Unsupported),
        };
        let name = crate::faults::node_of(command).ok_or(Carried::Unsupported)?;
        let node = self.nodes.get(name).ok_or(Carried::Unsupported)?;
        let mut down = self.down.lock().map_err(|_| Carried::Unsupported)?;
        let changes = match action {
            Action::Stop => down.insert(name.to_owned()),
            Action::Start => down.remove(name),
        };
        Ok(changes.then(|| (action, node.clone())))
    }
}

impl NodeFaults for KubeletFaults {
    fn carry_out<'a>(&'a self, command: &'a EmulatorCommand) -> BoxFuture<'a, Result<Carried, FaultError>> {
        Box::pin(async move {
            let (action, node) = match self.next(command) {
                Ok(Some(next)) => next,
                Ok(None) => return Ok(Carried::NoOp),
                Err(carried) => return Ok(carried),
            };
            let hierarchies = self.hierarchies.clone();
            let name = node.name.clone();
            let done = tokio::task::spawn_blocking(move || match action {
                Action::Stop => node::stop_kubelet(&node),
                Action::Start => node::restart_kubelet(&node, &hierarchies),
            })
            .await
            .map_err(|e| FaultError::Other(format!("the kubelet of {name} did not finish: {e}")))?;
            done.map_err(|e: KubeletError| FaultError::Other(e.to_string()))?;
            Ok(Carried::Done(match action {
                Action::Stop => format!("stop the kubelet of {name}"),
                Action::Start => format!("start the kubelet of {name} again"),
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn sink() -> KubeletFaults {
        KubeletFaults::new([NodeLayout::new(Path::new("/st"), 0)], Vec::new())
    }

    #[test]
    fn a_recovery_touches_only_a_node_this_sink_took_down() {
        let faults = sink();
        let recover = EmulatorCommand::RecoverNode { name: "real-0".into() };
        assert!(matches!(faults.next(&recover), Ok(None)));
        let fail = EmulatorCommand::FailNode { name: "real-0".into() };
        assert!(matches!(faults.next(&fail), Ok(Some((Action::Stop, _)))));
        assert!(matches!(faults.next(&fail), Ok(None)), "already down");
        assert!(matches!(faults.next(&recover), Ok(Some((Action::Start, _)))));
    }

    #[test]
    fn other_nodes_and_faults_a_kubelet_cannot_play_are_unsupported() {
        let faults = sink();
        let other = EmulatorCommand::FailNode {
            name: "emulated-3".into(),
        };
        assert!(matches!(faults.next(&other), Err(Carried::Unsupported)));
        let degrade = EmulatorCommand::DegradeNode { name: "real-0".into() };
        assert!(matches!(faults.next(&degrade), Err(Carried::Unsupported)));
    }
}
