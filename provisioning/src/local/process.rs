//! Starting the control-plane processes detached, with their logs and pid
//! files in the state folder, waiting for them to be ready, and stopping
//! exactly the processes recorded there.
//!
//! A pid file holds the pid, the process's start time (field 22 of
//! `/proc/<pid>/stat`) and a random token the process was started with in
//! its environment ([`TOKEN_ENV`]): a pid the kernel has since given to
//! another process never matches its start time, and a process schedlab did
//! not start (a pid file naming another program, written by hand or by
//! mistake) lacks the token, so `stop` never signals a stranger. The token
//! is in the environment, not a path to compare with `/proc/<pid>/exe`,
//! because components exec into another program (`unshare … sh -c '…; exec
//! sleep'`, a test's `sh -c 'exec sleep'`) and the environment survives exec.

use super::error::{ProvisionError, log_tail};
use super::layout::StateLayout;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often readiness and exits are polled.
const POLL: Duration = Duration::from_millis(200);

/// The environment variable each process [`spawn`] starts carries, holding
/// the token its pid file records.
pub const TOKEN_ENV: &str = "SCHEDLAB_PROCESS_TOKEN";

/// A process identity that survives pid reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessId {
    pub pid: i32,
    /// Clock ticks since boot at which the process started.
    pub start_time: u64,
    /// The token in its environment ([`TOKEN_ENV`]); None in a pid file of
    /// an older schedlab, which cannot say whose the process is.
    pub token: Option<u64>,
}

/// A process this module started (and still holds as a child).
#[derive(Debug)]
pub struct Started {
    pub name: String,
    pub id: ProcessId,
    pub log: PathBuf,
    pub child: Child,
}

/// What [`stop`] found and did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// No pid file: this state folder never started it (or it was stopped already).
    NotRecorded,
    /// The recorded process had already exited (or its pid now names another process).
    AlreadyGone,
    /// It exited after SIGTERM.
    Terminated,
    /// It ignored SIGTERM for the grace period and was killed.
    Killed,
    /// The recorded pid runs a process this state folder did not start (it
    /// lacks the token of the pid file): left alone, and the record removed.
    NotOurs { pid: i32 },
}

/// The start time and state letter of `/proc/<pid>/stat` text.
pub fn parse_stat(text: &str) -> Option<(char, u64)> {
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    // Field 22 overall is the 20th after the name (fields 3..).
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

fn proc_stat(pid: i32) -> Option<(char, u64)> {
    parse_stat(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Whether the process is still running (a zombie counts as exited).
pub fn is_running(id: ProcessId) -> bool {
    matches!(proc_stat(id.pid), Some((state, start)) if start == id.start_time && state != 'Z' && state != 'X')
}

/// Whether the process runs and is the one a pid file recorded: its start
/// time matches and its environment holds the recorded token.
pub fn is_ours(id: ProcessId) -> bool {
    let Some(token) = id.token else {
        return false;
    };
    if !is_running(id) {
        return false;
    }
    let want = format!("{TOKEN_ENV}={token:016x}");
    // Right after exec the kernel has closed the spawn's pipe (so `spawn` has
    // returned) before it lays out the new environment: for that instant
    // `environ` reads empty. A process we started always has one, so an empty
    // read is waited out briefly rather than taken for a stranger.
    for _ in 0..100 {
        match std::fs::read(format!("/proc/{}/environ", id.pid)) {
            Ok(env) if env.is_empty() => std::thread::sleep(std::time::Duration::from_millis(2)),
            Ok(env) => return env.split(|b| *b == 0).any(|entry| entry == want.as_bytes()),
            Err(_) => return false,
        }
    }
    false
}

/// The pid file text for `id`.
pub fn pid_file_text(id: ProcessId) -> String {
    match id.token {
        Some(token) => format!("{} {} {token:016x}\n", id.pid, id.start_time),
        None => format!("{} {}\n", id.pid, id.start_time),
    }
}

/// Reads a pid file written by [`pid_file_text`].
pub fn parse_pid_file(text: &str, path: &Path) -> Result<ProcessId, ProvisionError> {
    let malformed = || ProvisionError::Malformed {
        what: "pid file",
        path: path.into(),
        detail: text.trim().into(),
    };
    let mut words = text.split_whitespace();
    let pid = words
        .next()
        .and_then(|w| w.parse::<i32>().ok())
        .filter(|p| *p > 0)
        .ok_or_else(malformed)?;
    let start_time = words.next().and_then(|w| w.parse().ok()).ok_or_else(malformed)?;
    let token = match words.next() {
        Some(w) => Some(u64::from_str_radix(w, 16).map_err(|_| malformed())?),
        None => None,
    };
    if words.next().is_some() {
        return Err(malformed());
    }
    Ok(ProcessId { pid, start_time, token })
}

/// The process recorded for `name` in `state`, if any.
pub fn recorded(state: &StateLayout, name: &str) -> Result<Option<ProcessId>, ProvisionError> {
    let path = state.pid_file(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => parse_pid_file(&text, &path).map(Some),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ProvisionError::Io {
            what: "cannot read",
            path,
            source,
        }),
    }
}

/// Starts `program` detached from the caller's terminal (its own process
/// group, so a Ctrl-C reaches schedlab, which then stops it in order), output
/// to `state/log/<name>.log`, and records its pid file.
pub fn spawn(state: &StateLayout, name: &str, program: &Path, args: &[OsString]) -> Result<Started, ProvisionError> {
    for dir in [state.logs(), state.pids()] {
        std::fs::create_dir_all(&dir).map_err(ProvisionError::io("cannot create", &dir))?;
    }
    let log = state.log(name);
    let out = std::fs::File::create(&log).map_err(ProvisionError::io("cannot create", &log))?;
    let err = out.try_clone().map_err(ProvisionError::io("cannot open", &log))?;
    let token = new_token();
    let mut command = Command::new(program);
    command
        .args(args)
        .env(TOKEN_ENV, format!("{token:016x}"))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .process_group(0);
    let mut child = command.spawn().map_err(|source| {
        crate::external::ExternalCommand::new(program, args, format!("start {name}")).spawn_error(source)
    })?;
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let Some((_, start_time)) = proc_stat(pid) else {
        // It died before we could read its identity: report its exit with its log.
        let code = child.wait().ok().and_then(|s| s.code());
        return Err(ProvisionError::Exited {
            component: leak_name(name),
            code,
            tail: log_tail(&log),
            log,
        });
    };
    let id = ProcessId {
        pid,
        start_time,
        token: Some(token),
    };
    let pid_file = state.pid_file(name);
    if let Err(source) = std::fs::write(&pid_file, pid_file_text(id)) {
        // Unrecorded, it could never be stopped by `down`: stop it now.
        let _ = child.kill();
        let _ = child.wait();
        return Err(ProvisionError::Io {
            what: "cannot write",
            path: pid_file,
            source,
        });
    }
    tracing::info!(component = name, pid, log = %log.display(), "started");
    Ok(Started {
        name: name.to_owned(),
        id,
        log,
        child,
    })
}

/// A token no other process has: std's hasher keys are random per process
/// (and differ for each hasher), mixed with the time.
fn new_token() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish()
}

/// Component names are a fixed small set; errors carry them as `&'static str`.
fn leak_name(name: &str) -> &'static str {
    match name {
        "etcd" => "etcd",
        "kube-apiserver" => "kube-apiserver",
        "kube-scheduler" => "kube-scheduler",
        "kube-controller-manager" => "kube-controller-manager",
        "containerd" => "containerd",
        "kubelet" => "kubelet",
        "mount-namespace" => "mount-namespace",
        _ => "process",
    }
}

/// How to probe a URL for readiness with curl.
#[derive(Debug, Clone)]
pub struct Probe {
    pub url: String,
    /// Verify the server against this CA; `None` skips verification (the
    /// scheduler and controller-manager serve self-signed certificates).
    pub ca_file: Option<PathBuf>,
    pub bearer: Option<String>,
}

impl Probe {
    /// One GET; true on a 2xx answer.
    pub fn once(&self) -> bool {
        self.command("/dev/null").status().is_ok_and(|s| s.success())
    }

    /// One GET; the body of a 2xx answer.
    pub fn body(&self) -> Option<String> {
        let output = self.command("-").output().ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn command(&self, output: &str) -> Command {
        let mut cmd = Command::new("curl");
        cmd.args(["--silent", "--fail", "--max-time", "2", "--output", output]);
        match &self.ca_file {
            Some(ca) => cmd.arg("--cacert").arg(ca),
            None => cmd.arg("--insecure"),
        };
        if let Some(token) = &self.bearer {
            cmd.arg("-H").arg(format!("Authorization: Bearer {token}"));
        }
        cmd.arg(&self.url)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        cmd
    }
}

/// Polls `probe` until it answers, the process exits, `timeout` passes, or
/// `cancel` is set.
pub fn wait_ready(
    started: &mut Started,
    probe: &Probe,
    timeout: Duration,
    cancel: Option<&AtomicBool>,
) -> Result<Duration, ProvisionError> {
    let t0 = Instant::now();
    loop {
        if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
            return Err(ProvisionError::Interrupted);
        }
        if let Ok(Some(status)) = started.child.try_wait() {
            return Err(ProvisionError::Exited {
                component: leak_name(&started.name),
                code: status.code(),
                log: started.log.clone(),
                tail: log_tail(&started.log),
            });
        }
        if probe.once() {
            return Ok(t0.elapsed());
        }
        if t0.elapsed() >= timeout {
            return Err(ProvisionError::NotReady {
                component: leak_name(&started.name),
                url: probe.url.clone(),
                waited: t0.elapsed(),
                log: started.log.clone(),
                tail: log_tail(&started.log),
            });
        }
        std::thread::sleep(POLL);
    }
}

/// Stops the process recorded for `name` in `state`: SIGTERM, then SIGKILL
/// after `grace`; removes the pid file once it is gone.
pub fn stop(state: &StateLayout, name: &str, grace: Duration) -> Result<Stopped, ProvisionError> {
    let Some(id) = recorded(state, name)? else {
        return Ok(Stopped::NotRecorded);
    };
    let outcome = stop_id(name, id, grace)?;
    let pid_file = state.pid_file(name);
    match std::fs::remove_file(&pid_file) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(ProvisionError::Io {
                what: "cannot remove",
                path: pid_file,
                source,
            });
        }
    }
    Ok(outcome)
}

fn stop_id(name: &str, id: ProcessId, grace: Duration) -> Result<Stopped, ProvisionError> {
    if !is_running(id) {
        return Ok(Stopped::AlreadyGone);
    }
    if !is_ours(id) {
        tracing::warn!(
            component = name,
            pid = id.pid,
            "the recorded pid runs a process this state folder did not start; left alone"
        );
        return Ok(Stopped::NotOurs { pid: id.pid });
    }
    let signal = |sig| match kill(Pid::from_raw(id.pid), sig) {
        Ok(()) | Err(nix::errno::Errno::ESRCH) => Ok(()),
        Err(source) => Err(ProvisionError::Signal { pid: id.pid, source }),
    };
    signal(Signal::SIGTERM)?;
    if wait_gone(id, grace) {
        tracing::info!(component = name, pid = id.pid, "stopped");
        return Ok(Stopped::Terminated);
    }
    tracing::warn!(component = name, pid = id.pid, "ignored SIGTERM; killing");
    signal(Signal::SIGKILL)?;
    if wait_gone(id, Duration::from_secs(5)) {
        Ok(Stopped::Killed)
    } else {
        Err(ProvisionError::Unkillable {
            component: name.to_owned(),
            pid: id.pid,
        })
    }
}

fn wait_gone(id: ProcessId, within: Duration) -> bool {
    let t0 = Instant::now();
    while is_running(id) {
        if t0.elapsed() >= within {
            return false;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    true
}

/// Free loopback ports, distinct from each other (all held open until every
/// one is chosen).
pub fn free_ports(n: usize) -> Result<Vec<u16>, ProvisionError> {
    let listeners = (0..n)
        .map(|_| std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(ProvisionError::NoPort))
        .collect::<Result<Vec<_>, _>>()?;
    listeners
        .iter()
        .map(|l| l.local_addr().map(|a| a.port()).map_err(ProvisionError::NoPort))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(tag: &str) -> StateLayout {
        let root = std::env::temp_dir().join(format!("schedlab-proc-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        StateLayout::new(root)
    }

    #[test]
    fn stat_parsing_survives_odd_command_names() {
        let line =
            "1234 (a) b (c)) S 1 1234 1234 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 987654 1000 10 18446744073709551615";
        assert_eq!(parse_stat(line), Some(('S', 987654)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn pid_files_round_trip_and_reject_garbage() {
        for token in [Some(0xfeed_0000_0000_beef), Some(0), None] {
            let id = ProcessId {
                pid: 42,
                start_time: 7,
                token,
            };
            assert_eq!(parse_pid_file(&pid_file_text(id), Path::new("p")).unwrap(), id);
        }
        assert_eq!(
            pid_file_text(ProcessId {
                pid: 42,
                start_time: 7,
                token: Some(255)
            }),
            "42 7 00000000000000ff\n"
        );
        assert!(parse_pid_file("x 1", Path::new("p")).is_err());
        assert!(parse_pid_file("-5 1", Path::new("p")).is_err());
        assert!(parse_pid_file("5", Path::new("p")).is_err());
        assert!(parse_pid_file("5 1 nothex", Path::new("p")).is_err());
        assert!(parse_pid_file("5 1 ff more", Path::new("p")).is_err());
    }

    #[test]
    fn down_stops_exactly_the_recorded_process() {
        let state = state("exact");
        let mut ours = spawn(&state, "sleeper", Path::new("sleep"), &["300".into()]).unwrap();
        let mut stranger = Command::new("sleep").arg("300").spawn().unwrap();
        let stranger_id = ProcessId {
            pid: stranger.id() as i32,
            start_time: proc_stat(stranger.id() as i32).unwrap().1,
            token: None,
        };
        assert!(is_running(ours.id));
        assert_eq!(recorded(&state, "sleeper").unwrap(), Some(ours.id));

        assert_eq!(
            stop(&state, "sleeper", Duration::from_secs(5)).unwrap(),
            Stopped::Terminated
        );
        assert!(!is_running(ours.id));
        assert!(ours.child.wait().is_ok());
        assert!(is_running(stranger_id), "a sleep started outside must survive");
        assert_eq!(recorded(&state, "sleeper").unwrap(), None);
        assert_eq!(
            stop(&state, "sleeper", Duration::from_secs(1)).unwrap(),
            Stopped::NotRecorded
        );

        stranger.kill().unwrap();
        stranger.wait().unwrap();
        std::fs::remove_dir_all(&state.root).unwrap();
    }

    #[test]
    fn a_reused_pid_is_not_signalled() {
        let state = state("reuse");
        let mut stranger = Command::new("sleep").arg("300").spawn().unwrap();
        let pid = stranger.id() as i32;
        let (_, start) = proc_stat(pid).unwrap();
        // A pid file naming this pid but another start time: the recorded process is gone.
        std::fs::create_dir_all(state.pids()).unwrap();
        std::fs::write(
            state.pid_file("sleeper"),
            pid_file_text(ProcessId {
                pid,
                start_time: start + 1,
                token: Some(1),
            }),
        )
        .unwrap();
        assert_eq!(
            stop(&state, "sleeper", Duration::from_secs(1)).unwrap(),
            Stopped::AlreadyGone
        );
        assert!(is_running(ProcessId {
            pid,
            start_time: start,
            token: None
        }));
        stranger.kill().unwrap();
        stranger.wait().unwrap();
        std::fs::remove_dir_all(&state.root).unwrap();
    }

    /// `cluster down` killed whatever a pid file named when its pid and start
    /// time matched: a process this state folder did not start (without the
    /// token it was started with) is left alone, whatever the file says.
    #[test]
    fn a_live_process_that_is_not_the_one_started_is_not_signalled() {
        let state = state("stranger");
        let mut stranger = Command::new("sleep").arg("300").spawn().unwrap();
        let pid = stranger.id() as i32;
        let (_, start_time) = proc_stat(pid).unwrap();
        std::fs::create_dir_all(state.pids()).unwrap();
        // a pid file with the stranger's pid and start time: with a token it
        // was not started with, and without one (an older pid file)
        for token in [Some(0x1234), None] {
            let id = ProcessId { pid, start_time, token };
            std::fs::write(state.pid_file("etcd"), pid_file_text(id)).unwrap();
            assert!(is_running(id) && !is_ours(id));
            assert_eq!(
                stop(&state, "etcd", Duration::from_secs(1)).unwrap(),
                Stopped::NotOurs { pid }
            );
            assert!(stranger.try_wait().unwrap().is_none(), "the stranger must still run");
            assert_eq!(recorded(&state, "etcd").unwrap(), None, "the wrong record is removed");
        }
        // what spawn started carries its token, also after it execs another program
        let args: Vec<OsString> = vec!["-c".into(), "exec sleep 300".into()];
        let mut ours = spawn(&state, "etcd", Path::new("sh"), &args).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(is_ours(ours.id));
        assert!(!is_ours(ProcessId {
            token: ours.id.token.map(|t| t ^ 1),
            ..ours.id
        }));
        assert_eq!(
            stop(&state, "etcd", Duration::from_secs(5)).unwrap(),
            Stopped::Terminated
        );
        ours.child.wait().unwrap();
        stranger.kill().unwrap();
        stranger.wait().unwrap();
        std::fs::remove_dir_all(&state.root).unwrap();
    }

    #[test]
    fn sigterm_ignored_means_sigkill() {
        let state = state("stubborn");
        // An ignored signal stays ignored across exec, so this sleep shrugs off SIGTERM.
        let args: Vec<OsString> = vec!["-c".into(), "trap '' TERM; exec sleep 300".into()];
        let mut ours = spawn(&state, "stubborn", Path::new("sh"), &args).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(
            stop(&state, "stubborn", Duration::from_millis(500)).unwrap(),
            Stopped::Killed
        );
        ours.child.wait().unwrap();
        std::fs::remove_dir_all(&state.root).unwrap();
    }

    #[test]
    fn early_exit_is_reported_with_the_log() {
        let state = state("exit");
        let args: Vec<OsString> = vec!["-c".into(), "echo cannot bind >&2; exit 4".into()];
        let mut started = spawn(&state, "etcd", Path::new("sh"), &args).unwrap();
        let probe = Probe {
            url: "https://127.0.0.1:1/healthz".into(),
            ca_file: None,
            bearer: None,
        };
        let err = wait_ready(&mut started, &probe, Duration::from_secs(10), None).unwrap_err();
        match err {
            ProvisionError::Exited {
                component, code, tail, ..
            } => {
                assert_eq!(component, "etcd");
                assert_eq!(code, Some(4));
                assert!(tail.contains("cannot bind"), "{tail}");
            }
            other => panic!("unexpected {other:?}"),
        }
        std::fs::remove_dir_all(&state.root).unwrap();
    }

    #[test]
    fn cancel_interrupts_the_wait() {
        let state = state("cancel");
        let mut started = spawn(&state, "sleeper", Path::new("sleep"), &["300".into()]).unwrap();
        let probe = Probe {
            url: "https://127.0.0.1:1/healthz".into(),
            ca_file: None,
            bearer: None,
        };
        let cancel = AtomicBool::new(true);
        let err = wait_ready(&mut started, &probe, Duration::from_secs(10), Some(&cancel)).unwrap_err();
        assert!(matches!(err, ProvisionError::Interrupted));
        stop(&state, "sleeper", Duration::from_secs(5)).unwrap();
        started.child.wait().unwrap();
        std::fs::remove_dir_all(&state.root).unwrap();
    }

    #[test]
    fn free_ports_are_distinct() {
        let ports = free_ports(5).unwrap();
        let set: std::collections::BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(set.len(), 5);
    }
}
