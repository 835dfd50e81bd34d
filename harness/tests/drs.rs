//! End-to-end runs of the DRS foil: training for one cluster size, running
//! the trained network beside the baselines, and the refusals of a network
//! at another size or of the other reward.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn schedlab() -> Command {
    let mut cmd = Command::cargo_bin("schedlab").unwrap();
    cmd.env("RUST_LOG", "warn");
    cmd
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Trains `variant` for `nodes` nodes in a few episodes into `out`.
fn train(out: &Path, variant: &str, nodes: usize) -> std::process::Output {
    schedlab()
        .args(["train", "--variant", variant, "--episodes", "3", "--seed", "1000"])
        .args(["--set", &format!("nodes={nodes}"), "--out"])
        .arg(out)
        .output()
        .unwrap()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn trains_for_one_size_and_runs_there_only() {
    let tmp = tempfile::tempdir().unwrap();
    let trained = tmp.path().join("drs");
    let out = train(&trained, "drs", 6);
    assert!(out.status.success(), "{}", stderr(&out));
    let meta = json(&trained.join("checkpoint.json"));
    assert_eq!(meta["kind"], "drs");
    assert_eq!(meta["nodes"], 6);
    assert_eq!(meta["reward"], "drs");
    // 6 × 22 node features and 10 of the pod, 50 hidden units, 6 outputs
    assert_eq!(meta["parameters"], (6 * 22 + 10) * 50 + 50 + 50 * 6 + 6);
    assert!(meta["training"]["updates"].as_u64().unwrap() > 0);
    assert!(meta["training"]["wall_seconds"].as_f64().unwrap() > 0.0);
    let curve = fs::read_to_string(trained.join("training_curve.csv")).unwrap();
    assert_eq!(curve.lines().count(), 1 + 3, "a header and a row per episode");
    let validation = fs::read_to_string(trained.join("validation_curve.csv")).unwrap();
    assert!(validation.lines().skip(1).all(|l| l.contains(",90000")), "{validation}");
    let checkpoint = trained.join("checkpoint.safetensors");

    // beside default at the size it was trained for
    let run = tmp.path().join("run");
    let out = schedlab()
        .args([
            "scenario",
            "churn",
            "--arms",
            "default,drs",
            "--set",
            "nodes=6",
            "--seeds",
            "2",
        ])
        .arg("--drs-checkpoint")
        .arg(&checkpoint)
        .arg("--out")
        .arg(&run)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = json(&run.join("manifest.json"));
    assert_eq!(manifest["arm_facts"]["drs"]["training_run"], "seed:1000");
    assert_eq!(manifest["drs_checkpoint"]["drs"]["nodes"], 6);
    let records = fs::read_to_string(run.join("runs/drs/seed-1/records.jsonl")).unwrap();
    assert!(records.contains("\"pod_bound\""), "the network binds pods");

    // at another size: refused, naming the file and both sizes
    let out = schedlab()
        .args(["scenario", "churn", "--arms", "drs", "--set", "nodes=8", "--seeds", "1"])
        .arg("--drs-checkpoint")
        .arg(&checkpoint)
        .arg("--out")
        .arg(tmp.path().join("refused"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains(&checkpoint.display().to_string()) && err.contains("trained for 6 nodes") && err.contains("has 8"),
        "{err}"
    );
    assert!(!tmp.path().join("refused").exists(), "nothing written");

    // as the other reward's arm: refused
    let out = schedlab()
        .args([
            "scenario",
            "churn",
            "--arms",
            "drs-agmarl-reward",
            "--set",
            "nodes=6",
            "--seeds",
            "1",
        ])
        .arg("--drs-checkpoint")
        .arg(&checkpoint)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("trained as drs"), "{}", stderr(&out));
}

#[test]
fn bundled_networks_run_at_their_size_and_another_size_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    // churn starts with 40 nodes: both rewards ship a network of that size
    let run = tmp.path().join("run");
    let out = schedlab()
        .args([
            "scenario",
            "churn",
            "--arms",
            "drs,drs-agmarl-reward",
            "--seeds",
            "1",
            "--out",
        ])
        .arg(&run)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let manifest = json(&run.join("manifest.json"));
    for arm in ["drs", "drs-agmarl-reward"] {
        let network = &manifest["drs_checkpoint"][arm];
        assert_eq!(network["nodes"], 40);
        let origin = network["checkpoint"].as_str().unwrap();
        assert!(
            origin.starts_with("bundled") && origin.contains(&format!("{arm}-n40")),
            "{origin}"
        );
    }
    // the state's node order is the join order, the same for every arm of a seed: the same nodes
    // join under the same ids in both runs (replacements of lost spot nodes included)
    let joins = |arm: &str| -> Vec<(u64, String)> {
        fs::read_to_string(run.join(format!("runs/{arm}/seed-1/records.jsonl")))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .filter(|r| r["type"] == "node")
            .map(|r| {
                (
                    r["node"].as_u64().unwrap(),
                    r["spec"]["name"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let order = joins("drs");
    assert!(order.len() >= 40, "{order:?}");
    assert!(
        order.iter().enumerate().all(|(i, (id, _))| *id == i as u64),
        "{order:?}"
    );
    assert_eq!(order, joins("drs-agmarl-reward"));

    // no network ships for 12 nodes
    let out = schedlab()
        .args([
            "scenario",
            "churn",
            "--arms",
            "default,drs",
            "--seeds",
            "1",
            "--set",
            "nodes=12",
            "--out",
        ])
        .arg(tmp.path().join("refused"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("12 nodes (bundled: 10, 40 nodes)") && err.contains("--drs-checkpoint"),
        "{err}"
    );
}

#[test]
fn training_at_mixed_sizes_and_a_damaged_checkpoint_are_refused() {
    let tmp = tempfile::tempdir().unwrap();

    // pressure starts with 48 nodes and churn with 40
    let out = schedlab()
        .args(["train", "--variant", "drs", "--episodes", "1", "--out"])
        .arg(tmp.path().join("train"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("pressure has 48") && err.contains("--set nodes=N"),
        "{err}"
    );

    // a damaged checkpoint names its file
    let bad = tmp.path().join("bad.safetensors");
    fs::write(&bad, b"not safetensors").unwrap();
    fs::write(tmp.path().join("bad.json"), b"{}").unwrap();
    let out = schedlab()
        .args(["scenario", "churn", "--arms", "drs", "--seeds", "1", "--drs-checkpoint"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("bad"), "{}", stderr(&out));
}

#[test]
fn the_objectives_reward_trains_from_realised_metrics() {
    let tmp = tempfile::tempdir().unwrap();
    let trained = tmp.path().join("objectives");
    let out = train(&trained, "drs-agmarl-reward", 6);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(json(&trained.join("checkpoint.json"))["reward"], "drs-agmarl-reward");
    let curve = fs::read_to_string(trained.join("training_curve.csv")).unwrap();
    for row in curve.lines().skip(1) {
        let reward: f64 = row.split(',').nth(7).unwrap().parse().unwrap();
        // the mean of realised metrics in [0, 1]
        assert!((0.0..=1.0).contains(&reward), "{row}");
    }
}

#[test]
fn table_d_over_three_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let mut folders = Vec::new();
    let mut trainings = Vec::new();
    for nodes in [4, 6, 8] {
        let trained = tmp.path().join(format!("train-{nodes}"));
        let out = train(&trained, "drs", nodes);
        assert!(out.status.success(), "{}", stderr(&out));
        let run = tmp.path().join(format!("churn-{nodes}"));
        let out = schedlab()
            .args(["scenario", "churn", "--arms", "agmarl,drs", "--seeds", "2"])
            .args(["--set", &format!("nodes={nodes}")])
            .arg("--drs-checkpoint")
            .arg(trained.join("checkpoint.safetensors"))
            .arg("--out")
            .arg(&run)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        folders.push(run);
        trainings.push(trained);
    }
    let out_dir = tmp.path().join("table-d");
    let mut cmd = schedlab();
    cmd.arg("scaling").args(&folders);
    for t in &trainings {
        cmd.arg("--training").arg(t);
    }
    let out = cmd.arg("--out").arg(&out_dir).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let md = fs::read_to_string(out_dir.join("scaling.md")).unwrap();
    assert!(
        md.contains("# Table D") && md.contains("| churn | drs | 4, 6, 8 | 6 |"),
        "{md}"
    );
    let table = json(&out_dir.join("scaling.json"));
    let growth = &table["growth"][0];
    for e in growth["exponents"].as_array().unwrap() {
        assert!(e["exponent"].as_f64().is_some(), "{e}");
        assert!(e["interval"][0].as_f64().unwrap() <= e["interval"][1].as_f64().unwrap());
    }
    assert_eq!(
        table["quality"].as_array().unwrap().len(),
        6,
        "two metrics at three sizes"
    );
    assert_eq!(table["training"].as_array().unwrap().len(), 3);
    let svg = fs::read_to_string(out_dir.join("scaling.svg")).unwrap();
    assert!(
        svg.contains("<svg") && svg.contains("decision time p99"),
        "{}",
        &svg[..200.min(svg.len())]
    );
    assert!(fs::read(out_dir.join("scaling.png")).unwrap().starts_with(b"\x89PNG"));

    // the same size twice is refused, naming both folders
    let out = schedlab()
        .arg("scaling")
        .args([&folders[0], &folders[0]])
        .arg("--out")
        .arg(tmp.path().join("twice"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("churn at 4 nodes"), "{}", stderr(&out));
}
