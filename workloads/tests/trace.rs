//! Trace replay: the openb_pod_list parser and a small replay against golden
//! files, every bad trace with its file, line and column, the resolved
//! round trip, and the bundled sample's reproducibility.
//! Regenerate the golden files with `UPDATE_GOLDEN=1 cargo test -p workloads`.

mod common;

use std::path::Path;
use workloads::trace::{TraceError, parse_openb, sample::openb_sample};

fn check_golden(name: &str, value: &impl serde::Serialize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{name}.json"));
    let actual = serde_json::to_string_pretty(value).expect("serializable") + "\n";
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &actual).expect("golden file written");
        return;
    }
    let expected = std::fs::read_to_string(&path).expect("golden file exists");
    assert!(
        actual == expected,
        "{} differs; regenerate with UPDATE_GOLDEN=1",
        path.display()
    );
}

#[test]
fn the_parser_reads_a_hand_written_trace_exactly() {
    let text = std::fs::read_to_string(common::data("tiny-trace.csv")).unwrap();
    check_golden("tiny-trace.rows", &parse_openb(&text).unwrap());
}

#[test]
fn a_replay_expands_to_the_golden_timeline_and_round_trips() {
    let path = common::data("tiny-trace.yaml");
    let s = workloads::load(path.to_str().unwrap(), &[]).unwrap();
    check_golden("tiny-trace.timeline", &s.expand(1));
    // the resolved form carries the pods inline, so it loads anywhere
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("resolved.json");
    std::fs::write(&manifest, s.resolved().to_string()).unwrap();
    let again = workloads::load(manifest.to_str().unwrap(), &[]).unwrap();
    for seed in [1, 2] {
        assert_eq!(again.expand(seed), s.expand(seed));
    }
    assert_eq!(again.resolved(), s.resolved());
}

#[test]
fn the_builtin_round_trips_and_replays_every_row() {
    let s = workloads::load("trace", &[]).unwrap();
    let t = s.expand(1);
    let creates = t
        .actions
        .iter()
        .filter(|a| matches!(a.action, schedlab_core::Action::CreatePod { .. }))
        .count();
    assert_eq!(creates, 600);
    let again = workloads::parse_str("manifest.json", &s.resolved().to_string()).unwrap();
    assert_eq!(again.expand(1), t);
}

#[test]
fn the_bundled_sample_is_what_the_generator_makes() {
    let bundled =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/openb-sample.csv")).unwrap();
    assert_eq!(
        bundled,
        openb_sample(1, 600),
        "regenerate with the openb_sample example"
    );
    assert!(bundled.len() < 100_000);
    assert_eq!(parse_openb(&bundled).unwrap().rows.len(), 600);
}

const HEADER: &str =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time";

/// The error of loading a replay of `csv` (None: no file), one line.
fn trace_err(csv: Option<&str>) -> String {
    let dir = tempfile::tempdir().expect("test setup");
    if let Some(csv) = csv {
        std::fs::write(dir.path().join("t.csv"), csv).expect("test setup");
    }
    let scenario = dir.path().join("s.yaml");
    std::fs::write(
        &scenario,
        "name: t\nduration: 1h\ncluster:\n  pools:\n    - {name: n, count: 1, machine_type: m, hourly_price: 1, capacity: {cpu: 8, memory: 32Gi}}\nphases:\n  - replay: {trace: t.csv, format: openb-pod-list}\n",
    )
    .expect("test setup");
    let origin = scenario.to_str().expect("test setup").to_string();
    let msg = workloads::load(&origin, &[]).expect_err("rejected").to_string();
    assert!(!msg.contains('\n'), "one line: {msg}");
    let prefix = format!("scenario {origin}: phases[0].replay.trace = t.csv: ");
    assert!(msg.starts_with(&prefix), "{msg}");
    msg[prefix.len()..].to_string()
}

#[test]
fn a_missing_column_is_named_with_the_header_line() {
    let csv = format!("{}\np,1,1,0,0,,LS,Running,0,1,0\n", HEADER.replace(",qos", ""));
    let e = trace_err(Some(&csv));
    assert!(
        e.starts_with("line 1: missing column `qos` (the header has: name, cpu_milli,"),
        "{e}"
    );
}

#[test]
fn a_bad_number_names_its_line_and_column() {
    let csv = format!("{HEADER}\np,1000,1,0,0,,LS,Running,0,1,0\nq,lots,1,0,0,,LS,Running,0,1,0\n");
    assert_eq!(
        trace_err(Some(&csv)),
        "line 3, column 2 (cpu_milli) = lots: expected a whole non-negative number"
    );
}

#[test]
fn rows_out_of_order_are_refused() {
    let csv = format!("{HEADER}\np,1,1,0,0,,LS,Running,50,60,50\nq,1,1,0,0,,LS,Running,40,60,40\n");
    assert_eq!(
        trace_err(Some(&csv)),
        "line 3, column 9 (creation_time) = 40: earlier than the row before it (50); rows must be sorted by creation_time"
    );
}

#[test]
fn a_deletion_before_the_creation_is_refused() {
    let csv = format!("{HEADER}\np,1,1,0,0,,LS,Running,50,49,50\n");
    assert_eq!(
        trace_err(Some(&csv)),
        "line 2, column 10 (deletion_time) = 49: before the row's creation_time (50)"
    );
}

#[test]
fn an_unmapped_qos_class_names_its_line_and_column() {
    let csv = format!("{HEADER}\np,1,1,0,0,,Gold,Running,50,60,50\n");
    let e = trace_err(Some(&csv));
    assert!(
        e.starts_with("line 2, column 7 (qos) = Gold: a qos class the phase does not map"),
        "{e}"
    );
}

#[test]
fn a_missing_file_and_a_directory_are_refused() {
    let e = trace_err(None);
    assert!(
        e.starts_with("cannot read the trace file: ") && e.contains("t.csv"),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("t.csv")).unwrap();
    std::fs::write(
        dir.path().join("s.yaml"),
        "name: t\nduration: 1h\ncluster:\n  pools:\n    - {name: n, count: 1, machine_type: m, hourly_price: 1, capacity: {cpu: 8, memory: 32Gi}}\nphases:\n  - replay: {trace: t.csv, format: openb-pod-list}\n",
    )
    .unwrap();
    let e = workloads::load(dir.path().join("s.yaml").to_str().unwrap(), &[])
        .expect_err("a directory is no trace")
        .to_string();
    assert!(e.contains("is not a regular file"), "{e}");
}

#[test]
fn a_short_row_is_refused_and_errors_know_their_line() {
    let e = parse_openb(&format!("{HEADER}\np,1,1\n")).unwrap_err();
    assert_eq!(e.line(), Some(2));
    assert!(matches!(e, TraceError::Row { .. }));
}

/// Phases replaying one trace share its workloads: one per qos class and
/// request shape, however many phases and rows repeat it.
#[test]
fn phases_replaying_one_trace_share_its_workloads() {
    let dir = tempfile::tempdir().expect("test setup");
    std::fs::copy(common::data("tiny-trace.csv"), dir.path().join("tiny-trace.csv")).expect("test setup");
    let phase = "  - replay: {trace: tiny-trace.csv, format: openb-pod-list, speedup: 2}\n";
    let scenario = |phases: usize| {
        let path = dir.path().join(format!("s{phases}.yaml"));
        std::fs::write(
            &path,
            format!(
                "name: t\nduration: 1h\ncluster:\n  pools:\n    - {{name: n, count: 2, machine_type: m, hourly_price: 1, capacity: {{cpu: 8, memory: 32Gi}}}}\nphases:\n{}",
                phase.repeat(phases)
            ),
        )
        .expect("test setup");
        workloads::load(path.to_str().expect("test setup"), &[])
            .unwrap()
            .expand(1)
    };
    let (once, thrice) = (scenario(1), scenario(3));
    let creates = |t: &schedlab_core::Timeline| {
        t.actions
            .iter()
            .filter(|a| matches!(a.action, schedlab_core::Action::CreatePod { .. }))
            .count()
    };
    assert_eq!(creates(&once), 5);
    assert_eq!(creates(&thrice), 15);
    // pod-a and pod-d share a shape: four workloads, the same in both
    assert_eq!(once.workloads.len(), 4);
    assert_eq!(thrice.workloads, once.workloads);
}

/// Found by schedlab-fuzz (scenario): a carriage return in a header's column
/// name or in the trace file's name reached the message as is.
#[test]
fn control_characters_of_a_trace_stay_out_of_the_message() {
    let csv = format!("{},od\rd\n", HEADER.replace(",scheduled_time", ""));
    let e = trace_err(Some(&csv));
    assert!(e.contains("od\\rd"), "{e}");
    assert!(!e.contains('\r'), "{e:?}");

    let dir = tempfile::tempdir().expect("test setup");
    let scenario = dir.path().join("s.yaml");
    std::fs::write(
        &scenario,
        "name: t\nduration: 1h\ncluster:\n  pools:\n    - {name: n, count: 1, machine_type: m, hourly_price: 1, capacity: {cpu: 8, memory: 32Gi}}\nphases:\n  - replay: {trace: \"a\\rb.csv\", format: openb-pod-list}\n",
    )
    .expect("test setup");
    let msg = workloads::load(scenario.to_str().expect("test setup"), &[])
        .expect_err("rejected")
        .to_string();
    assert!(msg.contains("cannot read the trace file"), "{msg}");
    assert!(!msg.contains('\r') && !msg.contains('\n'), "{msg:?}");
}
