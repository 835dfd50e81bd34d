//! `schedlab scenario --explain` on the simulator: the records are
//! byte-identical to a run without it, every run gains a decisions.jsonl
//! with one line per decision, the manifests say so, and the report draws
//! the stress plot and the AGMARL tables from them (and without them says
//! how to get them).
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;
use std::fs;
use std::path::Path;

const ARMS: [&str; 5] = ["default", "random", "load-aware", "agmarl", "agmarl-nostress"];

fn scenario(out: &Path, explain: bool) {
    // the threshold rule of restraint, which declines on 8 tight nodes (the
    // learned one seldom does), so the decline's path is checked too
    let config = out.with_extension("agmarl.json");
    fs::write(&config, r#"{"restraint": {"rule": "threshold"}}"#).unwrap();
    let mut cmd = Command::cargo_bin("schedlab").unwrap();
    cmd.env("RUST_LOG", "warn")
        .args(["scenario", "churn", "--seeds", "1", "--set", "nodes=8", "--jobs", "2"])
        .arg("--arms")
        .arg(ARMS.join(","))
        .arg("--agmarl-config")
        .arg(&config)
        .arg("--out")
        .arg(out);
    if explain {
        cmd.arg("--explain");
    }
    let run = cmd.output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn explained_runs_keep_their_records_and_add_one_decision_a_line() {
    let tmp = tempfile::tempdir().unwrap();
    let (plain, explained) = (tmp.path().join("plain"), tmp.path().join("explained"));
    scenario(&plain, false);
    scenario(&explained, true);
    assert_eq!(read_json(&plain.join("manifest.json"))["explain"], false);
    assert_eq!(read_json(&explained.join("manifest.json"))["explain"], true);

    for arm in ARMS {
        let run = |root: &Path| root.join("runs").join(arm).join("seed-1");
        let records = |root: &Path| fs::read(run(root).join("records.jsonl")).unwrap();
        assert!(
            records(&plain) == records(&explained),
            "{arm}: --explain changed the records"
        );
        assert!(
            !run(&plain).join("decisions.jsonl").exists(),
            "{arm}: no decisions without --explain"
        );
        assert!(read_json(&run(&plain).join("manifest.json")).get("explain").is_none());

        let text = fs::read_to_string(run(&explained).join("decisions.jsonl")).unwrap();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let manifest = read_json(&run(&explained).join("manifest.json"));
        assert_eq!(manifest["explain"]["written"]["file"], "decisions.jsonl", "{arm}");
        assert_eq!(manifest["explain"]["written"]["decisions"], lines.len() as u64, "{arm}");
        // one line per decision: the simulator counted them too
        let times = read_json(&run(&explained).join("decision_times.json"));
        assert_eq!(times["decisions"], lines.len() as u64, "{arm}");

        let agmarl = arm.starts_with("agmarl");
        let basis = if arm == "agmarl" { "in-force" } else { "observed" };
        let mut last_t = 0;
        for d in &lines {
            let t = d["t"].as_u64().unwrap();
            assert!(t >= last_t, "{arm}: decisions in time order");
            last_t = t;
            assert!(d["pod"].is_u64() && d["attempts"].is_u64(), "{arm}: {d}");
            assert!(d["workload"].is_string(), "{arm}: {d}");
            assert_eq!(d["stress"]["basis"], basis, "{arm}: {d}");
            assert_eq!(d.get("agmarl").is_some(), agmarl, "{arm}: {d}");
            match d["outcome"].as_str().unwrap() {
                "bind" => {
                    assert!(d["chosen"]["name"].is_string(), "{arm}: {d}");
                    assert!(d["candidates"].as_u64().unwrap() >= 1, "{arm}: {d}");
                }
                "unschedulable" => {
                    assert_eq!(d["candidates"], 0, "{arm}: {d}");
                    assert!(
                        d["reason"].as_str().unwrap().contains("nodes are available"),
                        "{arm}: {d}"
                    );
                }
                "decline" => assert!(d["agmarl"]["decline"]["bar"].is_number(), "{arm}: {d}"),
                "preempt" => {
                    assert!(arm != "random", "{arm}: {d}");
                    assert_eq!(d["candidates"], 0, "{arm}: {d}");
                    assert!(d["preempt"]["name"].is_string(), "{arm}: {d}");
                    assert!(!d["preempt"]["victims"].as_array().unwrap().is_empty(), "{arm}: {d}");
                }
                other => panic!("{arm}: outcome {other}"),
            }
        }
        if agmarl {
            assert!(
                lines
                    .iter()
                    .any(|d| d["agmarl"]["kept"].as_array().is_some_and(|k| k.len() == 3))
            );
            // the tolerance in force: the bundled checkpoint's heads' RMSE
            // as floors for every lexicographic step
            let sidecar: serde_json::Value = serde_json::from_str(
                &fs::read_to_string(format!(
                    "{}/../scheduler/checkpoints/{arm}.json",
                    env!("CARGO_MANIFEST_DIR")
                ))
                .unwrap(),
            )
            .unwrap();
            let rmse = &sidecar["training"]["validation"]["heads"]["rmse"];
            for d in lines.iter().filter(|d| d.get("agmarl").is_some()) {
                let a = &d["agmarl"];
                if a["selection"] == "lexicographic" {
                    assert!(a["tolerance"]["delta_lex"].is_number(), "{arm}: {d}");
                    let floor = a["tolerance"]["floor"].as_array().unwrap();
                    assert_eq!(floor.len(), 3, "{arm}: {d}");
                    if rmse.is_array() {
                        for (f, r) in floor.iter().zip(rmse.as_array().unwrap()) {
                            assert!((f.as_f64().unwrap() - r.as_f64().unwrap()).abs() < 1e-6, "{arm}: {d}");
                        }
                    }
                } else {
                    assert!(a.get("tolerance").is_none(), "{arm}: {d}");
                }
            }
        }
    }

    // the report: the stress plot and the AGMARL tables, or how to get them
    let explained_md = fs::read_to_string(explained.join("report/report.md")).unwrap();
    let explained_html = fs::read_to_string(explained.join("report/report.html")).unwrap();
    assert!(explained.join("report/plots/stress-over-time.svg").is_file());
    assert!(explained_md.contains("plots/stress-over-time.svg") && explained_md.contains("### `agmarl` (1 run)"));
    assert!(explained_md.contains("### `agmarl-nostress` (1 run)"));
    assert!(explained_html.contains("id=\"plot-stress-over-time\"") && explained_html.contains("decline reason"));
    let plain_md = fs::read_to_string(plain.join("report/report.md")).unwrap();
    assert!(!plain.join("report/plots/stress-over-time.svg").exists());
    assert!(plain_md.contains("No decision records") && plain_md.contains("--explain"));
    // the other plots and tables are the same
    assert_eq!(
        fs::read(plain.join("report/plots/pareto.svg")).unwrap(),
        fs::read(explained.join("report/plots/pareto.svg")).unwrap()
    );
    // every metric but the machine's decision times
    let metrics = |root: &Path| -> Vec<String> {
        fs::read_to_string(root.join("summary.csv"))
            .unwrap()
            .lines()
            .filter(|l| !l.contains("decision_time"))
            .map(str::to_string)
            .collect()
    };
    assert_eq!(metrics(&plain), metrics(&explained));
}
