//! Node faults on clusters with real kubelets (kind, GKE).
//!
//! The run player hands fault actions to whoever holds the other end of its
//! `faults` channel ([`kube_backend::run::play`]); on emulated nodes that is
//! the node emulator. Here a [`NodeFaults`] sink carries them out on real
//! nodes instead (stop a kind node's container, cordon a GKE node, ...):
//! [`spawn_pump`] gives the player a channel whose commands go to the sink,
//! or to the emulator for the run's emulated nodes when a run mixes both.
//!
//! The player numbers existing nodes in name order, so it names node `k` of
//! the scenario after the `k`-th name; [`PumpOptions::rename`] turns that
//! into the node the provisioner meant as scenario node `k`.

use super::external::ExternalError;
use futures::future::BoxFuture;
use kube_backend::KubeError;
use kube_backend::emulator::EmulatorCommand;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::mpsc::{UnboundedSender, unbounded_channel};
use tokio::task::JoinHandle;

/// What a sink did with a fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Carried {
    /// Carried out; the text says how (a command line, an API call).
    Done(String),
    /// Nothing was needed (recovering a node that was never failed).
    NoOp,
    /// This sink cannot play such a fault (degrading a real node, say).
    Unsupported,
}

/// A fault that could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum FaultError {
    #[error(transparent)]
    External(#[from] ExternalError),
    #[error(transparent)]
    Kube(#[from] KubeError),
    #[error("{0}")]
    Other(String),
}

/// Carries out fault commands on real nodes.
pub trait NodeFaults: Send + Sync + std::fmt::Debug {
    /// Carries out `command` (its node is the real node's name).
    fn carry_out<'a>(&'a self, command: &'a EmulatorCommand) -> BoxFuture<'a, Result<Carried, FaultError>>;
}

/// What the pump did, for the run's manifest.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FaultStats {
    /// carried out on a real node
    pub carried: u64,
    /// nothing to do
    pub no_op: u64,
    /// forwarded to the node emulator (emulated nodes of a mixed run)
    pub emulated: u64,
    /// faults the sink cannot play
    pub unsupported: u64,
    /// faults that failed (each logged)
    pub failed: u64,
    /// what was done, in order (command lines or API calls)
    pub actions: Vec<String>,
}

/// Where the pump sends what.
#[derive(Debug, Clone, Default)]
pub struct PumpOptions {
    /// the player's node name -> the real node's name (names not in the map are kept)
    pub rename: HashMap<String, String>,
    /// the emulator's commands and the (renamed) nodes it plays; their
    /// faults, and every KillPod, go there
    pub emulator: Option<(UnboundedSender<EmulatorCommand>, HashSet<String>)>,
}

/// The rename map for a run on existing nodes: the player names scenario
/// node `k` after `sorted(intended)[k]`; `intended[k]` is the node meant.
pub fn rename_map(intended: &[String]) -> HashMap<String, String> {
    let mut played = intended.to_vec();
    played.sort();
    played.into_iter().zip(intended.iter().cloned()).collect()
}

/// The node a command is about, if any.
pub fn node_of(command: &EmulatorCommand) -> Option<&str> {
    match command {
        EmulatorCommand::FailNode { name }
        | EmulatorCommand::RecoverNode { name }
        | EmulatorCommand::DegradeNode { name }
        | EmulatorCommand::LoseNode { name } => Some(name),
        EmulatorCommand::KillPod { .. } => None,
    }
}

fn renamed(command: EmulatorCommand, rename: &HashMap<String, String>) -> EmulatorCommand {
    let map = |name: String| rename.get(&name).cloned().unwrap_or(name);
    match command {
        EmulatorCommand::FailNode { name } => EmulatorCommand::FailNode { name: map(name) },
        EmulatorCommand::RecoverNode { name } => EmulatorCommand::RecoverNode { name: map(name) },
        EmulatorCommand::DegradeNode { name } => EmulatorCommand::DegradeNode { name: map(name) },
        EmulatorCommand::LoseNode { name } => EmulatorCommand::LoseNode { name: map(name) },
        kill @ EmulatorCommand::KillPod { .. } => kill,
    }
}

/// Starts a task that carries out every command sent on the returned
/// channel (give it to [`kube_backend::run::play`]) and ends, returning what
/// it did, when the channel's last sender is dropped (play drops it when
/// it returns). Failures are logged and counted, never fatal to the run.
pub fn spawn_pump(
    sink: Arc<dyn NodeFaults>,
    opts: PumpOptions,
) -> (UnboundedSender<EmulatorCommand>, JoinHandle<FaultStats>) {
    let (tx, mut rx) = unbounded_channel::<EmulatorCommand>();
    let handle = tokio::spawn(async move {
        let mut stats = FaultStats::default();
        while let Some(command) = rx.recv().await {
            let command = renamed(command, &opts.rename);
            if let Some((emulator, nodes)) = &opts.emulator {
                let to_emulator = match node_of(&command) {
                    Some(node) => nodes.contains(node),
                    None => true,
                };
                if to_emulator {
                    if emulator.send(command.clone()).is_ok() {
                        stats.emulated += 1;
                    } else {
                        tracing::warn!(?command, "the node emulator has stopped; fault dropped");
                        stats.failed += 1;
                    }
                    continue;
                }
            }
            match sink.carry_out(&command).await {
                Ok(Carried::Done(how)) => {
                    tracing::info!(?command, %how, "node fault carried out");
                    stats.carried += 1;
                    stats.actions.push(how);
                }
                Ok(Carried::NoOp) => stats.no_op += 1,
                Ok(Carried::Unsupported) => {
                    if stats.unsupported == 0 {
                        tracing::warn!(
                            ?command,
                            "this cluster cannot play such a fault; it is counted, not played"
                        );
                    }
                    stats.unsupported += 1;
                }
                Err(err) => {
                    tracing::warn!(?command, error = %err, "node fault failed");
                    stats.failed += 1;
                }
            }
        }
        stats
    });
    (tx, handle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records what it is asked; fails nodes named "bad".
    #[derive(Debug, Default)]
    struct Recorder {
        seen: Mutex<Vec<EmulatorCommand>>,
    }

    impl NodeFaults for Recorder {
        fn carry_out<'a>(&'a self, command: &'a EmulatorCommand) -> BoxFuture<'a, Result<Carried, FaultError>> {
            Box::pin(async move {
                self.seen.lock().unwrap().push(command.clone());
                match command {
                    EmulatorCommand::FailNode { name } if name == "bad" => Err(FaultError::Other("no".into())),
                    EmulatorCommand::FailNode { name } => Ok(Carried::Done(format!("fail {name}"))),
                    EmulatorCommand::RecoverNode { .. } => Ok(Carried::NoOp),
                    _ => Ok(Carried::Unsupported),
                }
            })
        }
    }

    #[test]
    fn rename_map_undoes_name_order() {
        let intended: Vec<String> = ["n-worker", "n-worker2", "n-worker10", "n-worker3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let map = rename_map(&intended);
        // the player's order is the sorted one: worker, worker10, worker2, worker3
        assert_eq!(map["n-worker"], "n-worker");
        assert_eq!(map["n-worker10"], "n-worker2");
        assert_eq!(map["n-worker2"], "n-worker10");
        assert_eq!(map["n-worker3"], "n-worker3");
    }

    #[tokio::test]
    async fn pump_renames_routes_and_counts() {
        let sink = Arc::new(Recorder::default());
        let (emu_tx, mut emu_rx) = unbounded_channel();
        let opts = PumpOptions {
            rename: HashMap::from([("a".to_string(), "real-b".to_string())]),
            emulator: Some((emu_tx, HashSet::from(["emu-1".to_string()]))),
        };
        let (tx, handle) = spawn_pump(sink.clone(), opts);
        let fail = |name: &str| EmulatorCommand::FailNode { name: name.into() };
        tx.send(fail("a")).unwrap();
        tx.send(fail("emu-1")).unwrap();
        tx.send(fail("bad")).unwrap();
        tx.send(EmulatorCommand::RecoverNode { name: "x".into() }).unwrap();
        tx.send(EmulatorCommand::DegradeNode { name: "x".into() }).unwrap();
        tx.send(EmulatorCommand::KillPod {
            namespace: "ns".into(),
            name: "p".into(),
        })
        .unwrap();
        drop(tx);
        let stats = handle.await.unwrap();
        assert_eq!(
            (
                stats.carried,
                stats.no_op,
                stats.emulated,
                stats.unsupported,
                stats.failed
            ),
            (1, 1, 2, 1, 1)
        );
        assert_eq!(stats.actions, vec!["fail real-b".to_string()]);
        let seen = sink.seen.lock().unwrap().clone();
        assert_eq!(seen[0], fail("real-b"), "renamed before the sink sees it");
        assert!(!seen.contains(&fail("emu-1")), "emulated nodes' faults skip the sink");
        assert_eq!(emu_rx.recv().await, Some(fail("emu-1")));
        assert!(matches!(emu_rx.recv().await, Some(EmulatorCommand::KillPod { .. })));
    }
}
