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
            // the run's manifest ties its records to it
            assert_eq!(run["manifest_version"], results::run_folder::MANIFEST_VERSION);
            assert_eq!(
                run["records_sha256"],
                schedlab_core::digest::sha256_hex(records.as_bytes()),
                "{arm}/{seed}"
            );
        }
    }
    assert_eq!(manifest["manifest_version"], results::run_folder::MANIFEST_VERSION);
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
    for metric in ["cost_usd", "restarts", "failure_rate", "pending_time_mean_s"] {
        assert!(stdout.contains(metric), "{metric} row in: {stdout}");
    }
    assert!(stdout.contains('±'), "mean ± CI cells: {stdout}");
    // the headline and key tables fit a terminal; the full table is named
    for line in stdout.lines() {
        assert!(
            line.chars().count() <= 120,
            "a line of {} columns: {line}",
            line.chars().count()
        );
    }
    assert!(stdout.contains("report.md, or --all-metrics"), "{stdout}");
    // --all-metrics prints every row: the latency rows are not key metrics
    let report = schedlab()
        .args(["report", "--all-metrics", "--out"])
        .arg(tmp.path().join("again"))
        .arg(&out_dir)
        .output()
        .unwrap();
    let full = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    assert!(
        full.contains("sched_latency_p99_s") && !stdout.contains("sched_latency_p99_s"),
        "{full}"
    );
    assert_complete_run(&out_dir, &["default", "binpack", "random", "agmarl"], &[1, 2]);
    let manifest = read_json(&out_dir.join("manifest.json"));
    assert_eq!(
        manifest["checkpoint"], "bundled",
        "the agmarl arm used the bundled checkpoint"
    );
    // the default arms: the baselines, agmarl and its two controls
    let facts = &manifest["arm_facts"];
    let arms: Vec<&str> = manifest["arms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(
        arms.ends_with(&["agmarl", "agmarl-untrained", "agmarl-analytic"]),
        "{arms:?}"
    );
    assert_eq!(facts.as_object().unwrap().len(), arms.len(), "{facts}");
    let fact = |arm: &str| facts[arm].clone();
    assert_eq!(
        fact("default"),
        serde_json::json!({"preempts": true, "control": null, "variant": null, "training_run": null})
    );
    assert_eq!(fact("random")["preempts"], false);
    assert_eq!(
        fact("agmarl"),
        serde_json::json!({"preempts": true, "control": null, "variant": "agmarl", "training_run": "seed:1000"})
    );
    assert_eq!(
        fact("agmarl-untrained"),
        serde_json::json!({"preempts": true, "control": "untrained", "variant": "agmarl", "training_run": "init:1000"})
    );
    assert_eq!(
        fact("agmarl-analytic"),
        serde_json::json!({"preempts": true, "control": "analytic", "variant": "agmarl", "training_run": null})
    );
}

#[test]
fn the_controls_take_the_init_seed_and_the_settings_not_the_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("off.json");
    fs::write(&config, r#"{"preemption": false}"#).unwrap();
    let run = |name: &str, init_seed: &str| {
        let out_dir = tmp.path().join(name);
        let out = schedlab()
            .args(["scenario", "churn", "--seeds", "1", "--set", "nodes=6"])
            .args(["--arms", "default,agmarl-untrained,agmarl-analytic,agmarl-nognn"])
            .args(["--init-seed", init_seed])
            .arg("--agmarl-config")
            .arg(&config)
            .arg("--out")
            .arg(&out_dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        out_dir
    };
    let a = run("a", "5000");
    let manifest = read_json(&a.join("manifest.json"));
    let facts = &manifest["arm_facts"];
    assert_eq!(facts["agmarl-untrained"]["training_run"], "init:5000");
    // preemption off for every agmarl arm, not for default
    assert_eq!(facts["default"]["preempts"], true);
    for arm in ["agmarl-untrained", "agmarl-analytic", "agmarl-nognn"] {
        assert_eq!(facts[arm]["preempts"], false, "{arm}: {facts}");
    }
    assert_eq!(facts["agmarl-nognn"]["variant"], "agmarl-nognn");
    let records = |dir: &Path, arm: &str| fs::read(dir.join("runs").join(arm).join("seed-1/records.jsonl")).unwrap();
    // another init seed is another network; the analytic control has none
    let b = run("b", "5001");
    assert!(records(&a, "agmarl-untrained") != records(&b, "agmarl-untrained"));
    assert!(records(&a, "agmarl-analytic") == records(&b, "agmarl-analytic"));
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
fn a_checkpoint_of_another_variant_and_agmarl_inputs_no_arm_reads_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("never");
    let nognn = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scheduler/checkpoints/agmarl-nognn.safetensors");
    let nognn = nognn.to_str().unwrap();
    assert_input_error(
        &[
            "scenario",
            "churn",
            "--arms",
            "agmarl,agmarl-linear,agmarl-nognn",
            "--checkpoint",
            nognn,
        ],
        &out_dir,
        &["trained as agmarl-nognn", "lists agmarl and agmarl-linear"],
    );
    assert_input_error(
        &["scenario", "churn", "--arms", "default,binpack", "--checkpoint", nognn],
        &out_dir,
        &["--checkpoint", "--arms lists none"],
    );
    let config = tmp.path().join("off.json");
    fs::write(&config, r#"{"preemption": false}"#).unwrap();
    let config = config.to_str().unwrap();
    assert_input_error(
        &["scenario", "churn", "--arms", "default", "--agmarl-config", config],
        &out_dir,
        &["--agmarl-config", "--arms lists none"],
    );
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
    assert_input_error(
        &["scenario", "churn", "--arms", "default,agmarl", "--init-seed", "5000"],
        &out_dir,
        &["--init-seed 5000", "agmarl-untrained"],
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

/// `--jobs 100000` with as many runs panicked "failed to spawn thread".
#[test]
fn jobs_past_the_maximum_are_refused_and_the_maximum_plays() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("never");
    for jobs in ["257", "100000"] {
        assert_input_error(
            &["scenario", "churn", "--seeds", "1", "--set", "nodes=8", "--jobs", jobs],
            &out_dir,
            &[&format!("--jobs {jobs}"), "at most 256", "1..=256"],
        );
    }
    // the maximum is taken, and no more threads than runs are started
    let out_dir = tmp.path().join("max");
    let out = schedlab()
        .args([
            "scenario", "churn", "--seeds", "2", "--arms", "default", "--set", "nodes=8",
        ])
        .args(["--jobs", "256", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_complete_run(&out_dir, &["default"], &[1, 2]);
}

/// `cluster status --state /dev/null` exited 1, as if reading the pid files
/// had failed: a state folder that is a file or a device is bad input.
#[test]
fn a_state_folder_that_is_not_a_folder_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("a-file");
    fs::write(&file, "not a folder").unwrap();
    let under = file.join("state");
    let mut cases = vec![(file.clone(), format!("--state {}: not a folder", file.display()))];
    cases.push((
        under.clone(),
        format!(
            "--state {}: not a folder ({} is not a folder)",
            under.display(),
            file.display()
        ),
    ));
    if Path::new("/dev/null").exists() {
        cases.push(("/dev/null".into(), "--state /dev/null: not a folder".into()));
    }
    for (state, want) in &cases {
        for action in ["status", "down"] {
            let out = schedlab()
                .args(["cluster", action, "--local", "--state"])
                .arg(state)
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{action} {}: {err}", state.display());
            assert!(err.contains(want), "{want:?} in {err}");
        }
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "not a folder");
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

    // A credential plugin that never answers: exit 2 within the 10 s client
    // timeout, naming the plugin, and the plugin is not left running.
    let pid_file = tmp.path().join("plugin.pid");
    let hung = tmp.path().join("hung-kubeconfig");
    fs::write(
        &hung,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\nusers:\n- name: u\n  user:\n    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: /bin/sh\n      args: [\"-c\", \"sleep 300 & echo $! > {}; wait\"]\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n",
            pid_file.display()
        ),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let out = schedlab()
        .args(["scenario", "churn", "--cluster", "kube", "--kubeconfig"])
        .arg(&hung)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("credential plugin /bin/sh did not answer"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert!(!out_dir.exists(), "nothing written");
    let child: u32 = fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    let alive = || {
        fs::read_to_string(format!("/proc/{child}/stat"))
            .is_ok_and(|stat| !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while alive() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!alive(), "the credential plugin's child {child} was left running");

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

/// `KUBECONFIG=/dev/zero` reached 4.2 GB: the kubeconfigs found through
/// KUBECONFIG or ~/.kube/config get the checks `--kubeconfig` has.
#[test]
fn kubeconfigs_found_by_kubeconfig_or_home_are_checked_like_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    let big = tmp.path().join("big-kubeconfig");
    fs::write(&big, vec![b'#'; (4 << 20) + 1]).unwrap();
    let folder = tmp.path().join("a-folder");
    fs::create_dir(&folder).unwrap();
    let run = |kubeconfig: Option<&Path>, home: &Path| {
        let mut cmd = schedlab();
        cmd.args(["scenario", "churn", "--cluster", "kube", "--out"])
            .arg(&out_dir)
            .env("HOME", home)
            .env_remove("KUBECONFIG");
        if let Some(k) = kubeconfig {
            cmd.env("KUBECONFIG", k);
        }
        let out = cmd.output().unwrap();
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    for (bad, why) in [(&big, "larger than the cap of 4 MiB"), (&folder, "not a regular file")] {
        let (code, err) = run(Some(bad), tmp.path());
        assert_eq!(code, Some(2), "{err}");
        assert!(err.contains(&format!("kubeconfig {}: {why}", bad.display())), "{err}");
        assert!(!out_dir.exists(), "nothing written");
    }
    // ~/.kube/config when KUBECONFIG is unset
    let home = tmp.path().join("home");
    fs::create_dir_all(home.join(".kube")).unwrap();
    fs::copy(&big, home.join(".kube/config")).unwrap();
    let (code, err) = run(None, &home);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(".kube/config: larger than the cap of 4 MiB"), "{err}");
    assert!(!out_dir.exists(), "nothing written");
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

/// `schedlab scenario churn` of `default` on one seed with `extra` flags, writing to `out`.
fn churn_once(extra: &[&str], out: &Path) -> std::process::Output {
    schedlab()
        .args(["scenario", "churn", "--arms", "default", "--seeds", "1"])
        .args(extra)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap()
}

#[test]
fn a_scenario_over_the_records_budget_is_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("year");
    let started = std::time::Instant::now();
    let out = churn_once(&["--set", "duration=366d"], &out_dir);
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("GB of records") && err.contains("sample_interval") && err.contains("--max-records-gib"),
        "{err}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert!(!out_dir.exists(), "nothing written");

    // the budget is a flag: a tiny one refuses the default churn, a bad one is named
    let out = churn_once(&["--max-records-gib", "0.001"], &out_dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(!out_dir.exists());
    let out = churn_once(&["--max-records-gib", "0"], &out_dir);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("--max-records-gib"));
    // raised deliberately, a scenario past the default budget runs (small, so the test stays quick)
    let out = churn_once(
        &["--set", "nodes=4", "--max-records-gib", "0.01"],
        &tmp.path().join("small"),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn flags_the_backend_would_ignore_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("run");
    let cases: &[(&[&str], &str)] = &[
        (
            &["--kubeconfig", "k.yaml"],
            "--kubeconfig is for --cluster kube|gke, not sim",
        ),
        (&["--context", "x"], "--context is for --cluster kube|gke, not sim"),
        (
            &["--time-scale", "10"],
            "--time-scale is for --cluster local|kube|kind|gke, not sim",
        ),
        (&["--qps", "50"], "--qps is for"),
        (&["--kind-name", "other"], "--kind-name is for --cluster kind, not sim"),
        (
            &["--cluster", "local", "--zone", "z"],
            "--zone is for --cluster gke, not local",
        ),
        (
            &["--cluster", "kube", "--kind-fault", "pause"],
            "--kind-fault is for --cluster kind, not kube",
        ),
        (&["--repo", "elsewhere"], "--repo is for --cluster kind|gke"),
        // a scheduler already in a cluster: the simulator has none; a name no pod can carry; a built-in's name
        (
            &["--arms", "external:my-scheduler"],
            "--arms external:my-scheduler: an external arm is a scheduler already running in a cluster",
        ),
        (&["--arms", "external:My_Scheduler"], "is not a scheduler name"),
        (&["--arms", "external:binpack"], "is the name of a built-in arm"),
    ];
    for (flags, needle) in cases {
        let out = churn_once(flags, &out_dir);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}: {err}");
        assert!(err.contains(needle), "{flags:?}: {err}");
        assert!(!out_dir.exists(), "{flags:?}: nothing written");
    }
}

#[test]
fn an_unusable_out_is_bad_input_naming_out() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("afile");
    fs::write(&file, "mine").unwrap();
    for out in [file.clone(), file.join("below")] {
        let res = churn_once(&[], &out);
        let err = String::from_utf8(res.stderr).unwrap();
        assert_eq!(res.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("--out {}", out.display())), "{err}");
    }
    assert_eq!(fs::read_to_string(&file).unwrap(), "mine");
}

#[test]
fn log_lines_carry_no_colour_codes_when_stderr_is_not_a_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let out = schedlab()
        .env("RUST_LOG", "info")
        .args([
            "scenario", "churn", "--seeds", "1", "--arms", "default", "--set", "nodes=4", "--out",
        ])
        .arg(tmp.path().join("run"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("INFO"), "logs were written: {err}");
    assert!(!err.contains('\u{1b}'), "no ANSI escapes: {err:?}");
}

#[test]
fn agmarl_config_steers_the_agmarl_arms_and_is_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |name: &str, config: &str| {
        let file = tmp.path().join(format!("{name}.json"));
        fs::write(&file, config).unwrap();
        let out_dir = tmp.path().join(name);
        let out = schedlab()
            .args([
                "scenario",
                "churn",
                "--seeds",
                "1",
                "--arms",
                "default,agmarl",
                "--set",
                "nodes=6",
            ])
            .arg("--agmarl-config")
            .arg(&file)
            .arg("--out")
            .arg(&out_dir)
            .output()
            .unwrap();
        (out, out_dir)
    };
    // restraint at every level and below any baseline's mean: it must decline
    let eager = r#"{"restraint": {"rule": "threshold", "min_level": "calm", "risk_margin": 0, "min_baseline_binds": 1,
                    "unstable_ratio": 0, "min_pods_observed": 0}}"#;
    let (out, dir) = run("eager", eager);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = read_json(&dir.join("summary.json"));
    let declined = |arm: &str| {
        summary["arms"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["arm"] == arm)
            .unwrap()["metrics"]["pods_declined"]["mean"]
            .as_f64()
            .unwrap()
    };
    assert!(declined("agmarl") > 0.0, "{summary}");
    assert_eq!(declined("default"), 0.0);
    let manifest = read_json(&dir.join("manifest.json"));
    assert_eq!(manifest["agmarl_config"]["restraint"]["min_level"], "calm");
    // restraint off: no decline
    let (out, dir) = run("off", r#"{"restraint": {"enabled": false}}"#);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let summary = read_json(&dir.join("summary.json"));
    let agmarl = summary["arms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["arm"] == "agmarl")
        .unwrap()
        .clone();
    assert_eq!(agmarl["metrics"]["pods_declined"]["mean"], 0.0);
    // bad settings are named
    for (name, bad, needle) in [
        ("typo", r#"{"restraint": {"enable": false}}"#, "enable"),
        ("range", r#"{"delta_lex": 3}"#, "delta_lex"),
    ] {
        let (out, dir) = run(name, bad);
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--agmarl-config") && err.contains(needle), "{err}");
        assert!(!dir.exists());
    }
}

/// Phrases that address a program embedding a library, not the person
/// running schedlab.
const LIBRARY_TEXT: [&str; 8] = [
    "from_str_multiple",
    "configured policy",
    "budget breached",
    "expected struct",
    "elements",
    "ServiceError",
    "client error (Connect)",
    "kube_client",
];

fn assert_no_library_text(stderr: &str) {
    for phrase in LIBRARY_TEXT {
        assert!(!stderr.contains(phrase), "{phrase:?} in: {stderr}");
    }
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
}

#[test]
fn library_text_never_reaches_the_user() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("never");
    let base = "name: x\nduration: 10m\ncluster:\n  pools:\n    - name: a\n      count: 1\n      capacity: {cpu: 4, memory: 8Gi}\n      machine_type: m\n      hourly_price: 0.1\n";
    let cases = [
        (
            "two-documents.yaml",
            format!("{base}---\n{base}"),
            "a second YAML document",
        ),
        (
            "nan.yaml",
            base.replace("hourly_price: 0.1", "hourly_price: .nan"),
            "`.nan` is not a finite number",
        ),
        (
            // 28,800 phases of 9 values, 25,600 of them aliases: the budget a
            // file without aliases is read with is its size
            "many-values.yaml",
            format!(
                "{base}phases: [{}]\n",
                (0..3200)
                    .map(|i| format!(
                        "&a{i} {{at: 1s, create: {{template: a, count: 1}}}}, {}",
                        vec![format!("*a{i}"); 8].join(", ")
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            "more than 250000 YAML values",
        ),
    ];
    for (name, text, words) in cases {
        let file = tmp.path().join(name);
        fs::write(&file, text).unwrap();
        let out = schedlab()
            .arg("scenario")
            .arg(&file)
            .arg("--out")
            .arg(&out_dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains(words) && stderr.contains(name), "{name}: {stderr}");
        assert_no_library_text(&stderr);
        assert!(!out_dir.exists());
    }

    // a run folder whose manifest is an array
    let run = tmp.path().join("run");
    let out = schedlab()
        .args([
            "scenario", "churn", "--seeds", "1", "--arms", "default", "--set", "nodes=4", "--out",
        ])
        .arg(&run)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    fs::write(run.join("manifest.json"), "[1, 2, 3]").unwrap();
    let out = schedlab()
        .arg("report")
        .arg(&run)
        .arg("--out")
        .arg(tmp.path().join("rep"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("manifest.json") && stderr.contains("holds a JSON array"),
        "{stderr}"
    );
    assert_no_library_text(&stderr);
}

/// A kubeconfig for a server at `port` that skips certificate checks.
fn kubeconfig_for(dir: &Path, port: u16) -> std::path::PathBuf {
    let path = dir.join(format!("kubeconfig-{port}"));
    fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:{port}\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n"
        ),
    )
    .unwrap();
    path
}

#[test]
fn servers_that_hang_up_or_stay_silent_are_named_in_the_users_words() {
    let tmp = tempfile::tempdir().unwrap();
    // one server hangs up on every connection, the other accepts and never speaks
    let hangs_up = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (hangs_up_port, silent_port) = (
        hangs_up.local_addr().unwrap().port(),
        silent.local_addr().unwrap().port(),
    );
    std::thread::spawn(move || {
        for conn in hangs_up.incoming() {
            drop(conn);
        }
    });
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in silent.incoming() {
            held.push(conn);
        }
    });
    let run = |port: u16| {
        // the default log filter, as a user without RUST_LOG has it
        let out = schedlab()
            .env_remove("RUST_LOG")
            .args(["scenario", "churn", "--cluster", "kube", "--kubeconfig"])
            .arg(kubeconfig_for(tmp.path(), port))
            .arg("--out")
            .arg(tmp.path().join("never"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8(out.stderr).unwrap()
    };
    let stderr = run(hangs_up_port);
    assert!(
        stderr.contains("the TLS handshake with it failed") || stderr.contains("it closed the connection"),
        "{stderr}"
    );
    assert_no_library_text(&stderr);
    let stderr = run(silent_port);
    assert!(stderr.contains("did not answer within 10s"), "{stderr}");
    assert_no_library_text(&stderr);
}

/// kube-scheduler's default profile written out (scheduler/tests/profiles).
fn golden_profile(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scheduler/tests/profiles")
        .join(name)
}

#[test]
fn a_kube_scheduler_configuration_file_is_an_arm_and_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    let default_file = golden_profile("default.yaml");
    let no_preemption = tmp.path().join("no-preemption.yaml");
    fs::write(
        &no_preemption,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    \
         postFilter:\n      disabled: [{name: DefaultPreemption}]\n    score:\n      enabled: [{name: \
         TaintToleration, weight: 3}]\n",
    )
    .unwrap();
    let out_dir = tmp.path().join("run");
    let out = schedlab()
        .args(["scenario", "churn", "--seeds", "1", "--set", "nodes=8", "--arms"])
        .arg(format!(
            "default,profile:written={},profile:{}",
            default_file.display(),
            no_preemption.display()
        ))
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_complete_run(&out_dir, &["default", "written", "no-preemption"], &[1]);
    let records = |arm: &str| fs::read(out_dir.join("runs").join(arm).join("seed-1/records.jsonl")).unwrap();
    assert!(
        records("default") == records("written"),
        "the default profile written out runs as default"
    );
    assert!(records("default") != records("no-preemption"));

    let manifest = read_json(&out_dir.join("manifest.json"));
    let written = &manifest["profile_files"]["written"];
    assert_eq!(written["file"], default_file.display().to_string());
    let bytes = fs::read(&default_file).unwrap();
    assert_eq!(
        written["sha256"].as_str(),
        Some(schedlab_core::digest::sha256_hex(&bytes).as_str())
    );
    assert_eq!(written["scheduler_name"], "default-scheduler");
    assert_eq!(written["profile"]["name"], "written");
    assert_eq!(written["profile"]["release"], "v1.20");
    assert_eq!(written["profile"]["preemption"], true);
    let other = &manifest["profile_files"]["no-preemption"]["profile"];
    assert_eq!(other["preemption"], false);
    let weights: Vec<(String, i64)> = other["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let plugin = &s["plugin"];
            let name = plugin.as_str().map_or_else(
                || plugin.as_object().unwrap().keys().next().unwrap().clone(),
                str::to_string,
            );
            (name, s["weight"].as_i64().unwrap())
        })
        .collect();
    assert!(weights.contains(&("TaintToleration".to_string(), 3)), "{weights:?}");
    assert_eq!(manifest["arm_facts"]["written"]["preempts"], true);
    assert_eq!(manifest["arm_facts"]["no-preemption"]["preempts"], false);
    assert!(manifest.get("profile_files").is_some());
}

#[test]
fn a_bad_configuration_file_exits_2_naming_the_file_and_field_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("never");
    let head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "unknown-plugin.yaml",
            "profiles:\n- plugins:\n    score:\n      enabled: [{name: Coscheduling}]\n",
            &[
                "profiles[0].plugins.score.enabled[0].name",
                "unknown plugin \"Coscheduling\"",
                "the simulator models NodeUnschedulable",
            ],
        ),
        (
            "weight.yaml",
            "profiles:\n- plugins:\n    score:\n      enabled: [{name: NodeResourcesFit, weight: 101}]\n",
            &[
                "profiles[0].plugins.score.enabled[0].weight",
                "101 is out of range",
                "1..=100",
            ],
        ),
        (
            "twice.yaml",
            "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{name: ImageLocality}, {name: ImageLocality}]\n",
            &[
                "profiles[0].plugins.multiPoint.enabled[1].name",
                "ImageLocality is listed twice",
            ],
        ),
        (
            "ignored-arg.yaml",
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args: {ignoredResourceGroups: [example.com]}\n",
            &[
                "profiles[0].pluginConfig[0].args.ignoredResourceGroups",
                "unknown field",
            ],
        ),
        (
            "two.yaml",
            "profiles: [{schedulerName: a}, {schedulerName: b}]\n",
            &["profiles: 2 profiles"],
        ),
    ];
    for (name, body, want) in cases {
        let file = tmp.path().join(name);
        fs::write(&file, format!("{head}{body}")).unwrap();
        let arm = format!("default,profile:{}", file.display());
        let mut expected = vec![file.to_str().unwrap()];
        expected.extend_from_slice(want);
        assert_input_error(&["scenario", "churn", "--arms", &arm], &out_dir, &expected);
    }
    let beta = tmp.path().join("beta.yaml");
    fs::write(
        &beta,
        "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n",
    )
    .unwrap();
    let arm = format!("profile:{}", beta.display());
    assert_input_error(
        &["scenario", "churn", "--arms", &arm],
        &out_dir,
        &[
            beta.to_str().unwrap(),
            "apiVersion",
            "v1beta3",
            "only \"kubescheduler.config.k8s.io/v1\"",
        ],
    );
    let missing = tmp.path().join("missing.yaml");
    let arm = format!("profile:{}", missing.display());
    assert_input_error(
        &["scenario", "churn", "--arms", &arm],
        &out_dir,
        &[missing.to_str().unwrap()],
    );
    let arm = format!("profile:binpack={}", golden_profile("binpack.yaml").display());
    assert_input_error(
        &["scenario", "churn", "--arms", &arm],
        &out_dir,
        &["the arm name \"binpack\" is a built-in arm's"],
    );
    let arm = format!("profile:{}", golden_profile("binpack.yaml").display());
    assert_input_error(
        &["scenario", "churn", "--arms", &arm],
        &out_dir,
        &["the arm name \"binpack\" is a built-in arm's", "profile:NAME="],
    );
    // the simulator only: a real cluster is refused before it is connected
    let arm = format!("profile:mine={}", golden_profile("default.yaml").display());
    assert_input_error(
        &["scenario", "churn", "--cluster", "local", "--arms", &arm],
        &out_dir,
        &["--cluster sim only", "default.yaml"],
    );
}
