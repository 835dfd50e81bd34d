//! End-to-end runs of `schedlab train` on tiny scenarios.
#![allow(clippy::unwrap_used)]

use assert_cmd::Command;
use std::fs;
use std::path::Path;

fn schedlab() -> Command {
    let mut cmd = Command::cargo_bin("schedlab").unwrap();
    cmd.env("RUST_LOG", "warn");
    cmd
}

fn train(out: &Path, extra: &[&str]) -> std::process::Output {
    schedlab()
        .args(["train", "--episodes", "2", "--set", "nodes=6", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn trains_a_loadable_checkpoint_and_writes_the_curve() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("train");
    // a warm-up of one transition so the two episodes also exercise the learner
    let config = tmp.path().join("config.json");
    fs::write(
        &config,
        r#"{"warmup": 1, "updates_per_episode": 3, "maddpg": {"batch_size": 8}}"#,
    )
    .unwrap();
    let out = train(&out_dir, &["--seed", "1234", "--config", config.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!out_dir.join("INCOMPLETE").exists(), "marker removed");

    let curve = fs::read_to_string(out_dir.join("training_curve.csv")).unwrap();
    let mut lines = curve.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    for column in [
        "episode",
        "scenario",
        "seed",
        "reward_mean",
        "critic_loss",
        "actor_loss",
        "score_mse",
        "lr",
        "noise",
    ] {
        assert!(header.contains(&column), "{column} in {header:?}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 2);

    // the probes it never learned from: before the first episode and after
    // the last, each training scenario (validation) and held-out built-in
    let validation = fs::read_to_string(out_dir.join("validation_curve.csv")).unwrap();
    let mut vlines = validation.lines();
    let vheader: Vec<&str> = vlines.next().unwrap().split(',').collect();
    let vcol = |name: &str| vheader.iter().position(|h| *h == name).unwrap();
    let points: Vec<(String, String, String, String)> = vlines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[vcol("trained_episodes")].to_string(),
                f[vcol("split")].to_string(),
                f[vcol("scenario")].to_string(),
                f[vcol("seed")].to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String, String, String)> = ["0", "2"]
        .iter()
        .flat_map(|done| {
            [
                ("validation", "pressure", "900000"),
                ("validation", "churn", "900001"),
                ("heldout", "mixed", "900"),
                ("heldout", "trace", "901"),
            ]
            .map(|(split, scenario, seed)| {
                (
                    done.to_string(),
                    split.to_string(),
                    scenario.to_string(),
                    seed.to_string(),
                )
            })
        })
        .collect();
    assert_eq!(points, expected);
    for l in validation.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let rmse_cost: f64 = f[vcol("rmse_cost")].parse().unwrap();
        assert!((0.0..=1.0).contains(&rmse_cost), "{l}");
        let cost: f64 = f[vcol("cost_usd")].parse().unwrap();
        assert!(cost > 0.0, "{l}");
    }
    let sidecar: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out_dir.join("checkpoint.json")).unwrap()).unwrap();
    let heads = &sidecar["training"]["validation"]["heads"];
    assert_eq!(sidecar["training"]["validation"]["after_episodes"], 2);
    assert!(
        heads["rmse"].as_array().unwrap().iter().all(|x| x.is_number()),
        "{heads}"
    );
    // the last point's RMSE is the tolerance the run ended selecting with,
    // and the one an evaluation of this checkpoint selects with
    let recorded: Vec<f64> = serde_json::from_value(sidecar["training"]["head_error"].clone()).unwrap();
    let measured: Vec<f64> = serde_json::from_value(heads["rmse"].clone()).unwrap();
    assert_eq!(recorded.len(), 3);
    for (r, m) in recorded.iter().zip(&measured) {
        assert!((r - m).abs() < 1e-6, "{recorded:?} {measured:?}");
    }
    // (f32 through JSON: equal to within a float's rounding)
    let loaded = meta_head_error(&out_dir).expect("the sidecar's head error");
    for (l, r) in loaded.iter().zip(&recorded) {
        assert!((f64::from(*l) - r).abs() < 1e-6, "{loaded:?} {recorded:?}");
    }
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    // default scenarios in turn, seeds SEED + e
    assert_eq!(rows[0][col("scenario")], "pressure");
    assert_eq!(rows[1][col("scenario")], "churn");
    assert_eq!(rows[0][col("seed")], "1234");
    assert_eq!(rows[1][col("seed")], "1235");
    for row in &rows {
        assert_eq!(row.len(), header.len());
        let reward: f64 = row[col("reward_mean")].parse().unwrap();
        assert!(reward.is_finite() && reward > 0.0, "{row:?}");
        let critic: f64 = row[col("critic_loss")].parse().unwrap();
        assert!(critic.is_finite() && critic >= 0.0, "the learner ran: {row:?}");
        let binds: u64 = row[col("binds")].parse().unwrap();
        assert!(binds > 0, "{row:?}");
    }

    let weights = out_dir.join("checkpoint.safetensors");
    let (net, meta) = scheduler::agmarl::checkpoint::load(&weights).unwrap();
    assert_eq!(meta.feature_schema_version, scheduler::agmarl::FEATURE_SCHEMA_VERSION);
    let training = &meta.training;
    assert_eq!(training["episodes"], 2);
    assert_eq!(training["seed"], 1234);
    assert_eq!(training["seeds"], serde_json::json!({"first": 1234, "last": 1235}));
    assert_eq!(training["scenarios"][0]["name"], "pressure");
    assert_eq!(training["scenarios"][1]["params"]["nodes"], 6);
    assert_eq!(training["config"]["updates_per_episode"], 3);
    assert_eq!(training["updates"], 6);
    assert!(training["git_revision"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(training["wall_seconds"].as_f64().is_some_and(|s| s > 0.0));
    // the weights are the trained ones, not a fresh network of the same seed
    let fresh = scheduler::agmarl::AgmarlNet::new(net.hyper(), 1234).unwrap();
    let obs = scheduler::agmarl::Observation {
        n: 2,
        node_features: vec![0.5; 2 * scheduler::agmarl::NODE_FEATURES],
        pod_features: vec![0.5; scheduler::agmarl::POD_FEATURES],
        queue: [0.25, 0.5],
        domains: vec![0, 1],
        domain_count: 2,
        domain_features: vec![0.5; 2 * scheduler::agmarl::features::DOMAIN_FEATURES],
    };
    assert_ne!(
        net.scores(&obs, &[0, 1], true).unwrap(),
        fresh.scores(&obs, &[0, 1], true).unwrap()
    );
}

#[test]
fn the_same_seed_trains_the_same_checkpoint() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("config.json");
    fs::write(
        &config,
        r#"{"warmup": 1, "updates_per_episode": 2, "maddpg": {"batch_size": 8}}"#,
    )
    .unwrap();
    let mut weights = Vec::new();
    for name in ["a", "b"] {
        let dir = tmp.path().join(name);
        let out = train(&dir, &["--scenario", "churn", "--config", config.to_str().unwrap()]);
        assert!(out.status.success(), "{}", stderr(&out));
        weights.push(fs::read(dir.join("checkpoint.safetensors")).unwrap());
    }
    assert_eq!(weights[0], weights[1]);
}

#[test]
fn evaluation_seeds_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("train");
    let out = train(&out_dir, &["--seed", "5"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("1000"), "{}", stderr(&out));
    assert!(!out_dir.exists(), "nothing written");
}

#[test]
fn bad_input_exits_2_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&[&str], &str); 3] = [
        (&["--scenario", "no-such-scenario"], "no-such-scenario"),
        (&["--set", "no_such_param=3"], "no_such_param"),
        (&["--set", "nodes"], "nodes"),
    ];
    for (i, (args, needle)) in cases.iter().enumerate() {
        let out_dir = tmp.path().join(format!("train-{i}"));
        let out = train(&out_dir, args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(needle), "{args:?}: {}", stderr(&out));
        assert!(!out_dir.exists(), "{args:?}: nothing written");
    }
    let config = tmp.path().join("bad.json");
    fs::write(&config, r#"{"maddpg": {"gamma": 1.5}}"#).unwrap();
    let out = train(
        &tmp.path().join("train-config"),
        &["--config", config.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("gamma"), "{}", stderr(&out));
}

/// `updates_per_episode: 1000000000` with `warmup: 0` trained for ever:
/// every training setting is bounded, and a value outside is refused naming
/// the file, the field, the value and the range.
#[test]
fn training_settings_outside_their_range_are_refused_naming_file_field_value_and_range() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        // a warmup the buffer can never reach (first: without the bound it
        // trains two short episodes and succeeds)
        (
            r#"{"warmup": 30, "replay_capacity": 20}"#,
            "warmup = 30: must be in 0..=20 (replay_capacity)",
        ),
        (
            r#"{"warmup": 0, "updates_per_episode": 1000000000}"#,
            "updates_per_episode = 1000000000: must be in 0..=10000",
        ),
        (
            r#"{"replay_capacity": 0}"#,
            "replay_capacity = 0: must be in 1..=1000000",
        ),
        (
            r#"{"horizon_secs": 40000000}"#,
            "horizon_secs = 40000000: must be in 1..=31622400",
        ),
        (
            r#"{"maddpg": {"batch_size": 100000}}"#,
            "maddpg.batch_size = 100000: must be in 1..=65536",
        ),
        (r#"{"noise": {"start": 3}}"#, "noise.start = 3: must be in [0, 1]"),
        (
            r#"{"hyper": {"embed_dim": 5000}}"#,
            "hyper.embed_dim = 5000: must be in 1..=4096",
        ),
    ];
    for (i, (json, want)) in cases.iter().enumerate() {
        let config = tmp.path().join(format!("config-{i}.json"));
        fs::write(&config, json).unwrap();
        let out_dir = tmp.path().join(format!("train-{i}"));
        let out = train(&out_dir, &["--config", config.to_str().unwrap()]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{json}: {err}");
        assert!(
            err.contains(&format!("--config {}: ", config.display())),
            "{json}: {err}"
        );
        assert!(err.contains(want), "{want:?} in {json}: {err}");
        assert!(!out_dir.exists(), "{json}: nothing written");
    }
}

/// Forwards the simulator's records to a tracker.
struct TrackerSink<'a>(&'a mut scheduler::agmarl::train::RealisedTracker);

impl schedlab_core::RecordSink for TrackerSink<'_> {
    fn record(&mut self, record: schedlab_core::Record) {
        self.0.observe(&record);
    }
}

#[test]
fn the_tracker_accounts_nodes_exactly_as_the_simulator() {
    for name in ["churn", "pressure"] {
        let scenario = workloads::load(name, &["nodes=8".to_string()]).unwrap();
        let seed = 1000;
        let mut sim = schedlab_core::sim::Sim::new(
            scenario.expand(seed),
            seed,
            schedlab_core::behaviour::ModelConfig::default(),
        )
        .unwrap();
        let mut policy = scheduler::baseline("default", seed).unwrap();
        let mut placer =
            |pod: &schedlab_core::PendingPod<'_>, view: &schedlab_core::ClusterView<'_>| policy.schedule(pod, view);
        let mut tracker = scheduler::agmarl::train::RealisedTracker::default();
        let end = sim.end();
        let mut realised = Vec::new();
        // compare along the way, not only at the end
        for step in 1..=10u64 {
            let until = schedlab_core::Time(end.as_millis() * step / 10);
            sim.run_until(until, &mut placer, &mut TrackerSink(&mut tracker));
            for node in sim.nodes() {
                assert_eq!(
                    tracker.node_load(node.id),
                    Some((node.requested, node.pod_count)),
                    "{name}: node {} at {until}",
                    node.id.0
                );
            }
            realised.extend(tracker.take_completed());
        }
        let summary = sim.finish(&mut placer, &mut TrackerSink(&mut tracker));
        realised.extend(tracker.take_completed());
        assert_eq!(tracker.open_count(), 0, "{name}: the End record settles everything");
        assert_eq!(realised.len() as u64, summary.binds, "{name}: one outcome per bind");
        assert!(
            realised
                .iter()
                .all(|r| r.metrics.iter().all(|m| (0.0..=1.0).contains(m))),
            "{name}: metrics in [0, 1]"
        );
        let failed = realised.iter().filter(|r| r.metrics[0] == 0.0).count();
        assert!(
            failed > 0 && failed < realised.len(),
            "{name}: {failed} of {} failed",
            realised.len()
        );
    }
}

/// The repository's held-out scenarios (`evaluations/heldout/*.yaml`).
fn heldout_scenarios() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../evaluations/heldout");
    let mut files: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn training_refuses_every_held_out_scenario() {
    let files = heldout_scenarios();
    assert!(files.len() >= 3, "a held-out family: {files:?}");
    let tmp = tempfile::tempdir().unwrap();
    for (i, file) in files.iter().enumerate() {
        let out_dir = tmp.path().join(format!("train-{i}"));
        let out = train(&out_dir, &["--scenario", file.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{}: {}", file.display(), stderr(&out));
        assert!(
            stderr(&out).contains("held-out"),
            "{}: {}",
            file.display(),
            stderr(&out)
        );
        assert!(!out_dir.exists(), "{}: nothing written", file.display());
        // the same file is a valid scenario for evaluation
        workloads::load(file.to_str().unwrap(), &[]).unwrap();
    }
    // beside a built-in, too: the whole command is refused before any episode
    let out_dir = tmp.path().join("mixed");
    let out = train(
        &out_dir,
        &["--scenario", "churn", "--scenario", files[0].to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!out_dir.exists());
}

#[test]
fn a_held_out_file_is_refused_before_it_is_read() {
    // a marked folder, a subfolder, and a file that is not even YAML: were
    // it read, the error would be a parse error
    let tmp = tempfile::tempdir().unwrap();
    fs::write(tmp.path().join(".heldout"), "held out\n").unwrap();
    fs::create_dir(tmp.path().join("deeper")).unwrap();
    let file = tmp.path().join("deeper/secret.yaml");
    fs::write(&file, "{{{ not yaml").unwrap();
    let out_dir = tmp.path().join("train");
    let out = train(&out_dir, &["--scenario", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("held-out"), "{}", stderr(&out));
    // the same file outside a marked folder is read (and rejected as YAML)
    let other = tempfile::tempdir().unwrap();
    let copy = other.path().join("secret.yaml");
    fs::copy(&file, &copy).unwrap();
    let out = train(&other.path().join("train"), &["--scenario", copy.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!stderr(&out).contains("held-out"), "{}", stderr(&out));
}

#[test]
fn a_variant_trains_as_itself_and_an_unknown_one_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("nognn");
    let out = train(&out_dir, &["--variant", "agmarl-nognn"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let sidecar: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out_dir.join("checkpoint.json")).unwrap()).unwrap();
    assert_eq!(sidecar["training"]["config"]["policy"]["variant"], "agmarl-nognn");
    let (_, meta) = scheduler::agmarl::load(&out_dir.join("checkpoint.safetensors")).unwrap();
    assert_eq!(meta.trained_variant(), Some(scheduler::agmarl::Variant::NoGnn));

    let bad = tmp.path().join("bad");
    let out = train(&bad, &["--variant", "agmarl-fast"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("agmarl-fast"), "{}", stderr(&out));
    assert!(!bad.exists());
    // the controls are never trained
    for control in ["agmarl-untrained", "agmarl-analytic"] {
        let out = train(&bad, &["--variant", control]);
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(
            stderr(&out).contains(control) && stderr(&out).contains("never trained"),
            "{}",
            stderr(&out)
        );
        assert!(!bad.exists());
    }
}

#[test]
fn heads_measures_each_score_source_and_refuses_nothing_to_measure() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("heads");
    let out = schedlab()
        .args([
            "heads",
            "--scenario",
            "churn",
            "--set",
            "nodes=6",
            "--seeds",
            "2",
            "--first-seed",
            "900",
        ])
        .args(["--init-seed", "1000", "--analytic", "--out"])
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = fs::read_to_string(out_dir.join("heads.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let cells: Vec<(&str, &str)> = rows.iter().map(|r| (r[col("model")], r[col("scenario")])).collect();
    assert_eq!(
        cells,
        [
            ("agmarl-untrained init 1000", "churn"),
            ("agmarl-untrained init 1000", "(all)"),
            ("agmarl-analytic", "churn"),
            ("agmarl-analytic", "(all)")
        ]
    );
    for r in &rows {
        let placements: u64 = r[col("placements")].parse().unwrap();
        assert!(placements > 0, "{r:?}");
        let rmse: f64 = r[col("rmse_cost")].parse().unwrap();
        assert!((0.0..=1.0).contains(&rmse), "{r:?}");
    }
    // one scenario: its row and the total agree
    assert_eq!(rows[0][col("placements")], rows[1][col("placements")]);
    assert!(!out_dir.join("INCOMPLETE").exists());

    let none = schedlab().args(["heads", "--scenario", "churn"]).output().unwrap();
    assert_eq!(none.status.code(), Some(2), "{}", stderr(&none));
    assert!(stderr(&none).contains("nothing to measure"), "{}", stderr(&none));
}

/// What an evaluation of the checkpoint in `dir` selects with.
fn meta_head_error(dir: &std::path::Path) -> Option<[f32; 3]> {
    let (_, meta) = scheduler::agmarl::checkpoint::load(&dir.join("checkpoint.safetensors")).unwrap();
    meta.head_rmse()
}

/// Whether any process's command line names `needle`.
fn a_process_names(needle: &str) -> bool {
    let Ok(entries) = fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        fs::read(e.path().join("cmdline"))
            .map(|c| String::from_utf8_lossy(&c).contains(needle))
            .unwrap_or(false)
    })
}

#[cfg(target_os = "linux")]
#[test]
fn a_signal_to_train_stops_the_training_and_the_folder_stays_incomplete() {
    use nix::sys::signal::{Signal, kill};
    use nix::unistd::Pid;
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("killed-train");
    // long enough that it is still training when the signal comes
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .env("RUST_LOG", "warn")
        .env_remove("RAYON_NUM_THREADS")
        .env_remove("CANDLE_NUM_THREADS")
        .args(["train", "--episodes", "10000", "--set", "nodes=6", "--out"])
        .arg(&out_dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !out_dir.join("training_curve.csv").exists() {
        assert!(started.elapsed().as_secs() < 120, "training never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    kill(Pid::from_raw(child.id() as i32), Signal::SIGTERM).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.signal(), Some(Signal::SIGTERM as i32), "{status:?}");
    // nothing trains on under another pid, and the folder does not say complete
    let needle = out_dir.display().to_string();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(!a_process_names(&needle), "a process still names {needle}");
    assert!(out_dir.join("INCOMPLETE").exists());
    assert!(!out_dir.join("checkpoint.safetensors").exists());
}
