//! A kubeconfig user's exec credential plugin, run once with a time limit
//! before the client is built.
//!
//! kube runs the plugin synchronously while it builds the client and waits
//! for it without a limit, so a plugin that never answers (an expired login
//! waiting for a browser, a wedged cloud CLI) hangs the whole command, and
//! once the command is stopped the plugin can be left running. Running it
//! first, in its own process group, lets a hang end as an error within the
//! connection timeout, with the whole group killed. A plugin that answers is
//! run again by kube (plugins are cheap and cache their tokens); one that
//! fails is left to kube, whose error says why.

use kube::config::{ExecConfig, Kubeconfig};
use std::time::Duration;

/// The exec plugin of the user of `context` (or of the current context).
pub fn exec_of(kubeconfig: &Kubeconfig, context: Option<&str>) -> Option<ExecConfig> {
    let name = context
        .map(str::to_string)
        .or_else(|| kubeconfig.current_context.clone())?;
    let user = kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == name)?
        .context
        .as_ref()?
        .user
        .clone()?;
    kubeconfig
        .auth_infos
        .iter()
        .find(|a| a.name == user)?
        .auth_info
        .as_ref()?
        .exec
        .clone()
}

/// Why the probe gave up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeFailure {
    /// the plugin did not exit within the limit (it was killed, with its group)
    Hung { command: String },
}

/// Runs `exec` as kube would (its arguments and environment, no terminal
/// input) for at most `limit`. Ok when it exited (whatever its status) or
/// could not be started: kube then reports what went wrong.
pub async fn probe(exec: &ExecConfig, limit: Duration) -> Result<(), ProbeFailure> {
    let Some(command) = &exec.command else {
        return Ok(());
    };
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(exec.args.iter().flatten());
    for env in exec.env.iter().flatten() {
        if let (Some(name), Some(value)) = (env.get("name"), env.get("value")) {
            cmd.env(name, value);
        }
    }
    cmd.env(
        "KUBERNETES_EXEC_INFO",
        format!(
            r#"{{"apiVersion":{},"kind":"ExecCredential","spec":{{"interactive":false}}}}"#,
            serde_json::to_string(&exec.api_version).unwrap_or_else(|_| "null".into())
        ),
    )
    .stdin(std::process::Stdio::null())
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    // its own group, so that whatever it starts is killed with it
    .process_group(0)
    .kill_on_drop(true);
    let Ok(mut child) = cmd.spawn() else {
        return Ok(());
    };
    match tokio::time::timeout(limit, child.wait()).await {
        Ok(_) => Ok(()),
        Err(_) => {
            if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
                let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            }
            let _ = child.kill().await;
            Err(ProbeFailure::Hung {
                command: command.clone(),
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn exec(script: &str) -> ExecConfig {
        ExecConfig {
            api_version: Some("client.authentication.k8s.io/v1".into()),
            command: Some("/bin/sh".into()),
            args: Some(vec!["-c".into(), script.into()]),
            env: Some(vec![HashMap::from([
                ("name".to_string(), "PROBE_MARK".to_string()),
                ("value".to_string(), "x".to_string()),
            ])]),
            drop_env: None,
            install_hint: None,
            interactive_mode: None,
            provide_cluster_info: false,
            cluster: None,
            other: Default::default(),
        }
    }

    /// Whether process `pid` still runs (a zombie does not).
    fn running(pid: i32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|stat| {
                // the state follows the command name in parentheses
                let state = stat.rsplit(')').next().unwrap_or("").trim_start();
                !state.starts_with('Z')
            })
            .unwrap_or(false)
    }

    #[tokio::test]
    async fn a_plugin_that_answers_passes_and_one_that_hangs_is_killed_with_its_children() {
        assert_eq!(
            probe(&exec("test \"$PROBE_MARK\" = x"), Duration::from_secs(5)).await,
            Ok(())
        );
        // failing or missing plugins are kube's to report
        assert_eq!(probe(&exec("exit 3"), Duration::from_secs(5)).await, Ok(()));
        let mut missing = exec("");
        missing.command = Some("/no/such/plugin".into());
        assert_eq!(probe(&missing, Duration::from_secs(5)).await, Ok(()));

        // a plugin that starts a child and waits on it forever
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("child.pid");
        let script = format!("sleep 600 & echo $! > {}; wait", pid_file.display());
        let started = std::time::Instant::now();
        let got = probe(&exec(&script), Duration::from_millis(500)).await;
        assert_eq!(
            got,
            Err(ProbeFailure::Hung {
                command: "/bin/sh".into()
            })
        );
        assert!(started.elapsed() < Duration::from_secs(5));
        // its child was killed with it: nothing is left behind
        let child: i32 = std::fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
        let mut alive = running(child);
        for _ in 0..20 {
            if !alive {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            alive = running(child);
        }
        assert!(!alive, "the plugin's child {child} was left running");
    }

    #[test]
    fn finds_the_exec_of_the_context_user() {
        let kc: Kubeconfig = serde_saphyr::from_str(
            r#"
apiVersion: v1
kind: Config
current-context: a
contexts:
  - name: a
    context: {cluster: c, user: ua}
  - name: b
    context: {cluster: c, user: ub}
users:
  - name: ua
    user: {token: t}
  - name: ub
    user:
      exec: {apiVersion: client.authentication.k8s.io/v1, command: my-plugin}
clusters:
  - name: c
    cluster: {server: "https://127.0.0.1:1"}
"#,
        )
        .unwrap();
        assert!(exec_of(&kc, None).is_none());
        assert_eq!(
            exec_of(&kc, Some("b")).and_then(|e| e.command).as_deref(),
            Some("my-plugin")
        );
        assert!(exec_of(&kc, Some("nope")).is_none());
    }
}
