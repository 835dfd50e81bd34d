//! `schedlab report` and `schedlab compare` on real run folders: rebuilt
//! reports are byte-identical, damaged folders are refused naming the file,
//! and the gate fires only on a real regression.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

fn schedlab() -> Command {
    let mut cmd = Command::cargo_bin("schedlab").unwrap();
    cmd.env("RUST_LOG", "warn");
    cmd
}

/// One small run folder shared by every test (each test copies it): 2 arms,
/// 4 seeds, the smallest sample on which a Mann–Whitney test can reach 0.05.
fn base_folder() -> &'static Path {
    static FOLDER: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, dir) = FOLDER.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("base");
        let out = schedlab()
            .args(["scenario", "churn", "--arms", "default,binpack", "--seeds", "4"])
            .args(["--set", "nodes=8", "--out"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        (tmp, dir)
    });
    dir
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn copy_of_base(tmp: &Path, name: &str) -> PathBuf {
    let dir = tmp.join(name);
    copy_dir(base_folder(), &dir);
    dir
}

fn records(dir: &Path, arm: &str, seed: u64) -> PathBuf {
    dir.join("runs")
        .join(arm)
        .join(format!("seed-{seed}"))
        .join("records.jsonl")
}

/// Every file under `dir`, relative path -> bytes, sorted.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path.strip_prefix(root).unwrap().display().to_string();
                out.push((rel, fs::read(&path).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn a_report_rebuilt_from_the_same_records_is_byte_identical() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_of_base(tmp.path(), "run");
    let out = schedlab().arg("report").arg(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("cost_usd") && stdout.contains("report.html"),
        "{stdout}"
    );
    let first = tree(&dir.join("report"));
    let again = tmp.path().join("again");
    let out = schedlab()
        .arg("report")
        .arg(&dir)
        .arg("--out")
        .arg(&again)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(first == tree(&again), "two reports of the same records differ");

    let names: Vec<&str> = first.iter().map(|(n, _)| n.as_str()).collect();
    for want in ["summary.csv", "summary.json", "report.md", "report.tex", "report.html"] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    for prefix in [
        "plots/heatmap-default",
        "plots/heatmap-binpack",
        "plots/pareto",
        "plots/sched-latency-cdf",
    ] {
        for ext in ["svg", "png"] {
            assert!(
                names.contains(&format!("{prefix}.{ext}").as_str()),
                "{prefix}.{ext} in {names:?}"
            );
        }
    }
    // the rebuilt tables are the ones `scenario` wrote: same records, same statistics
    assert_eq!(
        fs::read_to_string(dir.join("summary.csv")).unwrap(),
        fs::read_to_string(dir.join("report/summary.csv")).unwrap()
    );
    // report/report.md adds the list of its plots and the decision records' section
    let (written, rebuilt) = (
        fs::read_to_string(dir.join("report.md")).unwrap(),
        fs::read_to_string(dir.join("report/report.md")).unwrap(),
    );
    let added = rebuilt
        .strip_prefix(&written)
        .expect("report/report.md begins with report.md");
    assert!(added.contains("## Plots") && added.contains("## Decisions"), "{added}");
    let html = fs::read_to_string(dir.join("report/report.html")).unwrap();
    assert!(html.contains("<svg") && html.contains("churn") && html.contains("binpack"));
    assert!(
        !html.contains(&dir.display().to_string()),
        "no absolute paths in the report"
    );
    assert!(
        !html.contains("<script") && !html.contains("https://"),
        "self-contained"
    );
}

fn assert_refused(dir: &Path, expected: &[&str]) {
    let out = schedlab()
        .arg("report")
        .arg(dir)
        .arg("--out")
        .arg(dir.join("r"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit 2; stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for want in expected {
        assert!(stderr.contains(want), "{want:?} in: {stderr}");
    }
    assert!(!dir.join("r/report.html").exists(), "no report from part of the data");
}

#[test]
fn damaged_folders_exit_2_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();

    let no_end = copy_of_base(tmp.path(), "no-end");
    let path = records(&no_end, "binpack", 3);
    let text = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    fs::write(&path, lines[..lines.len() - 1].join("\n") + "\n").unwrap();
    assert_refused(&no_end, &["binpack/seed-3/records.jsonl", "End"]);

    let malformed = copy_of_base(tmp.path(), "malformed");
    let path = records(&malformed, "default", 2);
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[4] = "{\"type\": \"event\", \"oops";
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    assert_refused(&malformed, &["default/seed-2/records.jsonl", "line 5"]);

    let no_manifest = copy_of_base(tmp.path(), "no-manifest");
    fs::remove_file(no_manifest.join("manifest.json")).unwrap();
    assert_refused(&no_manifest, &["manifest.json"]);

    let missing_run = copy_of_base(tmp.path(), "missing-run");
    fs::remove_file(records(&missing_run, "default", 4)).unwrap();
    assert_refused(&missing_run, &["default/seed-4/records.jsonl", "missing"]);
}

#[test]
fn an_incomplete_folder_is_refused_unless_allowed_and_then_marked() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = copy_of_base(tmp.path(), "partial");
    fs::write(dir.join("INCOMPLETE"), "interrupted\n").unwrap();
    let path = records(&dir, "binpack", 4);
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, &text[..text.len() / 2]).unwrap();
    assert_refused(&dir, &["INCOMPLETE", "--allow-incomplete"]);

    let out_dir = tmp.path().join("partial-report");
    let out = schedlab()
        .arg("report")
        .arg(&dir)
        .arg("--allow-incomplete")
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("INCOMPLETE: 7 of 8 runs"));
    for file in ["summary.csv", "summary.json", "report.md", "report.tex", "report.html"] {
        let text = fs::read_to_string(out_dir.join(file)).unwrap();
        assert!(text.contains("INCOMPLETE: 7 of 8 runs"), "{file} says it is partial");
    }
    for plot in fs::read_dir(out_dir.join("plots")).unwrap() {
        let path = plot.unwrap().path();
        if path.extension().is_some_and(|e| e == "svg") {
            let text = fs::read_to_string(&path).unwrap();
            assert!(
                text.contains("INCOMPLETE: 7 of 8 runs"),
                "{} says it is partial",
                path.display()
            );
        }
    }

    // its warnings are dropped when standard error is closed: the report is still written, exit 0
    let (mut reader, write_end) = {
        let mut reader = std::process::Command::new("true")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let write_end = reader.stdin.take().unwrap();
        (reader, write_end)
    };
    assert!(reader.wait().unwrap().success());
    let quiet_dir = tmp.path().join("partial-report-closed-stderr");
    let status = std::process::Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .arg("report")
        .arg(&dir)
        .arg("--allow-incomplete")
        .arg("--out")
        .arg(&quiet_dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::from(write_end))
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert!(quiet_dir.join("report.html").is_file());
}

#[test]
fn several_folders_need_out_and_one_scenario() {
    let tmp = tempfile::tempdir().unwrap();
    let a = copy_of_base(tmp.path(), "a");
    let out = schedlab().arg("report").arg(&a).arg(&a).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--out"));
    // the same runs twice would count each run twice
    let out = schedlab()
        .arg("report")
        .arg(&a)
        .arg(&a)
        .arg("--out")
        .arg(tmp.path().join("r"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("in both"));
}

fn compare(base: &Path, new: &Path, extra: &[&str]) -> (Option<i32>, String, String) {
    let out = schedlab()
        .arg("compare")
        .arg(base)
        .arg(new)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// NEW: the base runs with every cluster sample's cost rate tripled, so
/// cost_usd triples on every seed and nothing else moves.
fn costlier_copy(tmp: &Path) -> PathBuf {
    let dir = copy_of_base(tmp, "costlier");
    for arm in ["default", "binpack"] {
        for seed in 1..=4 {
            let path = records(&dir, arm, seed);
            let text = fs::read_to_string(&path).unwrap();
            let edited: String = text
                .lines()
                .map(|line| {
                    let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
                    if v["type"] == "cluster_sample" {
                        let cost = v["hourly_cost"].as_f64().unwrap();
                        v["hourly_cost"] = serde_json::json!(cost * 3.0);
                    }
                    v.to_string() + "\n"
                })
                .collect();
            fs::write(&path, &edited).unwrap();
            // a run that wrote these records: its manifest names their digest
            let manifest = path.with_file_name("manifest.json");
            let mut run: serde_json::Value = serde_json::from_str(&fs::read_to_string(&manifest).unwrap()).unwrap();
            run["records_sha256"] = schedlab_core::digest::sha256_hex(edited.as_bytes()).into();
            fs::write(&manifest, run.to_string()).unwrap();
        }
    }
    dir
}

#[test]
fn compare_passes_a_folder_against_itself_and_fails_a_regression() {
    let tmp = tempfile::tempdir().unwrap();
    let base = base_folder();
    let (code, stdout, stderr) = compare(base, base, &[]);
    assert_eq!(code, Some(0), "stdout: {stdout}\nstderr: {stderr}");
    for metric in ["cost_usd", "failure_rate", "restarts", "sched_latency_p99_s"] {
        assert!(stdout.contains(metric), "{metric} in: {stdout}");
    }

    let new = costlier_copy(tmp.path());
    let (code, stdout, stderr) = compare(base, &new, &["--margin", "5%"]);
    assert_eq!(
        code,
        Some(3),
        "a regression has its own exit code; stdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stderr.contains("cost_usd of arm default") && stderr.contains("+200.0%"),
        "{stderr}"
    );
    assert!(stdout.contains("WORSE"), "{stdout}");
    // cost is not gated here: nothing else got worse
    let (code, _, stderr) = compare(base, &new, &["--metrics", "restarts,failure_rate"]);
    assert_eq!(code, Some(0), "{stderr}");
    // the other way round it is an improvement
    let (code, _, _) = compare(&new, base, &[]);
    assert_eq!(code, Some(0));
}

#[test]
fn compare_refuses_bad_input_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let base = base_folder();
    let (code, _, stderr) = compare(base, base, &["--metrics", "happiness"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("happiness"), "{stderr}");
    let (code, _, _) = compare(base, base, &["--margin", "lots"]);
    assert_eq!(code, Some(2));
    let (code, _, stderr) = compare(base, &tmp.path().join("nowhere"), &[]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("nowhere") && stderr.contains("manifest.json"),
        "{stderr}"
    );

    let other = tmp.path().join("other");
    let out = schedlab()
        .args(["scenario", "churn", "--arms", "default", "--seeds", "1"])
        .args(["--set", "nodes=9", "--out"])
        .arg(&other)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (code, _, stderr) = compare(base, &other, &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("different scenarios"), "{stderr}");
}

#[test]
fn report_refuses_an_out_that_would_overwrite_another_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let a = copy_of_base(tmp.path(), "a");
    let b = copy_of_base(tmp.path(), "b");
    let notes = tmp.path().join("notes");
    fs::create_dir(&notes).unwrap();
    fs::write(notes.join("keep.txt"), "mine").unwrap();
    let (b_before, notes_before) = (tree(&b), tree(&notes));
    for (out_dir, why) in [
        (b.clone(), "it is a run folder"),
        (a.clone(), "it is a run folder"),
        (b.join("report"), "not empty"),
        (notes.clone(), "not empty"),
        (notes.join("keep.txt"), "is a file"),
    ] {
        let out = schedlab()
            .arg("report")
            .arg(&a)
            .arg("--out")
            .arg(&out_dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{}: {stderr}", out_dir.display());
        assert!(
            stderr.contains("--out") && stderr.contains(&out_dir.display().to_string()) && stderr.contains(why),
            "{stderr}"
        );
    }
    assert!(tree(&b) == b_before, "the other run folder is untouched");
    assert!(tree(&notes) == notes_before);
    // the input's own report folder is rebuilt, named or by default
    let out = schedlab()
        .arg("report")
        .arg(&a)
        .arg("--out")
        .arg(a.join("report"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // an empty folder is fine, and several inputs may share a new one
    let empty = tmp.path().join("empty");
    fs::create_dir(&empty).unwrap();
    let out = schedlab()
        .arg("report")
        .arg(&a)
        .arg("--out")
        .arg(&empty)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // but not again into the same one: that report is of other inputs as far as the command can tell
    let out = schedlab()
        .arg("report")
        .arg(&b)
        .arg("--out")
        .arg(&empty)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_closed_stdout_does_not_turn_a_regression_into_a_pass() {
    let tmp = tempfile::tempdir().unwrap();
    let new = costlier_copy(tmp.path());
    // the write end of a pipe whose reader has exited: every write fails with EPIPE
    let mut reader = std::process::Command::new("true")
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let write_end = reader.stdin.take().unwrap();
    assert!(reader.wait().unwrap().success());
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .arg("compare")
        .arg(base_folder())
        .arg(&new)
        .stdout(std::process::Stdio::from(write_end))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("significantly worse") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

/// Declares `claims` ("claim/role") in a run folder's manifest, as a
/// scenario file's `claims:` leaves them (`resolved_scenario.claims`), so the
/// test does not depend on which built-ins declare what.
fn declare(dir: &Path, claims: &[&str]) {
    let path = dir.join("manifest.json");
    let mut m: serde_json::Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    let list: Vec<serde_json::Value> = claims
        .iter()
        .map(|c| {
            let (claim, role) = c.split_once('/').unwrap();
            serde_json::json!({"claim": claim, "role": role})
        })
        .collect();
    m["resolved_scenario"]["claims"] = serde_json::Value::Array(list);
    fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
}

/// Two tiny scenarios with `default` and `agmarl` that declare claims,
/// reported together: each scenario's report in its own folder, the claims
/// table at the top in every format and on the terminal; a declaration of an
/// unknown claim refused with exit 2.
#[test]
fn a_report_over_the_claim_scenarios_adds_the_claims_table() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for (scenario, claims) in [
        ("churn", &["restraint/churn-faults", "pareto/stress-faults"][..]),
        ("pressure", &["packing/cascading-pressure", "pareto/stress"][..]),
    ] {
        let dir = tmp.path().join(scenario);
        let out = schedlab()
            .args(["scenario", scenario, "--arms", "default,agmarl", "--seeds", "2"])
            .args(["--set", "nodes=6", "--out"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        declare(&dir, claims);
        dirs.push(dir);
    }
    let report = tmp.path().join("claims");
    let out = schedlab()
        .arg("report")
        .args(&dirs)
        .arg("--out")
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("scenario churn") && stdout.contains("scenario pressure"),
        "{stdout}"
    );
    // by default the verdicts in a line per claim; every row with --all-metrics
    assert!(
        stdout.contains("Claims of AGMARL-DKS for `agmarl` against `default`")
            && stdout.contains("  claim 1 (packing): "),
        "{stdout}"
    );
    assert!(!stdout.contains("Verdict against `default`"), "{stdout}");
    let all = schedlab()
        .arg("report")
        .args(&dirs)
        .arg("--all-metrics")
        .arg("--out")
        .arg(tmp.path().join("claims-all"))
        .output()
        .unwrap();
    assert!(all.status.success(), "{}", String::from_utf8_lossy(&all.stderr));
    let stdout = String::from_utf8_lossy(&all.stdout);
    assert!(
        stdout.contains("\nClaims\n") && stdout.contains("Claim 1 (packing): smart packing"),
        "{stdout}"
    );
    assert!(
        stdout.contains("evaluations/PREREGISTRATION.md") && stdout.contains("SHA-256"),
        "{stdout}"
    );
    assert!(stdout.contains("Verdict against `default`"), "{stdout}");
    for (file, marker) in [
        ("report.md", "## Claims"),
        ("report.tex", "\\section*{Claims}"),
        ("report.html", "<h2 id=\"claims\">Claims</h2>"),
    ] {
        let text = fs::read_to_string(report.join(file)).unwrap();
        assert!(text.contains(marker), "{file}");
        // claim 3 is declared by neither; claim 5 is stated whenever any claim is
        for n in [1, 2, 4, 5] {
            assert!(text.contains(&format!("Claim {n} (")), "claim {n} in {file}");
        }
        assert!(!text.contains("Claim 3 ("), "claim 3 in {file}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(report.join("claims.json")).unwrap()).unwrap();
    assert_eq!(json["arm"], "agmarl");
    assert_eq!(json["claims"].as_array().unwrap().len(), 4);
    assert_eq!(json["preregistration"]["date"], "2026-12-07");
    for claim in json["claims"].as_array().unwrap() {
        let verdict = claim["verdict"].as_str().unwrap();
        assert!(
            ["supported", "not shown", "contradicted"].contains(&verdict),
            "{verdict}"
        );
    }
    // each scenario's own report, as before, linked from the index
    for scenario in ["churn", "pressure"] {
        assert!(report.join(scenario).join("summary.json").is_file());
        assert!(
            !fs::read_to_string(report.join(scenario).join("report.md"))
                .unwrap()
                .contains("## Claims")
        );
        assert!(
            fs::read_to_string(report.join("report.html"))
                .unwrap()
                .contains(&format!("href=\"{scenario}/report.html\""))
        );
    }

    // another arm judged the same way; an arm no folder has is refused
    let out = schedlab()
        .arg("report")
        .args(&dirs)
        .args(["--claims-arm", "default", "--out"])
        .arg(tmp.path().join("by-default"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(tmp.path().join("by-default/claims.json")).unwrap()).unwrap();
    assert_eq!(json["arm"], "default");
    let out = schedlab()
        .arg("report")
        .args(&dirs)
        .args(["--claims-arm", "agmarl-nope", "--out"])
        .arg(tmp.path().join("nope"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("agmarl-nope"));
    assert!(!tmp.path().join("nope").exists());

    // a folder declaring a claim the catalogue does not know: exit 2, naming the file, field and value
    declare(&dirs[0], &["restraint/churn-faults", "speed/stress"]);
    let out = schedlab()
        .arg("report")
        .args(&dirs)
        .arg("--out")
        .arg(tmp.path().join("bad"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("churn/manifest.json")
            && stderr.contains("resolved_scenario.claims[1].claim")
            && stderr.contains("speed"),
        "{stderr}"
    );
}
