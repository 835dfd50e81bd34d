//! The one place where provisioning runs external programs to completion
//! (apt-get, dpkg-source, go, openssl for the local control plane; kind,
//! docker, gcloud, kubectl for kind and GKE). Every command is an
//! [`ExternalCommand`] with the reason it runs; [`run`] and [`run_logged`]
//! execute it, turning a failure into an [`ExternalError`] that names the
//! command and carries the tail of its output. A [`CommandRunner`] does the
//! same or, in dry-run, only records: so a dry run lists exactly what a
//! real run would execute, shell-quoted, in order.

use std::ffi::OsString;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

/// How many trailing lines of a failed command's output an error keeps.
pub const TAIL_LINES: usize = 30;

/// One external command: the program, its arguments, and why it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalCommand {
    pub program: OsString,
    /// words as the program gets them (paths need not be UTF-8)
    pub args: Vec<OsString>,
    /// one line for the plan and for error messages
    pub why: String,
    /// the working directory (None: the current one)
    pub dir: Option<PathBuf>,
    /// environment variables set for it (on top of this process's)
    pub env: Vec<(String, OsString)>,
}

impl ExternalCommand {
    pub fn new<I, S>(program: impl Into<OsString>, args: I, why: impl Into<String>) -> ExternalCommand
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        ExternalCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            why: why.into(),
            dir: None,
            env: Vec::new(),
        }
    }

    /// The same command with `key=value` in its environment.
    pub fn with_env(mut self, key: &str, value: impl Into<OsString>) -> ExternalCommand {
        self.env.push((key.to_string(), value.into()));
        self
    }

    /// The same command, run in `dir`.
    pub fn in_dir(mut self, dir: impl Into<PathBuf>) -> ExternalCommand {
        self.dir = Some(dir.into());
        self
    }

    /// The same command with `more` added at the end.
    pub fn args<I, S>(mut self, more: I) -> ExternalCommand
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(more.into_iter().map(Into::into));
        self
    }

    /// The same command with `arg` added at the end.
    pub fn arg(mut self, arg: impl Into<OsString>) -> ExternalCommand {
        self.args.push(arg.into());
        self
    }

    /// The command as a shell would take it: each word quoted when it needs it.
    pub fn shell(&self) -> String {
        let mut words: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell_quote(&v.to_string_lossy())))
            .collect();
        words.push(shell_quote(&self.program.to_string_lossy()));
        words.extend(self.args.iter().map(|a| shell_quote(&a.to_string_lossy())));
        let line = words.join(" ");
        match &self.dir {
            Some(dir) => format!("(cd {} && {line})", shell_quote(&dir.to_string_lossy())),
            None => line,
        }
    }
}

impl ExternalCommand {
    /// The process to start: stdin closed, in its folder, with its variables.
    fn process(&self) -> Command {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).stdin(Stdio::null());
        if let Some(dir) = &self.dir {
            cmd.current_dir(dir);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        cmd
    }

    /// The error of this command not starting.
    pub fn spawn_error(&self, source: std::io::Error) -> ExternalError {
        ExternalError::Spawn {
            command: self.shell(),
            why: self.why.clone(),
            source,
        }
    }

    /// The error of this command ending with exit `code`, `tail` the end of its output.
    pub fn failed(&self, code: Option<i32>, tail: String) -> ExternalError {
        ExternalError::Failed {
            command: self.shell(),
            why: self.why.clone(),
            code,
            tail,
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
    #[error("cannot open the log {} of `{command}`: {source}", path.display())]
    Log {
        command: String,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Runs `command` to completion and returns its output, whatever its exit
/// status (for a program whose non-zero exit still answers).
pub fn output(command: &ExternalCommand) -> Result<Output, ExternalError> {
    tracing::debug!(command = %command.shell(), why = %command.why, "running");
    command.process().output().map_err(|e| command.spawn_error(e))
}

/// Runs `command` to completion and returns its output. A non-zero exit is
/// an error with the tail of stderr (or of stdout when stderr is empty).
pub fn run(command: &ExternalCommand) -> Result<Output, ExternalError> {
    let output = output(command)?;
    if output.status.success() {
        return Ok(output);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let text = if stderr.trim().is_empty() {
        String::from_utf8_lossy(&output.stdout)
    } else {
        stderr
    };
    Err(command.failed(output.status.code(), tail(&text, TAIL_LINES)))
}

/// Runs `command` to completion with stdout and stderr appended to `log`
/// (for long steps such as a build, whose output is too big to hold); a
/// failure carries the log's tail.
pub fn run_logged(command: &ExternalCommand, log: &Path) -> Result<(), ExternalError> {
    tracing::debug!(command = %command.shell(), why = %command.why, log = %log.display(), "running");
    let log_error = |source| ExternalError::Log {
        command: command.shell(),
        path: log.to_path_buf(),
        source,
    };
    let out = File::options().create(true).append(true).open(log).map_err(log_error)?;
    let err = out.try_clone().map_err(log_error)?;
    let status = command
        .process()
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| command.spawn_error(e))?;
    if status.success() {
        Ok(())
    } else {
        Err(command.failed(status.code(), log_tail(log)))
    }
}

/// Whether `program` is on the PATH.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
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
        if self.dry_run {
            tracing::debug!(command = %command.shell(), why = %command.why, "dry run: not executed");
            return Ok(String::new());
        }
        tracing::info!(command = %command.shell(), why = %command.why, "running");
        run(command).map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
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

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The last lines of a log file, or a note saying why there are none.
pub fn log_tail(path: &Path) -> String {
    match std::fs::read(path) {
        Ok(bytes) => tail(&String::from_utf8_lossy(&bytes), TAIL_LINES),
        Err(err) => format!("(no log: {err})"),
    }
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
    fn a_logged_failure_carries_the_log_tail() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("x.log");
        let cmd = ExternalCommand::new("sh", ["-c", "echo first; echo second >&2; exit 2"], "fail, logged");
        let text = run_logged(&cmd, &log).unwrap_err().to_string();
        assert!(
            text.contains("first") && text.contains("second") && text.contains("exit code 2"),
            "{text}"
        );
        run_logged(&ExternalCommand::new("sh", ["-c", "echo third"], "succeed"), &log).unwrap();
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            "first\nsecond\nthird\n",
            "appended"
        );
        let missing = dir.path().join("no/such/folder/x.log");
        let err = run_logged(&cmd, &missing).unwrap_err();
        assert!(matches!(err, ExternalError::Log { .. }), "{err:?}");
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
        assert_eq!(tail("", 3), "");
    }

    #[test]
    fn paths_need_not_be_utf8() {
        use std::os::unix::ffi::OsStringExt;
        let odd = OsString::from_vec(b"caf\xe9".to_vec());
        let cmd = ExternalCommand::new("printf", ["%s"], "print a path").arg(odd.clone());
        assert_eq!(run(&cmd).unwrap().stdout, odd.into_vec());
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
