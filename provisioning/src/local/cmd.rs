//! Running the external commands that provisioning needs (apt-get, go,
//! openssl, curl) with failures turned into [`ProvisionError`]s.

use super::error::{ProvisionError, TAIL_LINES, log_tail, tail};
use std::fs::File;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// How a command reads in an error message: the program and its arguments,
/// long arguments shortened so a message stays readable.
pub(crate) fn describe(cmd: &Command) -> String {
    let mut parts = vec![cmd.get_program().to_string_lossy().into_owned()];
    for arg in cmd.get_args() {
        let arg = arg.to_string_lossy();
        if arg.len() > 80 {
            parts.push(format!("{}...", arg.chars().take(77).collect::<String>()));
        } else {
            parts.push(arg.into_owned());
        }
    }
    parts.join(" ")
}

/// Runs `cmd` to completion, capturing its output; a non-zero exit is an error
/// carrying the tail of stderr (or stdout when stderr is empty).
pub(crate) fn run(cmd: &mut Command) -> Result<Output, ProvisionError> {
    let command = describe(cmd);
    tracing::debug!(%command, "running");
    let output = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|source| ProvisionError::Spawn {
            command: command.clone(),
            source,
        })?;
    if output.status.success() {
        return Ok(output);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let text = if stderr.trim().is_empty() {
        String::from_utf8_lossy(&output.stdout)
    } else {
        stderr
    };
    Err(ProvisionError::Command {
        command,
        code: output.status.code(),
        tail: tail(&text, TAIL_LINES),
    })
}

/// Runs `cmd` to completion with stdout and stderr appended to `log`
/// (for long steps such as the build, whose output is too big to hold).
pub(crate) fn run_logged(cmd: &mut Command, log: &Path) -> Result<(), ProvisionError> {
    let command = describe(cmd);
    tracing::debug!(%command, log = %log.display(), "running");
    let out = File::options()
        .create(true)
        .append(true)
        .open(log)
        .map_err(ProvisionError::io("cannot open log", log))?;
    let err = out.try_clone().map_err(ProvisionError::io("cannot open log", log))?;
    let status = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|source| ProvisionError::Spawn {
            command: command.clone(),
            source,
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(ProvisionError::Command {
            command,
            code: status.code(),
            tail: log_tail(log),
        })
    }
}

/// Whether `program` is on the PATH.
pub(crate) fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failing_command_reports_code_and_stderr() {
        let err = run(Command::new("sh").args(["-c", "echo out; echo boom >&2; exit 3"])).unwrap_err();
        match err {
            ProvisionError::Command { command, code, tail } => {
                assert!(command.starts_with("sh -c"), "{command}");
                assert_eq!(code, Some(3));
                assert_eq!(tail, "boom");
            }
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let err = run(&mut Command::new("/nonexistent/schedlab-no-such-program")).unwrap_err();
        assert!(matches!(err, ProvisionError::Spawn { .. }), "{err:?}");
    }

    #[test]
    fn logged_command_failure_carries_the_log_tail() {
        let dir = std::env::temp_dir().join(format!("schedlab-cmd-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("x.log");
        let err = run_logged(
            Command::new("sh").args(["-c", "echo first; echo second >&2; exit 2"]),
            &log,
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("first") && text.contains("second") && text.contains("exit code 2"),
            "{text}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
