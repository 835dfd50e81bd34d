//! `schedlab sweep --on kube` on this machine's local control plane with
//! two real nodes: 12 simulator cells and 2 training cells run as real pods
//! from the image built from this program, are fetched through the API, and
//! match the same sweep run here byte for byte; a cell whose pod is killed
//! mid-run fails alone, `status` names it, and `resume` finishes the sweep.
//!
//! Needs root, cgroup v1 and the cached Kubernetes build `.ci/run` makes
//! first, like the other real-node tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use assert_cmd::Command;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn schedlab() -> Command {
    let mut cmd = Command::cargo_bin("schedlab").unwrap();
    cmd.env("RUST_LOG", "warn");
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The local control plane with two real nodes, taken down when dropped.
struct Plane {
    state: PathBuf,
}

impl Plane {
    fn up(dir: &Path) -> Plane {
        let state = dir.join("plane");
        let out = schedlab()
            .args([
                "cluster",
                "up",
                "--local",
                "--controller-manager",
                "--real-nodes",
                "2",
                "--state",
            ])
            .arg(&state)
            .output()
            .unwrap();
        let plane = Plane { state };
        assert!(out.status.success(), "cluster up: {}", text(&out.stderr));
        plane
    }

    fn kube_args(&self) -> Vec<String> {
        let s = self.state.display().to_string();
        vec![
            "--on".into(),
            "kube".into(),
            "--kubeconfig".into(),
            format!("{s}/admin.kubeconfig"),
            "--import-image".into(),
            "--local-state".into(),
            s,
            "--cpu".into(),
            "100m".into(),
            "--memory".into(),
            "768Mi".into(),
        ]
    }
}

impl Drop for Plane {
    fn drop(&mut self) {
        let _ = schedlab()
            .args(["cluster", "down", "--local", "--state"])
            .arg(&self.state)
            .output();
    }
}

/// 2 scenarios × 3 arms × 2 seeds, and 2 training runs: 14 cells.
const SWEEP: &str = "
name: on-real-nodes
scenarios:
  - scenario: churn
    set: {nodes: 8}
  - scenario: pressure
    set: {nodes: 8}
arms: [default, binpack, random]
seeds: {first: 1, count: 2}
train:
  - variant: agmarl
    seeds: [1000, 2000]
    episodes: 1
    envs: 1
    scenarios: [churn]
    set: {nodes: 6}
";

/// Every file of `a` below `cells/` whose name is `name`, by its path there.
fn files_named(sweep: &Path, name: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, name: &str, out: &mut Vec<PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, name, out);
            } else if path.file_name().is_some_and(|n| n == name) {
                out.push(path);
            }
        }
    }
    let mut out = Vec::new();
    walk(&sweep.join("cells"), name, &mut out);
    out.sort();
    out.into_iter()
        .map(|p| p.strip_prefix(sweep).unwrap().to_path_buf())
        .collect()
}

fn state(sweep: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(sweep.join("sweep.json")).unwrap()).unwrap()
}

#[test]
fn a_sweep_runs_as_pods_on_real_nodes_and_matches_the_local_run_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("sweep.yaml");
    fs::write(&file, SWEEP).unwrap();
    let plane = Plane::up(tmp.path());

    let on_kube = tmp.path().join("kube");
    let started = Instant::now();
    let out = schedlab()
        .args(["sweep", "run"])
        .arg(&file)
        .arg("--out")
        .arg(&on_kube)
        .args(plane.kube_args())
        .output()
        .unwrap();
    let kube_wall = started.elapsed();
    assert!(out.status.success(), "{}\n{}", text(&out.stdout), text(&out.stderr));
    assert!(
        text(&out.stdout).contains("14 of 14 cells done, 0 failed"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        text(&out.stderr).contains("imported docker.io/schedlab/schedlab:"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(state(&on_kube)["complete"], true);

    let here = tmp.path().join("here");
    let started = Instant::now();
    schedlab()
        .args(["sweep", "run"])
        .arg(&file)
        .args(["--jobs", "2", "--out"])
        .arg(&here)
        .assert()
        .success();
    eprintln!(
        "14 cells: {:.1} s as pods on 2 real nodes, {:.1} s here with --jobs 2",
        kube_wall.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );
    // the same cells (ids), the same records and checkpoints, byte for byte
    let records = files_named(&on_kube, "records.jsonl");
    assert_eq!(records.len(), 12);
    assert_eq!(records, files_named(&here, "records.jsonl"));
    let checkpoints = files_named(&on_kube, "checkpoint.safetensors");
    assert_eq!(checkpoints.len(), 2);
    assert_eq!(checkpoints, files_named(&here, "checkpoint.safetensors"));
    for rel in records.iter().chain(&checkpoints) {
        assert!(
            fs::read(on_kube.join(rel)).unwrap() == fs::read(here.join(rel)).unwrap(),
            "{} differs between the cluster's run and this machine's",
            rel.display()
        );
    }
    // the sweep's objects went once every cell was fetched
    let report = schedlab().arg("report").arg(&on_kube).output().unwrap();
    assert!(report.status.success(), "{}", text(&report.stderr));

    // a pod killed in the middle of its cell, with no retry left: that cell fails alone
    let killed = tmp.path().join("killed");
    let second = tmp.path().join("second.yaml");
    fs::write(&second, SWEEP.replace("on-real-nodes", "killed-pod")).unwrap();
    let mut run = std::process::Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .args(["sweep", "run"])
        .arg(&second)
        .arg("--out")
        .arg(&killed)
        .args(plane.kube_args())
        .args(["--retries", "0"])
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let victim = loop {
        if let Some(pid) = common::pid_with(&["sweep", "cell", "--index 0"]) {
            break pid;
        }
        if let Ok(Some(status)) = run.try_wait() {
            panic!("the sweep ended ({status}) before its first cell's pod was seen");
        }
        assert!(started.elapsed() < Duration::from_secs(120), "no cell pod started");
        std::thread::sleep(Duration::from_millis(5));
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(victim), nix::sys::signal::Signal::SIGKILL).unwrap();
    let out = run.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}\n{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    assert!(
        text(&out.stdout).contains("13 of 14 cells done, 1 failed"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(state(&killed)["complete"], false);
    let status = schedlab().args(["sweep", "status"]).arg(&killed).output().unwrap();
    let said = text(&status.stdout);
    assert!(said.contains("13 done, 1 failed"), "{said}");
    assert!(said.contains("exit code 137"), "{said}");
    let resumed = schedlab().args(["sweep", "resume"]).arg(&killed).output().unwrap();
    assert!(
        resumed.status.success(),
        "{}\n{}",
        text(&resumed.stdout),
        text(&resumed.stderr)
    );
    assert!(
        text(&resumed.stdout).contains("14 of 14 cells done"),
        "{}",
        text(&resumed.stdout)
    );
    assert_eq!(state(&killed)["complete"], true);
    let rel = &files_named(&killed, "records.jsonl")[0];
    assert!(fs::read(killed.join(rel)).unwrap() == fs::read(here.join(rel)).unwrap());
}
