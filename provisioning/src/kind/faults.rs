//! Node faults on kind: a node is a container, so a failed node is a stopped
//! (or paused) container and a recovered one is started (unpaused) again.
//! Its kubelet then stops reporting and the control plane's node-lifecycle
//! controller marks it NotReady and evicts its pods, as on a real cluster.

use crate::external::{CommandRunner, ExternalCommand};
use crate::faults::{Carried, FaultError, NodeFaults};
use futures::future::BoxFuture;
use kube_backend::emulator::EmulatorCommand;
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// How a failed kind node goes down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum KindFaultMode {
    /// `docker stop`: the kubelet and the containers end (a crashed machine)
    Stop,
    /// `docker pause`: everything freezes (a hung machine, a partition)
    Pause,
}

/// The docker command for a fault on the kind node (container) `command` names;
/// None for faults a kind node cannot play (degrading a node, killing a pod).
pub fn docker_command(mode: KindFaultMode, command: &EmulatorCommand) -> Option<ExternalCommand> {
    let (verb, node, why) = match (command, mode) {
        // a kind node that leaves is played as a failure of its container
        (EmulatorCommand::FailNode { name } | EmulatorCommand::LoseNode { name }, KindFaultMode::Stop) => {
            ("stop", name, "fail node")
        }
        (EmulatorCommand::FailNode { name } | EmulatorCommand::LoseNode { name }, KindFaultMode::Pause) => {
            ("pause", name, "fail node")
        }
        (EmulatorCommand::RecoverNode { name }, KindFaultMode::Stop) => ("start", name, "recover node"),
        (EmulatorCommand::RecoverNode { name }, KindFaultMode::Pause) => ("unpause", name, "recover node"),
        (EmulatorCommand::DegradeNode { .. } | EmulatorCommand::KillPod { .. }, _) => return None,
    };
    Some(ExternalCommand::new(
        "docker",
        [verb, node.as_str()],
        format!("{why} {node}"),
    ))
}

/// Plays FailNode/RecoverNode on kind nodes through docker.
#[derive(Debug)]
pub struct KindFaults {
    runner: Arc<CommandRunner>,
    mode: KindFaultMode,
    /// the kind nodes it may touch (never the control plane)
    workers: HashSet<String>,
    /// nodes it took down and has not brought back
    down: Mutex<HashSet<String>>,
}

impl KindFaults {
    pub fn new(
        runner: Arc<CommandRunner>,
        mode: KindFaultMode,
        workers: impl IntoIterator<Item = String>,
    ) -> KindFaults {
        KindFaults {
            runner,
            mode,
            workers: workers.into_iter().collect(),
            down: Mutex::new(HashSet::new()),
        }
    }

    /// The command for `command`, keeping track of which nodes are down, so
    /// a recovery only touches a node this sink took down.
    fn next(&self, command: &EmulatorCommand) -> Result<Option<ExternalCommand>, Carried> {
        let Some(docker) = docker_command(self.mode, command) else {
            return Err(Carried::Unsupported);
        };
        let Some(node) = super::super::faults::node_of(command) else {
            return Err(Carried::Unsupported);
        };
        if !self.workers.contains(node) {
            return Err(Carried::Unsupported);
        }
        let mut down = self.down.lock().map_err(|_| Carried::Unsupported)?;
        let changes = match command {
            EmulatorCommand::FailNode { .. } => down.insert(node.to_string()),
            _ => down.remove(node),
        };
        Ok(changes.then_some(docker))
    }
}

impl NodeFaults for KindFaults {
    fn carry_out<'a>(&'a self, command: &'a EmulatorCommand) -> BoxFuture<'a, Result<Carried, FaultError>> {
        Box::pin(async move {
            let docker = match self.next(command) {
                Ok(Some(docker)) => docker,
                Ok(None) => return Ok(Carried::NoOp),
                Err(carried) => return Ok(carried),
            };
            let runner = self.runner.clone();
            let line = docker.shell();
            tokio::task::spawn_blocking(move || runner.run(&docker))
                .await
                .map_err(|e| FaultError::Other(format!("`{line}` did not finish: {e}")))??;
            Ok(Carried::Done(line))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fail(name: &str) -> EmulatorCommand {
        EmulatorCommand::FailNode { name: name.into() }
    }
    fn recover(name: &str) -> EmulatorCommand {
        EmulatorCommand::RecoverNode { name: name.into() }
    }

    #[test]
    fn docker_commands_per_mode() {
        let line = |mode, c: &EmulatorCommand| docker_command(mode, c).map(|d| d.shell());
        assert_eq!(
            line(KindFaultMode::Stop, &fail("k-worker2")).as_deref(),
            Some("docker stop k-worker2")
        );
        assert_eq!(
            line(KindFaultMode::Stop, &recover("k-worker2")).as_deref(),
            Some("docker start k-worker2")
        );
        assert_eq!(
            line(KindFaultMode::Pause, &fail("k-worker")).as_deref(),
            Some("docker pause k-worker")
        );
        assert_eq!(
            line(KindFaultMode::Pause, &recover("k-worker")).as_deref(),
            Some("docker unpause k-worker")
        );
        assert_eq!(
            line(
                KindFaultMode::Stop,
                &EmulatorCommand::DegradeNode {
                    name: "k-worker".into()
                }
            ),
            None
        );
    }

    #[tokio::test]
    async fn sink_runs_docker_once_per_change_and_only_on_workers() {
        let runner = Arc::new(CommandRunner::dry_run());
        let sink = KindFaults::new(runner.clone(), KindFaultMode::Stop, ["k-worker".to_string()]);
        assert_eq!(
            sink.carry_out(&fail("k-worker")).await.unwrap(),
            Carried::Done("docker stop k-worker".into())
        );
        // already down: nothing to do
        assert_eq!(sink.carry_out(&fail("k-worker")).await.unwrap(), Carried::NoOp);
        assert_eq!(
            sink.carry_out(&recover("k-worker")).await.unwrap(),
            Carried::Done("docker start k-worker".into())
        );
        // a recovery of a node that is up touches nothing
        assert_eq!(sink.carry_out(&recover("k-worker")).await.unwrap(), Carried::NoOp);
        // never the control plane or unknown containers
        assert_eq!(
            sink.carry_out(&fail("k-control-plane")).await.unwrap(),
            Carried::Unsupported
        );
        let lines: Vec<String> = runner.commands().iter().map(|c| c.shell()).collect();
        assert_eq!(lines, vec!["docker stop k-worker", "docker start k-worker"]);
    }
}
