//! Standard output closed or full: `schedlab ... | head -1` ends quietly
//! with exit 0, `schedlab ... > /dev/full` fails with exit 1 and a message,
//! never a panic; and neither affects what the command wrote to disk.
#![allow(clippy::unwrap_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

fn schedlab() -> Command {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("schedlab"));
    cmd.env("RUST_LOG", "warn");
    cmd
}

/// The write end of a pipe whose read end is already closed: every write to it fails with EPIPE,
/// however early the command writes (no race with a reader that exits later).
fn closed_pipe() -> Stdio {
    let mut reader = Command::new("true").stdin(Stdio::piped()).spawn().unwrap();
    let write_end = reader.stdin.take().unwrap();
    assert!(reader.wait().unwrap().success());
    Stdio::from(write_end)
}

/// Where standard output goes in each case, with the exit code expected.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Sink {
    ClosedPipe,
    Full,
}

impl Sink {
    /// Every sink this machine has (`/dev/full` is Linux's).
    fn all() -> Vec<Sink> {
        let mut sinks = vec![Sink::ClosedPipe];
        if Path::new("/dev/full").exists() {
            sinks.push(Sink::Full);
        }
        sinks
    }

    fn stdio(self) -> Stdio {
        match self {
            Sink::ClosedPipe => closed_pipe(),
            Sink::Full => Stdio::from(fs::OpenOptions::new().write(true).open("/dev/full").unwrap()),
        }
    }
}

fn run(args: &[&str], sink: Sink) -> Output {
    schedlab()
        .args(args)
        .stdin(Stdio::null())
        .stdout(sink.stdio())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

/// A closed pipe: exit 0 and nothing on stderr. A full device: exit 1 and one message saying so.
#[track_caller]
fn assert_handled(out: &Output, sink: Sink, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{what} {sink:?}: {stderr}");
    match sink {
        Sink::ClosedPipe => {
            assert_eq!(out.status.code(), Some(0), "{what} {sink:?}: {stderr}");
            assert_eq!(stderr, "", "{what} {sink:?}: a broken pipe ends quietly");
        }
        Sink::Full => {
            assert_eq!(out.status.code(), Some(1), "{what} {sink:?}: {stderr}");
            assert!(
                stderr.starts_with("error: ") && stderr.contains("writing to standard output"),
                "{what} {sink:?}: {stderr}"
            );
        }
    }
}

const SCENARIO: &[&str] = &[
    "scenario", "churn", "--arms", "default", "--seeds", "1", "--set", "nodes=6",
];

/// One small finished run folder, shared by the tests.
fn finished_folder() -> &'static Path {
    static FOLDER: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, dir) = FOLDER.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("base");
        let out = schedlab().args(SCENARIO).arg("--out").arg(&dir).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (tmp, dir)
    });
    dir
}

fn assert_folder_complete(dir: &Path) {
    assert!(!dir.join("INCOMPLETE").exists(), "{}", dir.display());
    let manifest: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["complete"], true);
    assert!(dir.join("report/report.html").is_file(), "report written");
    assert!(dir.join("summary.csv").is_file());
}

#[test]
fn help_and_version_handle_a_closed_or_full_stdout() {
    for args in [
        &["--help"][..],
        &["--version"],
        &["scenario", "--help"],
        &["help", "train"],
    ] {
        for sink in Sink::all() {
            assert_handled(&run(args, sink), sink, &format!("{args:?}"));
        }
    }
}

#[test]
fn scenarios_handles_a_closed_or_full_stdout() {
    for sink in Sink::all() {
        assert_handled(&run(&["scenarios"], sink), sink, "scenarios");
    }
}

#[test]
fn scenario_handles_a_closed_or_full_stdout_and_still_completes_its_folder() {
    let tmp = tempfile::tempdir().unwrap();
    for sink in Sink::all() {
        let dir = tmp.path().join(format!("{sink:?}"));
        let mut args = SCENARIO.to_vec();
        args.extend(["--out", dir.to_str().unwrap()]);
        let out = run(&args, sink);
        assert_handled(&out, sink, "scenario");
        // the folder was complete, report included, before anything was printed
        assert_folder_complete(&dir);
    }
}

#[test]
fn report_handles_a_closed_or_full_stdout_after_writing_every_file() {
    let tmp = tempfile::tempdir().unwrap();
    for sink in Sink::all() {
        let out_dir = tmp.path().join(format!("{sink:?}"));
        let dir = finished_folder().to_str().unwrap();
        let out = run(&["report", dir, "--out", out_dir.to_str().unwrap()], sink);
        assert_handled(&out, sink, "report");
        assert_eq!(
            fs::read(out_dir.join("report.html")).unwrap(),
            fs::read(finished_folder().join("report/report.html")).unwrap(),
            "the whole report was written"
        );
        // and the default report folder, rebuilt in place
        let out = run(&["report", dir], sink);
        assert_handled(&out, sink, "report DIR");
    }
}

#[test]
fn compare_handles_a_closed_or_full_stdout() {
    let dir = finished_folder().to_str().unwrap();
    for sink in Sink::all() {
        assert_handled(&run(&["compare", dir, dir], sink), sink, "compare");
    }
}

#[test]
fn a_closed_stdout_does_not_hide_bad_input() {
    // the exit code still says what went wrong when the error comes before any output
    let out = run(&["scenario", "no-such-scenario"], Sink::ClosedPipe);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-scenario"));
}
