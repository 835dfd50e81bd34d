//! End-to-end runs of the `schedlab` binary on small scenarios.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn schedlab() -> Command {
    let mut cmd = Command::cargo_bin("schedlab").unwrap();
    cmd.env("RUST_LOG", "warn");
    cmd
}

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn lists_the_builtin_scenarios() {
    let out = schedlab().arg("scenarios").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let names: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).collect();
    assert!(names.contains(&"pressure"), "{text}");
    assert!(names.contains(&"churn"), "{text}");
    assert!(
        text.lines().all(|l| l.split_whitespace().count() > 1),
        "every line has a description: {text}"
    );
}

fn assert_complete_run(out_dir: &Path, arms: &[&str], seeds: &[u64]) {
    assert!(!out_dir.join("INCOMPLETE").exists(), "marker removed");
    for file in ["manifest.json", "summary.csv", "summary.json", "report.md"] {
        assert!(out_dir.join(file).is_file(), "{file} written");
    }
    let manifest = read_json(&out_dir.join("manifest.json"));
    assert_eq!(manifest["complete"], true);
    assert_eq!(manifest["backend"], "sim");
    assert!(manifest["git_revision"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(
        manifest["params"]["nodes"].is_number(),
        "resolved params recorded: {manifest}"
    );
    for arm in arms {
        for seed in seeds {
            let dir = out_dir.join("runs").join(arm).join(format!("seed-{seed}"));
            let records = fs::read_to_string(dir.join("records.jsonl")).unwrap();
            assert!(records.lines().count() > 10, "{arm}/{seed} has records");
            assert!(
                records.lines().last().unwrap().contains("\"end\""),
                "records end with the End record"
            );
            let run = read_json(&dir.join("manifest.json"));
            assert_eq!(run["arm"], *arm);
            assert_eq!(run["seed"], *seed);
        }
    }
    let csv = fs::read_to_string(out_dir.join("summary.csv")).unwrap();
    for arm in arms {
        assert!(
            csv.lines().skip(1).any(|l| l.starts_with(&format!("{arm},"))),
            "{arm} in summary.csv"
        );
    }
    assert!(!csv.contains("NaN"));
}

#[test]
fn churn_runs_end_to_end_and_prints_the_comparison() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("churn");
    let out = schedlab()
        .args(["scenario", "churn", "--seeds", "2", "--set", "nodes=12", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for arm in ["default", "binpack", "random", "agmarl"] {
        assert!(stdout.contains(arm), "{arm} column in: {stdout}");
    }
    for metric in ["cost", "restarts", "latency", "failure"] {
        assert!(stdout.to_lowercase().contains(metric), "{metric} row in: {stdout}");
    }
    assert!(stdout.contains('±'), "mean ± CI cells: {stdout}");
    assert_complete_run(&out_dir, &["default", "binpack", "random", "agmarl"], &[1, 2]);
    let manifest = read_json(&out_dir.join("manifest.json"));
    assert_eq!(
        manifest["checkpoint"], "bundled",
        "the agmarl arm used the bundled checkpoint"
    );
}

#[test]
fn pressure_runs_end_to_end_with_chosen_arms() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("pressure");
    let out = schedlab()
        .args([
            "scenario",
            "pressure",
            "--arms",
            "binpack,default",
            "--seeds",
            "2",
            "--first-seed",
            "5",
        ])
        .args(["--set", "nodes=10", "--jobs", "1", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(!stdout.contains("random"), "only the chosen arms: {stdout}");
    assert_complete_run(&out_dir, &["binpack", "default"], &[5, 6]);
}

#[test]
fn same_seed_gives_byte_identical_records_and_another_seed_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str, seed: &str| {
        let dir = tmp.path().join(name);
        let out = schedlab()
            .args([
                "scenario",
                "churn",
                "--arms",
                "default",
                "--seeds",
                "1",
                "--first-seed",
                seed,
            ])
            .args(["--set", "nodes=10", "--out"])
            .arg(&dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        fs::read(
            dir.join("runs/default")
                .join(format!("seed-{seed}"))
                .join("records.jsonl"),
        )
        .unwrap()
    };
    let a = run("a", "3");
    let b = run("b", "3");
    let c = run("c", "4");
    assert!(a == b, "same seed, same bytes");
    assert!(a != c, "another seed, other records");
}

fn assert_input_error(args: &[&str], out_dir: &Path, expected: &[&str]) {
    let out = schedlab().args(args).arg("--out").arg(out_dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "exit 2 for {args:?}; stderr: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for want in expected {
        assert!(stderr.contains(want), "{want:?} in: {stderr}");
    }
    assert!(!out_dir.exists(), "no run folder left for {args:?}");
}

#[test]
fn bad_input_exits_2_with_a_clear_message_and_no_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("never");
    assert_input_error(
        &["scenario", "no-such-scenario"],
        &out_dir,
        &["no-such-scenario", "churn", "pressure"],
    );
    assert_input_error(
        &["scenario", "churn", "--set", "no_such_param=3"],
        &out_dir,
        &["no_such_param", "nodes"],
    );
    assert_input_error(&["scenario", "churn", "--set", "nodes"], &out_dir, &["nodes"]);
    assert_input_error(
        &["scenario", "churn", "--arms", "default,magic"],
        &out_dir,
        &["magic", "binpack"],
    );
    // inputs that are not regular files are refused, not read without end
    // (a device) or waited on (a FIFO)
    let fifo = tmp.path().join("fifo");
    let have_fifo = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let mut endless = vec!["/dev/zero".to_string()];
    if have_fifo {
        endless.push(fifo.display().to_string());
    }
    for path in &endless {
        if !Path::new(path).exists() {
            continue;
        }
        assert_input_error(&["scenario", path], &out_dir, &[path, "not a regular file"]);
        assert_input_error(
            &["scenario", "churn", "--checkpoint", path],
            &out_dir,
            &["--checkpoint", "not a regular file"],
        );
        assert_input_error(
            &["scenario", "churn", "--cluster", "kube", "--kubeconfig", path],
            &out_dir,
            &[path, "not a regular file"],
        );
        assert_input_error(
            &["train", "--config", path],
            &out_dir,
            &["--config", "not a regular file"],
        );
    }
    // seeds past 2^64 - 1 do not wrap around to 0
    assert_input_error(
        &[
            "scenario",
            "churn",
            "--first-seed",
            "18446744073709551615",
            "--seeds",
            "2",
        ],
        &out_dir,
        &["--first-seed 18446744073709551615", "--seeds 2"],
    );

    let file = tmp.path().join("bad.yaml");
    let churn = workloads::builtins().iter().find(|b| b.name == "churn").unwrap().yaml;
    fs::write(&file, format!("{churn}\nno_such_field: 1\n")).unwrap();
    assert_input_error(
        &["scenario", file.to_str().unwrap()],
        &out_dir,
        &["bad.yaml", "no_such_field"],
    );
}

#[test]
fn refuses_to_write_into_a_folder_that_holds_files() {
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join("notes.txt"), "keep me").unwrap();
    let out = schedlab()
        .args(["scenario", "churn", "--seeds", "1", "--set", "nodes=10", "--out"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(fs::read_to_string(tmp.path().join("notes.txt")).unwrap(), "keep me");
    assert!(!tmp.path().join("INCOMPLETE").exists());
}

#[test]
fn an_unusable_kubeconfig_is_bad_input_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let missing = tmp.path().join("no-such-kubeconfig");
    let out = schedlab()
        .args(["scenario", "churn", "--cluster", "kube", "--kubeconfig"])
        .arg(&missing)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no-such-kubeconfig"), "{err}");
    assert!(!out_dir.exists(), "nothing written");

    // A kubeconfig pointing at a port nothing listens on: exit 2 within the client timeout.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = tmp.path().join("kubeconfig");
    fs::write(
        &config,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = schedlab()
        .args(["scenario", "churn", "--cluster", "kube", "--kubeconfig"])
        .arg(&config)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("unreachable") || err.contains("did not answer"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(!out_dir.exists(), "nothing written");

    let out = schedlab()
        .args([
            "scenario",
            "churn",
            "--cluster",
            "kube",
            "--context",
            "nope",
            "--kubeconfig",
        ])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("nope"));

    let out = schedlab()
        .args([
            "scenario",
            "churn",
            "--cluster",
            "kube",
            "--time-scale",
            "0",
            "--kubeconfig",
        ])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("--time-scale"));
}

#[test]
fn a_scenario_with_a_hundred_thousand_term_expression_runs() {
    // Such flat chains once overflowed the stack: SIGABRT, exit 134.
    let tmp = tempfile::tempdir().unwrap();
    let churn = workloads::builtins().iter().find(|b| b.name == "churn").unwrap().yaml;
    assert_eq!(churn.matches("count: ${round(nodes / 4)}").count(), 1);
    for (op, k) in [(" + ", "0"), (" - ", "0"), (" * ", "1"), (" / ", "1")] {
        let chain = format!("round(nodes / 4){}", format!("{op}{k}").repeat(100_000));
        let file = tmp.path().join("long.yaml");
        fs::write(
            &file,
            churn.replace("count: ${round(nodes / 4)}", &format!("count: ${{{chain}}}")),
        )
        .unwrap();
        let out_dir = tmp
            .path()
            .join(format!("run{}", op.trim()).replace('/', "div").replace('*', "mul"));
        let out = schedlab()
            .arg("scenario")
            .arg(&file)
            .args(["--arms", "default", "--seeds", "1", "--set", "nodes=8", "--out"])
            .arg(&out_dir)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{op}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let manifest = read_json(&out_dir.join("manifest.json"));
        assert_eq!(manifest["resolved_scenario"]["cluster"]["pools"][1]["count"], 2, "{op}");
    }
}
