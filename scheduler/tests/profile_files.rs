//! Golden configuration files (`tests/profiles/`) run exactly as the built-in
//! arms they spell out: kube-scheduler's default profile written as a
//! `KubeSchedulerConfiguration` as `default`, its MostAllocated bin-packing
//! configuration as `binpack`. Each pair plays the same scenarios and seeds
//! in the simulator, and their records are compared byte for byte.

use schedlab_core::Record;
use schedlab_core::sim::Sim;
use scheduler::Scheduler;
use scheduler::profile::Cycle;
use scheduler::profile::file::parse;

const SCENARIOS: &[(&str, &[&str])] = &[("churn", &["nodes=8"]), ("pressure", &["nodes=8"])];
const SEEDS: [u64; 2] = [1, 2];

/// The records of `scenario` played with `policy` on `seed`, as JSON lines.
fn play(scenario: &str, set: &[&str], seed: u64, mut policy: Box<dyn Scheduler>) -> String {
    let set: Vec<String> = set.iter().map(|s| s.to_string()).collect();
    let scenario = workloads::load(scenario, &set).expect("a built-in scenario");
    let sim = Sim::new(scenario.expand(seed), seed, Default::default()).expect("a valid timeline");
    let mut records: Vec<Record> = Vec::new();
    let mut placer =
        |pod: &schedlab_core::PendingPod<'_>, view: &schedlab_core::ClusterView<'_>| policy.schedule(pod, view);
    sim.finish(&mut placer, &mut records);
    records
        .iter()
        .map(|r| serde_json::to_string(r).expect("records serialise") + "\n")
        .collect()
}

fn file_profile(file: &str) -> scheduler::profile::Profile {
    let path = format!("{}/tests/profiles/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("a golden file");
    match parse(&path, "file", &text) {
        Ok((profile, _)) => profile,
        Err(e) => panic!("{e}"),
    }
}

/// The records of every scenario and seed, for the file and for the arm.
fn both(file: &str, arm: &str) -> Vec<(String, String, String)> {
    let profile = file_profile(file);
    let mut out = Vec::new();
    for (scenario, set) in SCENARIOS {
        for seed in SEEDS {
            let from_file = play(scenario, set, seed, Box::new(Cycle::new(profile, seed)));
            let built_in = play(scenario, set, seed, scheduler::arm(arm, seed).expect("a built-in arm"));
            out.push((format!("{scenario} seed {seed}"), from_file, built_in));
        }
    }
    out
}

#[test]
fn the_default_profile_written_out_runs_as_default() {
    for (run, from_file, built_in) in both("default.yaml", "default") {
        assert!(from_file.lines().count() > 100, "{run}: too few records to tell");
        assert!(
            from_file == built_in,
            "{run}: default.yaml decided otherwise than `default`"
        );
    }
}

#[test]
fn most_allocated_written_out_runs_as_binpack() {
    for (run, from_file, built_in) in both("binpack.yaml", "binpack") {
        assert!(
            from_file == built_in,
            "{run}: binpack.yaml decided otherwise than `binpack`"
        );
    }
}

#[test]
fn the_comparison_tells_the_two_files_apart() {
    // what makes the two tests above worth something: the files' records differ
    let default = file_profile("default.yaml");
    let binpack = file_profile("binpack.yaml");
    let (scenario, set) = SCENARIOS[0];
    let a = play(scenario, set, 1, Box::new(Cycle::new(default, 1)));
    let b = play(scenario, set, 1, Box::new(Cycle::new(binpack, 1)));
    assert!(a != b, "default.yaml and binpack.yaml played alike");
}

#[test]
fn the_book_example_is_read_as_it_says() {
    let arms =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/src/arms.md")).expect("docs/src/arms.md");
    let after = arms
        .split_once("- `--arms profile:FILE`")
        .expect("the book's profile file entry (docs/src/arms.md)")
        .1;
    let yaml: String = after
        .lines()
        .skip_while(|l| l.trim() != "```yaml")
        .skip(1)
        .take_while(|l| l.trim() != "```")
        .map(|l| format!("{}\n", l.strip_prefix("  ").unwrap_or(l)))
        .collect();
    let (profile, name) = match parse("docs/src/arms.md", "packed", &yaml) {
        Ok(read) => read,
        Err(e) => panic!("{e}\n{yaml}"),
    };
    assert_eq!(name.as_deref(), Some("packed"));
    assert!(!profile.preemption);
    assert_eq!(profile.sampling, scheduler::profile::Sampling::Percentage(50));
    let scores: Vec<String> = profile.scores.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        scores,
        [
            "TaintToleration reversed (3)",
            "NodeResourcesFit RequestedToCapacityRatio [0:0 100:10] cpu 2 memory 1 v1.20 (1)"
        ]
    );
}
