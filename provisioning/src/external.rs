//! The one place where kind and GKE provisioning run external programs
//! (kind, docker, gcloud, kubectl). Every command is an [`ExternalCommand`]
//! with the reason it runs; a [`CommandRunner`] either executes it, turning a
//! failure into an [`ExternalError`] that names the command and carries the
//! tail of its stderr, or, in dry-run, only records it. So a dry run lists
//! exactly what a real run would execute, shell-quoted, in order.

use std::fmt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// How many trailing lines of a failed command's output an error keeps.
const TAIL_LINES: usize = 30;

/// One external command: the program, its arguments, and why it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalCommand {
    pub program: String,
    pub args: Vec<String>,
    /// one line for the plan and for error messages
    pub why: String,
    /// the working directory (None: the current one)
    pub dir: Option<PathBuf>,
    /// environment variables set for it (on top of this process's)
    pub env: Vec<(String, String)>,
}

impl ExternalCommand {
    pub fn new<I, S>(program: &str, args: I, why: impl Into<String>) -> ExternalCommand
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        ExternalCommand {
            program: program.to_string(),
            args: args.into_iter().map(Into::into).collect(),
            why: why.into(),
            dir: None,
            env: Vec::new(),
        }
    }

    /// The same command with `key=value` in its environment.
    pub fn with_env(mut self, key: &str, value: impl Into<String>) -> ExternalCommand {
        self.env.push((key.to_string(), value.into()));
        self
    }

    /// The same command, run in `dir`.
    pub fn in_dir(mut self, dir: impl Into<PathBuf>) -> ExternalCommand {
        self.dir = Some(dir.into());
        self
    }

    /// The command as a shell would take it: each word quoted when it needs it.
    pub fn shell(&self) -> String {
        let mut words: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_quote(v)))
            .collect();
        words.push(shell_quote(&self.program));
        words.extend(self.args.iter().map(|a| shell_quote(a)));
        let line = words.join(" ");
        match &self.dir {
            Some(dir) => format!("(cd {} && {line})", shell_quote(&dir.to_string_lossy())),
            None => line,
        }
    }
}

impl fmt::Display for ExternalCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shell())
    }
}

/// `word` quoted for a POSIX shell: as it is when it holds only safe
/// characters, else in single quotes (a quote inside written as `'\''`).
pub fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
    if safe {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// One step of a provisioning plan: an external command, or something done
/// in-process (API calls) that the plan shows as a comment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PlanStep {
    Command(ExternalCommand),
    InProcess(String),
}

/// What provisioning will do, in order; printed by `--dry-run`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandPlan {
    pub steps: Vec<PlanStep>,
}

impl CommandPlan {
    pub fn command(&mut self, command: ExternalCommand) {
        self.steps.push(PlanStep::Command(command));
    }

    pub fn in_process(&mut self, what: impl Into<String>) {
        self.steps.push(PlanStep::InProcess(what.into()));
    }

    pub fn extend(&mut self, other: CommandPlan) {
        self.steps.extend(other.steps);
    }

    /// The external commands, in order.
    pub fn commands(&self) -> Vec<&ExternalCommand> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                PlanStep::Command(c) => Some(c),
                PlanStep::InProcess(_) => None,
            })
            .collect()
    }

    /// The plan as a shell script would read: each command after a comment
    /// saying why, in-process steps as comments.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for step in &self.steps {
            match step {
                PlanStep::Command(c) => {
                    out.push_str(&format!("# {}\n{}\n", c.why, c.shell()));
                }
                PlanStep::InProcess(what) => out.push_str(&format!("# (in-process) {what}\n")),
            }
        }
        out
    }
}

/// An external command that could not be run or failed.
#[derive(Debug, thiserror::Error)]
pub enum ExternalError {
    #[error("could not start `{command}` ({why}): {source}")]
    Spawn {
        command: String,
        why: String,
        #[source]
        source: std::io::Error,
    },
    #[error("`{command}` ({why}) failed with exit code {}; last output:\n{}", code.map_or_else(|| "none (killed by a signal)".to_owned(), |c| c.to_string()), kube_backend::redact::redact(.tail))]
    Failed {
        command: String,
        why: String,
        code: Option<i32>,
        tail: String,
    },
}

/// Executes commands, or in dry-run only records them.
#[derive(Debug)]
pub struct CommandRunner {
    dry_run: bool,
    done: Mutex<Vec<ExternalCommand>>,
}

impl CommandRunner {
    /// A runner that executes.
    pub fn execute() -> CommandRunner {
        CommandRunner {
            dry_run: false,
            done: Mutex::new(Vec::new()),
        }
    }

    /// A runner that only records.
    pub fn dry_run() -> CommandRunner {
        CommandRunner {
            dry_run: true,
            done: Mutex::new(Vec::new()),
        }
    }

    pub fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    /// Runs `command` to completion and returns its stdout (empty in
    /// dry-run). A non-zero exit is an error with the tail of stderr (or of
    /// stdout when stderr is empty).
    pub fn run(&self, command: &ExternalCommand) -> Result<String, ExternalError> {
        if let Ok(mut done) = self.done.lock() {
            done.push(command.clone());
        }
        let line = command.shell();
        if self.dry_run {
            tracing::debug!(command = %line, why = %command.why, "dry run: not executed");
            return Ok(String::new());
        }
        tracing::info!(command = %line, why = %command.why, "running");
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args).stdin(Stdio::null());
        if let Some(dir) = &command.dir {
            cmd.current_dir(dir);
        }
        cmd.envs(command.env.iter().map(|(k, v)| (k, v)));
        let output = cmd.output().map_err(|source| ExternalError::Spawn {
            command: line.clone(),
            why: command.why.clone(),
            source,
        })?;
        if output.status.success() {
            return Ok(String::from_utf8_lossy(&output.stdout).into_owned());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let text = if stderr.trim().is_empty() {
            String::from_utf8_lossy(&output.stdout)
        } else {
            stderr
        };
        Err(ExternalError::Failed {
            command: line,
            why: command.why.clone(),
            code: output.status.code(),
            tail: tail(&text, TAIL_LINES),
        })
    }

    /// Runs each command in turn, stopping at the first failure.
    pub fn run_all(&self, commands: &[ExternalCommand]) -> Result<(), ExternalError> {
        for command in commands {
            self.run(command)?;
        }
        Ok(())
    }

    /// Every command asked of this runner so far, executed or not.
    pub fn commands(&self) -> Vec<ExternalCommand> {
        self.done.lock().map(|d| d.clone()).unwrap_or_default()
    }
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_leaves_plain_words_and_quotes_the_rest() {
        assert_eq!(shell_quote("kind"), "kind");
        assert_eq!(shell_quote("--node-labels=a=b,c=d"), "--node-labels=a=b,c=d");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
    }

    #[test]
    fn shell_line_of_a_command() {
        let cmd = ExternalCommand::new("docker", ["build", "-t", "x:dev", "."], "build").in_dir("/a b");
        assert_eq!(cmd.shell(), "(cd '/a b' && docker build -t x:dev .)");
        let cmd = ExternalCommand::new("gcloud", ["x"], "y").with_env("KUBECONFIG", "/k c");
        assert_eq!(cmd.shell(), "KUBECONFIG='/k c' gcloud x");
        assert_eq!(cmd.to_string(), cmd.shell());
    }

    #[test]
    fn dry_run_records_and_executes_nothing() {
        let dir = std::env::temp_dir().join(format!("schedlab-external-dry-{}", std::process::id()));
        let runner = CommandRunner::dry_run();
        let touch = ExternalCommand::new("touch", [dir.to_string_lossy().into_owned()], "would create a file");
        assert_eq!(runner.run(&touch).unwrap(), "");
        runner
            .run_all(&[ExternalCommand::new("false", Vec::<String>::new(), "would fail")])
            .unwrap();
        assert!(!dir.exists(), "a dry run must not execute");
        let done = runner.commands();
        assert_eq!(done.len(), 2);
        assert_eq!(done[0], touch);
    }

    #[test]
    fn executing_returns_stdout_and_failures_name_the_command() {
        let runner = CommandRunner::execute();
        let out = runner
            .run(&ExternalCommand::new("sh", ["-c", "echo hello $WHO"], "greet").with_env("WHO", "you"))
            .unwrap();
        assert_eq!(out, "hello you\n");
        let err = runner
            .run(&ExternalCommand::new(
                "sh",
                ["-c", "echo out; echo boom >&2; exit 3"],
                "fail on purpose",
            ))
            .unwrap_err();
        match &err {
            ExternalError::Failed {
                command,
                code,
                tail,
                why,
            } => {
                assert_eq!(command, "sh -c 'echo out; echo boom >&2; exit 3'");
                assert_eq!(*code, Some(3));
                assert_eq!(tail, "boom");
                assert_eq!(why, "fail on purpose");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(err.to_string().contains("fail on purpose"), "{err}");
    }

    #[test]
    fn plan_renders_commands_and_in_process_steps() {
        let mut plan = CommandPlan::default();
        plan.command(ExternalCommand::new("kind", ["create", "cluster"], "make the cluster"));
        plan.in_process("apply the manifests");
        assert_eq!(plan.commands().len(), 1);
        assert_eq!(
            plan.render(),
            "# make the cluster\nkind create cluster\n# (in-process) apply the manifests\n"
        );
    }

    #[test]
    fn run_all_stops_at_the_first_failure() {
        let runner = CommandRunner::execute();
        let cmds = [
            ExternalCommand::new("true", Vec::<String>::new(), "one"),
            ExternalCommand::new("false", Vec::<String>::new(), "two"),
            ExternalCommand::new("true", Vec::<String>::new(), "three"),
        ];
        assert!(runner.run_all(&cmds).is_err());
        assert_eq!(runner.commands().len(), 2);
    }

    #[test]
    fn missing_program_is_a_spawn_error() {
        let runner = CommandRunner::execute();
        let err = runner
            .run(&ExternalCommand::new(
                "/nonexistent/schedlab-no-such-program",
                Vec::<String>::new(),
                "x",
            ))
            .unwrap_err();
        assert!(matches!(err, ExternalError::Spawn { .. }), "{err:?}");
    }
}
