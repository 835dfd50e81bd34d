//! `--arms extender:URL` end to end: the example extender
//! (`examples/extender.py`, Python's standard library) played as an arm on
//! the simulator, and the extenders the lab refuses before anything starts
//! or counts as failing mid-run. Needs `python3`: missing, the tests fail
//! (`.ci/run` installs it).
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

fn schedlab() -> Command {
    let mut cmd = Command::cargo_bin("schedlab").unwrap();
    cmd.env("RUST_LOG", "warn");
    cmd
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/extender.py")
}

/// The example extender on a free port, stopped when dropped.
struct Extender {
    child: Child,
    url: String,
}

impl Extender {
    fn start(flags: &[&str]) -> Extender {
        let mut child = std::process::Command::new("python3")
            .arg(example())
            .args(["--port", "0"])
            .args(flags)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the example extender: install Python 3 (.ci/run does)");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("the example's first line: {line:?}"))
            .to_string();
        Extender { child, url }
    }
}

impl Drop for Extender {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn churn(arms: &str, out: &Path) -> std::process::Output {
    schedlab()
        .args([
            "scenario", "churn", "--set", "nodes=12", "--seeds", "1", "--jobs", "1", "--arms", arms,
        ])
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

fn run_dir(out: &Path, arm: &str) -> PathBuf {
    out.join("runs").join(arm).join("seed-1")
}

#[test]
fn the_example_extender_plays_as_an_arm_and_its_runs_reproduce() {
    let extender = Extender::start(&[]);
    let tmp = tempfile::tempdir().unwrap();
    let arms = format!("default,extender:{}", extender.url);
    let first = tmp.path().join("first");
    let out = churn(&arms, &first);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("extender filter calls failed"), "{stderr}");

    let manifest = read_json(&first.join("manifest.json"));
    assert_eq!(manifest["extenders"]["extender"]["url"], extender.url.as_str());
    assert_eq!(manifest["extenders"]["extender"]["timeout"], "5s");
    assert_eq!(manifest["extenders"]["extender"]["base"], "default");
    assert_eq!(manifest["arm_facts"]["extender"]["preempts"], true);

    let run = read_json(&run_dir(&first, "extender").join("manifest.json"));
    let calls = &run["extender"];
    let filter_calls = calls["filter_calls"].as_u64().unwrap();
    assert!(filter_calls > 10, "{calls}");
    assert!(calls["prioritize_calls"].as_u64().unwrap() > 0, "{calls}");
    assert_eq!(calls["failed_filter_calls"], 0, "{calls}");
    assert_eq!(calls["failed_prioritize_calls"], 0, "{calls}");
    assert!(read_json(&run_dir(&first, "default").join("manifest.json"))["extender"].is_null());

    // the decision times hold the extender's round trips: over HTTP to Python they dwarf the
    // default profile's in-process decisions on twelve nodes
    let times = |arm: &str| {
        results::decision_time::DecisionTimes::read(&run_dir(&first, arm).join("decision_times.json")).unwrap()
    };
    let (with, without) = (times("extender"), times("default"));
    assert!(with.decisions() >= filter_calls, "{} decisions", with.decisions());
    let (with_mean, without_mean) = (with.mean_ns().unwrap(), without.mean_ns().unwrap());
    assert!(with_mean > 10.0 * without_mean, "{with_mean} ns vs {without_mean} ns");

    let records = |out: &Path, arm: &str| std::fs::read(run_dir(out, arm).join("records.jsonl")).unwrap();
    // the extender's scores changed where pods went
    assert_ne!(records(&first, "extender"), records(&first, "default"));
    // a deterministic extender: the seed replays the run byte for byte
    let second = tmp.path().join("second");
    assert!(churn(&arms, &second).status.success());
    assert_eq!(records(&first, "extender"), records(&second, "extender"));
}

#[test]
fn an_extender_slower_than_its_timeout_is_refused_before_anything_starts() {
    let extender = Extender::start(&["--delay", "2"]);
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("slow");
    let spec = format!("extender:{}#timeout=300ms", extender.url);
    let started = std::time::Instant::now();
    let out = churn(&format!("default,{spec}"), &out_dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("{}/filter did not answer within 300ms", extender.url)),
        "{stderr}"
    );
    assert!(stderr.contains(&spec), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "one message: {stderr}");
    assert!(!out_dir.exists(), "nothing written");
    assert!(started.elapsed().as_secs() < 2, "gave up at the timeout, not the delay");
}

#[test]
fn an_extender_that_does_not_answer_is_refused_naming_its_url() {
    // a port nobody listens on
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("absent");
    let url = format!("http://127.0.0.1:{port}/sched");
    let out = churn(&format!("extender:{url}"), &out_dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("{url}/filter gave no answer")), "{stderr}");
    assert!(!out_dir.exists());
}

/// Answers every request with `body` (HTTP 200), on a free port, until the test ends.
fn canned_server(body: &'static str) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            // read the request: headers, then Content-Length bytes
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut length = 0;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
            let mut request = vec![0; length];
            let _ = reader.read_exact(&mut request);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

#[test]
fn an_extender_answering_malformed_json_or_unknown_nodes_is_refused() {
    let cases = [
        ("{\"NodeNames\": [", "/filter answered malformed JSON"),
        (
            r#"{"NodeNames":["no-such-node"]}"#,
            "named the node \"no-such-node\", which it was not sent",
        ),
    ];
    for (body, want) in cases {
        let url = canned_server(body);
        let tmp = tempfile::tempdir().unwrap();
        let out_dir = tmp.path().join("bad");
        let out = churn(&format!("extender:{url}"), &out_dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(&url), "{stderr}");
        assert!(stderr.contains(want), "{want}: {stderr}");
        assert!(!out_dir.exists());
    }
}

#[test]
fn an_extender_that_stops_answering_mid_run_leaves_those_attempts_unschedulable_and_the_run_says_how_often() {
    // answers the check's filter and 30 more filter calls, then hangs up on every request
    let extender = Extender::start(&["--fail-after", "31"]);
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("stops");
    // pressure, shortened: every pod left pending retries with back-off until the end, each
    // attempt a call, so a short run keeps the calls to a few thousand
    let out = schedlab()
        .args([
            "scenario",
            "pressure",
            "--set",
            "nodes=8",
            "--set",
            "wave_gap=1m",
            "--set",
            "drain=2m",
        ])
        .args(["--seeds", "1", "--jobs", "1", "--arms"])
        .arg(format!("extender:stops={}#timeout=1s", extender.url))
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let calls = read_json(&run_dir(&out_dir, "stops").join("manifest.json"))["extender"].clone();
    let (made, failed) = (
        calls["filter_calls"].as_u64().unwrap(),
        calls["failed_filter_calls"].as_u64().unwrap(),
    );
    assert!(made > 30, "{calls}");
    assert_eq!(
        made - failed,
        30,
        "the 30 answered calls succeeded, every later one failed: {calls}"
    );
    assert!(
        calls["first_failure"]
            .as_str()
            .unwrap()
            .contains(&format!("{}/filter", extender.url)),
        "{calls}"
    );
    assert!(
        stderr.contains(&format!(
            "warning: stops seed 1: {failed} of {made} extender filter calls failed"
        )),
        "{stderr}"
    );
}

#[test]
fn a_bad_extender_entry_or_two_arms_of_one_name_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("entry");
    let cases = [
        (
            "extender:https://127.0.0.1:1",
            "only plain http:// extenders are supported",
        ),
        ("extender:http://127.0.0.1:1#weight=0", "weight=0"),
        (
            "extender:http://127.0.0.1:1,extender:http://127.0.0.1:2",
            "is a second arm named \"extender\": name them apart with extender:NAME=URL",
        ),
    ];
    for (arms, want) in cases {
        let out = churn(arms, &out_dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains(want), "{want}: {stderr}");
        assert!(!out_dir.exists());
    }
}
