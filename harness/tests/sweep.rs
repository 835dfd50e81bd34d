//! `schedlab sweep` end to end: every cell runs into the sweep folder and
//! matches `schedlab scenario` byte for byte; a cell killed mid-run fails
//! alone and `resume` finishes it; the report over the sweep merges its
//! cells and writes the sweep table; bad sweep files write nothing.
#![allow(clippy::unwrap_used)]

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

/// 2 points × 2 arms × 2 seeds: 8 small cells.
const SMALL: &str = "
name: small
scenarios:
  - scenario: churn
    set: {nodes: 8}
  - scenario: pressure
    set: {nodes: 8}
arms: [default, binpack]
seeds: {first: 1, count: 2}
";

fn sweep_file(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("small.yaml");
    fs::write(&path, text).unwrap();
    path
}

fn cell_dirs(sweep: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = fs::read_dir(sweep.join("cells"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    dirs
}

fn state(sweep: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(sweep.join("sweep.json")).unwrap()).unwrap()
}

/// The records of the cell of `arm` and `seed` on the scenario `name`, whoever ran it.
fn cell_records(sweep: &Path, name: &str, arm: &str, seed: u64) -> PathBuf {
    cell_dirs(sweep)
        .into_iter()
        .find(|d| {
            let manifest: serde_json::Value =
                serde_json::from_str(&fs::read_to_string(d.join("manifest.json")).unwrap()).unwrap();
            manifest["scenario"] == name && manifest["arms"][0] == arm && manifest["seeds"][0] == seed
        })
        .unwrap_or_else(|| panic!("no cell of {name} {arm} {seed}"))
        .join(format!("runs/{arm}/seed-{seed}/records.jsonl"))
}

#[test]
fn a_sweep_runs_every_cell_like_schedlab_scenario_and_reports_them_merged() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(tmp.path(), SMALL);
    let sweep = tmp.path().join("sweep");
    let out = schedlab()
        .args(["sweep", "run"])
        .arg(&file)
        .args(["--jobs", "2", "--out"])
        .arg(&sweep)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("8 of 8 cells done, 0 failed"), "{stdout}");
    assert_eq!(cell_dirs(&sweep).len(), 8);
    assert_eq!(state(&sweep)["complete"], true);
    assert!(!sweep.join("INCOMPLETE").exists());
    // each cell's folder has its records and summaries, and no report of its own
    for cell in cell_dirs(&sweep) {
        assert!(cell.join("summary.json").is_file());
        assert!(!cell.join("report").exists(), "{}", cell.display());
    }
    // the same runs by `schedlab scenario`: the records are byte-identical
    for (name, set) in [("churn", "nodes=8"), ("pressure", "nodes=8")] {
        let direct = tmp.path().join(format!("direct-{name}"));
        schedlab()
            .args([
                "scenario",
                name,
                "--set",
                set,
                "--arms",
                "default,binpack",
                "--seeds",
                "2",
                "--out",
            ])
            .arg(&direct)
            .assert()
            .success();
        for arm in ["default", "binpack"] {
            for seed in [1, 2] {
                let a = fs::read(direct.join(format!("runs/{arm}/seed-{seed}/records.jsonl"))).unwrap();
                let b = fs::read(cell_records(&sweep, name, arm, seed)).unwrap();
                assert!(
                    a == b,
                    "{name} {arm} seed {seed}: the sweep's records differ from schedlab scenario's"
                );
            }
        }
    }
    // the report merges the cells of each scenario, and writes one row per cell and metric
    let report = schedlab().arg("report").arg(&sweep).output().unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        report.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&report.stderr)
    );
    assert!(text.contains("scenario churn: 2 arms × 2 seeds"), "{text}");
    assert!(text.contains("scenario pressure: 2 arms × 2 seeds"), "{text}");
    let table = fs::read_to_string(sweep.join("report/cells.csv")).unwrap();
    let mut lines = table.lines();
    assert_eq!(
        lines.next().unwrap(),
        "cell,index,scenario,point,set,arm,checkpoint,init_seed,training_run,seed,metric,value"
    );
    let rows: Vec<&str> = lines.collect();
    let metrics = rows.iter().filter(|r| r.starts_with(&rows[0][..17])).count();
    assert!(metrics > 10, "{metrics} metrics a cell");
    assert_eq!(rows.len(), 8 * metrics);
    assert!(
        rows.iter()
            .any(|r| r.contains(",pressure,nodes=8,nodes=8,binpack,,,,2,cost_usd,")),
        "{table}"
    );
    let parquet = fs::read(sweep.join("report/cells.parquet")).unwrap();
    assert!(parquet.starts_with(b"PAR1") && parquet.ends_with(b"PAR1"));
}

/// kind and GKE get the same Jobs, shown to the boundary this machine reaches: the dry run's objects and steps.
#[test]
fn a_dry_run_on_a_cluster_prints_every_object_and_the_image_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(tmp.path(), SMALL);
    let sweep = tmp.path().join("sweep");
    let kind = schedlab()
        .args(["sweep", "run"])
        .arg(&file)
        .args(["--on", "kube", "--kind", "lab", "--dry-run", "--out"])
        .arg(&sweep)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&kind.stdout);
    assert!(
        kind.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&kind.stderr)
    );
    assert!(
        text.contains("# cluster: context kind-lab, namespace default"),
        "{text}"
    );
    assert!(
        text.contains("kind load image-archive SWEEP/image/schedlab.tar --name lab"),
        "{text}"
    );
    assert!(
        text.contains("completionMode: Indexed") && text.contains("backoffLimitPerIndex: 2"),
        "{text}"
    );
    assert!(
        text.contains("kind: ServiceAccount") && text.contains("automountServiceAccountToken: false"),
        "{text}"
    );
    assert!(text.contains("imagePullPolicy: Never"), "{text}");
    // the Indexed Job, then the per-cell shape for servers before 1.29: one Job a cell
    assert_eq!(text.matches("kind: Job\n").count(), 1 + 8, "{text}");
    let gke = schedlab()
        .args(["sweep", "run"])
        .arg(&file)
        .args([
            "--on",
            "kube",
            "--context",
            "gke_p_z_lab",
            "--namespace",
            "lab",
            "--dry-run",
        ])
        .args([
            "--image",
            "europe-docker.pkg.dev/p/lab/schedlab:rev",
            "--queue",
            "team-a",
        ])
        .args(["--volume-claim", "sweep-results", "--parallelism", "64", "--out"])
        .arg(&sweep)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&gke.stdout);
    assert!(gke.status.success(), "{text}\n{}", String::from_utf8_lossy(&gke.stderr));
    assert!(text.contains("# cluster: context gke_p_z_lab, namespace lab"), "{text}");
    assert!(text.contains("kueue.x-k8s.io/queue-name: team-a"), "{text}");
    assert!(
        text.contains("claimName: sweep-results") && text.contains("parallelism: 64"),
        "{text}"
    );
    assert!(
        text.contains("image: europe-docker.pkg.dev/p/lab/schedlab:rev"),
        "{text}"
    );
    assert!(!sweep.exists(), "a dry run writes nothing");
    // the executor's flags are for --on kube; an image is needed there
    let local = schedlab()
        .args(["sweep", "run"])
        .arg(&file)
        .args(["--namespace", "lab", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(local.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&local.stderr).contains("are for --on kube"));
    let no_image = schedlab()
        .args(["sweep", "run"])
        .arg(&file)
        .args(["--on", "kube", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(no_image.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&no_image.stderr).contains("give --image REF"));
}

#[test]
fn a_cell_killed_mid_run_fails_alone_and_resume_finishes_the_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let file = sweep_file(tmp.path(), SMALL);
    let sweep = tmp.path().join("sweep");
    let run = std::process::Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .args(["sweep", "run"])
        .arg(&file)
        .args(["--jobs", "1", "--out"])
        .arg(&sweep)
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // the first cell's process, killed as a pod would be
    let work = sweep.join("work");
    let started = Instant::now();
    let victim = loop {
        if let Some(pid) = common::pid_with(&[&work.display().to_string(), "scenario"]) {
            break pid;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "no cell started");
        std::thread::sleep(Duration::from_millis(10));
    };
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(victim), nix::sys::signal::Signal::SIGKILL).unwrap();
    let out = run.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1 cells failed") && stderr.contains("schedlab sweep resume"),
        "{stderr}"
    );
    // the other cells are done; the folder is not complete
    assert_eq!(cell_dirs(&sweep).len(), 7);
    assert_eq!(state(&sweep)["complete"], false);
    assert_eq!(state(&sweep)["failed"], 1);
    assert!(sweep.join("INCOMPLETE").exists());
    let status = schedlab().args(["sweep", "status"]).arg(&sweep).output().unwrap();
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(text.contains("8 cells: 7 done, 1 failed"), "{text}");
    assert!(text.contains("failed") && text.contains("SIGKILL"), "{text}");
    // a report of an unfinished sweep says so, or is refused
    let refused = schedlab().arg("report").arg(&sweep).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("7 of 8 scenario cells are done"));
    // resume runs the failed cell only: the others' folders are untouched
    let before: Vec<(PathBuf, std::time::SystemTime)> = cell_dirs(&sweep)
        .into_iter()
        .map(|d| {
            let t = fs::metadata(d.join("manifest.json")).unwrap().modified().unwrap();
            (d, t)
        })
        .collect();
    let resumed = schedlab().args(["sweep", "resume"]).arg(&sweep).output().unwrap();
    let text = String::from_utf8_lossy(&resumed.stdout);
    assert!(
        resumed.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    assert!(text.contains("8 of 8 cells done"), "{text}");
    assert_eq!(state(&sweep)["complete"], true);
    assert!(!sweep.join("INCOMPLETE").exists());
    for (dir, modified) in before {
        assert_eq!(
            fs::metadata(dir.join("manifest.json")).unwrap().modified().unwrap(),
            modified
        );
    }
    let again = schedlab().args(["sweep", "resume"]).arg(&sweep).output().unwrap();
    assert!(String::from_utf8_lossy(&again.stdout).contains("nothing to resume"));

    // cells run elsewhere (a volume claim's copy) are taken only when they check out
    let claim = tmp.path().join("claim");
    fs::create_dir(&claim).unwrap();
    let cells = cell_dirs(&sweep);
    for cell in &cells[..2] {
        fs::rename(cell, claim.join(cell.file_name().unwrap())).unwrap();
    }
    let damaged = claim.join(cells[1].file_name().unwrap());
    let arm_dir = fs::read_dir(damaged.join("runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let seed_dir = fs::read_dir(&arm_dir).unwrap().next().unwrap().unwrap().path();
    let records = seed_dir.join("records.jsonl");
    let mut bytes = fs::read(&records).unwrap();
    bytes.extend_from_slice(b"\n");
    fs::write(&records, bytes).unwrap();
    let fetched = schedlab()
        .args(["sweep", "fetch"])
        .arg(&sweep)
        .arg("--from")
        .arg(&claim)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&fetched.stdout);
    let warned = String::from_utf8_lossy(&fetched.stderr);
    assert!(fetched.status.success(), "{said}\n{warned}");
    assert!(said.contains("Fetched 1 cells; 7 of 8 done"), "{said}");
    assert!(warned.contains("SHA-256") || warned.contains("digest"), "{warned}");
    assert_eq!(state(&sweep)["complete"], false);
}

#[test]
fn a_bad_sweep_file_or_a_dry_run_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = sweep_file(tmp.path(), "scenarios: [churn]\narms: [default, fastest]\nseeds: [1]\n");
    let sweep = tmp.path().join("sweep");
    let out = schedlab()
        .args(["sweep", "run"])
        .arg(&bad)
        .arg("--out")
        .arg(&sweep)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("small.yaml") && stderr.contains("field arms") && stderr.contains("fastest"),
        "{stderr}"
    );
    assert!(!sweep.exists());
    let good = sweep_file(tmp.path(), SMALL);
    let dry = schedlab()
        .args(["sweep", "run"])
        .arg(&good)
        .args(["--dry-run", "--out"])
        .arg(&sweep)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{text}");
    assert!(
        text.contains("8 cells") && text.contains("pressure [nodes=8] · binpack · seed 2"),
        "{text}"
    );
    assert!(!sweep.exists());
    // a sweep folder is never written over
    fs::create_dir(&sweep).unwrap();
    fs::write(sweep.join("mine.txt"), "keep").unwrap();
    let over = schedlab()
        .args(["sweep", "run"])
        .arg(&good)
        .arg("--out")
        .arg(&sweep)
        .output()
        .unwrap();
    assert_eq!(over.status.code(), Some(2), "{}", String::from_utf8_lossy(&over.stderr));
    assert_eq!(fs::read_to_string(sweep.join("mine.txt")).unwrap(), "keep");
    // status of a folder that is no sweep
    let status = schedlab().args(["sweep", "status"]).arg(&sweep).output().unwrap();
    assert_eq!(status.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&status.stderr).contains("not a sweep folder"));
}
