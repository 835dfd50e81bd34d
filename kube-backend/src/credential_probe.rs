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

/// Why the probe gave up. None of them holds the plugin's arguments,
/// environment or output, which may hold secrets (`--client-secret X`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeFailure {
    /// the plugin did not exit within the limit (it was killed, with its group)
    Hung { command: String },
    /// the plugin exited unsuccessfully
    Failed { command: String, status: String },
    /// the plugin wrote more than [`MAX_PLUGIN_OUTPUT_BYTES`] (it was killed, with its group)
    TooMuchOutput { command: String },
}

/// Bytes of a credential plugin's output read at most: an ExecCredential
/// is a few kilobytes (a token, perhaps a client certificate and key).
pub const MAX_PLUGIN_OUTPUT_BYTES: u64 = 1 << 20;

/// How the plugin's run ended, within the limit.
enum Ended {
    Exited(std::process::ExitStatus, Vec<u8>),
    TooMuchOutput,
    Unwaitable,
}

/// Runs `exec` as kube would (its arguments and environment, no terminal
/// input) for at most `limit`, reading at most [`MAX_PLUGIN_OUTPUT_BYTES`]
/// of its output. Ok when it exited successfully (the token it gave is
/// registered with [`crate::redact::remember_sent`]) or could not be started:
/// kube then reports what went wrong. A plugin that hangs, fails or writes
/// too much is reported by its program name only.
pub async fn probe(exec: &ExecConfig, limit: Duration) -> Result<(), ProbeFailure> {
    use tokio::io::AsyncReadExt;
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
    .stdout(std::process::Stdio::piped())
    .stderr(std::process::Stdio::null())
    // its own group, so that whatever it starts is killed with it
    .process_group(0)
    .kill_on_drop(true);
    let Ok(mut child) = cmd.spawn() else {
        return Ok(());
    };
    let stdout = child.stdout.take();
    let run = async {
        let mut out = Vec::new();
        if let Some(stdout) = stdout {
            // one byte past the cap tells output at the cap from more
            if stdout
                .take(MAX_PLUGIN_OUTPUT_BYTES + 1)
                .read_to_end(&mut out)
                .await
                .is_err()
            {
                out.clear();
            }
        }
        if out.len() as u64 > MAX_PLUGIN_OUTPUT_BYTES {
            return Ended::TooMuchOutput;
        }
        match child.wait().await {
            Ok(status) => Ended::Exited(status, out),
            Err(_) => Ended::Unwaitable,
        }
    };
    let ended = tokio::time::timeout(limit, run).await;
    let program = program_name(command);
    let failure = match ended {
        Ok(Ended::Exited(status, out)) if status.success() => {
            remember_token(&out);
            return Ok(());
        }
        Ok(Ended::Exited(status, _)) => {
            return Err(ProbeFailure::Failed {
                command: program,
                status: status.to_string(),
            });
        }
        Ok(Ended::Unwaitable) => return Ok(()),
        Ok(Ended::TooMuchOutput) => ProbeFailure::TooMuchOutput { command: program },
        Err(_) => ProbeFailure::Hung { command: program },
    };
    if let Some(pid) = child.id().and_then(|id| i32::try_from(id).ok()) {
        let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
    }
    let _ = child.kill().await;
    Err(failure)
}

/// The plugin's program as messages show it: the command as the kubeconfig
/// writes it (its arguments are separate and never shown), escaped and cut.
fn program_name(command: &str) -> String {
    schedlab_core::text::quoted(command)
}

/// Registers the token of an ExecCredential the plugin printed, so that a
/// server quoting it back has it redacted.
fn remember_token(out: &[u8]) {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(out) else {
        return;
    };
    let status = &value["status"];
    for key in ["token", "clientKeyData"] {
        if let Some(v) = status[key].as_str() {
            crate::redact::remember_sent(v);
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
        // a missing plugin is kube's to report
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

    /// Hardening round 2, item 2: a failing plugin was left to kube, whose
    /// error prints its command line whole (arguments, environment values).
    #[tokio::test]
    async fn a_failing_plugin_is_reported_by_its_program_and_status_only() {
        let mut failing = exec("echo out-s3cr3t; echo err-s3cr3t >&2; exit 3");
        failing
            .args
            .as_mut()
            .unwrap()
            .extend(["--client-secret".into(), "arg-s3cr3t".into()]);
        failing.env.as_mut().unwrap().push(HashMap::from([
            ("name".to_string(), "PASSWORD".to_string()),
            ("value".to_string(), "env-s3cr3t".to_string()),
        ]));
        let got = probe(&failing, Duration::from_secs(5)).await;
        let Err(ProbeFailure::Failed { command, status }) = &got else {
            panic!("{got:?}");
        };
        assert_eq!(command, "/bin/sh");
        assert!(status.contains('3'), "{status}");
        assert!(!format!("{got:?}").contains("s3cr3t"), "{got:?}");
    }

    /// Hardening round 2, item 9: a plugin's output was read whole (3 GB of
    /// it made 2.9 GB of memory, past the time limit).
    #[tokio::test]
    async fn a_plugin_that_writes_too_much_is_stopped() {
        let started = std::time::Instant::now();
        let got = probe(&exec("exec yes s3cr3t"), Duration::from_secs(20)).await;
        assert_eq!(
            got,
            Err(ProbeFailure::TooMuchOutput {
                command: "/bin/sh".into()
            })
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        // at the cap is fine
        let at_cap = format!("head -c {MAX_PLUGIN_OUTPUT_BYTES} /dev/zero");
        assert_eq!(probe(&exec(&at_cap), Duration::from_secs(20)).await, Ok(()));
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
