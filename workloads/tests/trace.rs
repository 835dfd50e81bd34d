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
    assert!(e.contains("missing column `scheduled_time`"), "{e}");
    assert!(!e.contains('\r'), "{e:?}");
    // a field's value is escaped: no ESC, OSC or BEL reaches the terminal
    let csv = format!("{HEADER}\np,l\u{1b}]0;pwned\u{7}\u{1b}[2J,1,0,0,,LS,Running,0,1,0\n");
    let e = trace_err(Some(&csv));
    assert!(
        e.starts_with("line 2, column 2 (cpu_milli) = l\\e]0;pwned\\u{7}\\e[2J"),
        "{e}"
    );
    assert!(!e.contains(['\u{1b}', '\u{7}']), "{e:?}");

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

const SECRET: &str = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";

/// A scenario `s.yaml` in `dir` whose replay reads `trace`.
fn scenario_reading(dir: &std::path::Path, trace: &str) -> String {
    let path = dir.join("s.yaml");
    std::fs::write(
        &path,
        format!(
            "name: t\nduration: 1h\ncluster:\n  pools:\n    - {{name: n, count: 1, machine_type: m, hourly_price: 1, capacity: {{cpu: 8, memory: 32Gi}}}}\nphases:\n  - replay: {{trace: '{trace}', format: openb-pod-list}}\n"
        ),
    )
    .expect("test setup");
    path.to_str().expect("test setup").to_string()
}

/// Hardening round 2, item 1: a trace path read any file (`.env`,
/// `/proc/self/environ`, `../../etc/passwd`) and the error quoted its first
/// line. A path outside the scenario file's folder is refused unless the
/// user allowed it, and a first line that is no header is never quoted.
#[test]
fn a_trace_outside_the_scenario_folder_is_refused_unless_allowed() {
    let root = tempfile::tempdir().expect("test setup");
    let secret_dir = root.path().join("secret");
    let scenario_dir = root.path().join("scenarios");
    std::fs::create_dir_all(&secret_dir).expect("test setup");
    std::fs::create_dir_all(&scenario_dir).expect("test setup");
    let env_file = secret_dir.join(".env");
    std::fs::write(&env_file, format!("AWS_SECRET_ACCESS_KEY={SECRET}\n")).expect("test setup");
    let absolute = env_file.to_str().expect("test setup").to_string();

    for (trace, why) in [
        ("../secret/.env", "a path through `..`"),
        ("../../../../../../../../etc/passwd", "a path through `..`"),
        (absolute.as_str(), "an absolute path"),
        ("/proc/self/environ", "an absolute path"),
    ] {
        let origin = scenario_reading(&scenario_dir, trace);
        let e = workloads::load(&origin, &[]).expect_err("refused").to_string();
        assert!(e.contains(why) && e.contains("--allow-trace"), "{trace}: {e}");
        assert!(!e.contains(SECRET) && !e.contains("root:"), "{trace}: {e}");
    }
    // a symbolic link in the folder that leads out of it
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&env_file, scenario_dir.join("t.csv")).expect("test setup");
        let origin = scenario_reading(&scenario_dir, "t.csv");
        let e = workloads::load(&origin, &[]).expect_err("refused").to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(!e.contains(SECRET), "{e}");
    }

    // allowed by name: read, and its first line (no header) is not quoted
    let origin = scenario_reading(&scenario_dir, &absolute);
    let e = workloads::load_allowing(&origin, &[], std::slice::from_ref(&env_file))
        .expect_err("not a trace")
        .to_string();
    assert!(e.contains("the first line is not a CSV header"), "{e}");
    assert!(e.contains("name, cpu_milli, memory_mib"), "{e}");
    assert!(!e.contains(SECRET) && !e.contains("AWS_SECRET"), "{e}");
    // through `..`, allowed by the path it resolves to
    let origin = scenario_reading(&scenario_dir, "../secret/.env");
    let e = workloads::load_allowing(&origin, &[], std::slice::from_ref(&env_file))
        .expect_err("not a trace")
        .to_string();
    assert!(e.contains("not a CSV header") && !e.contains(SECRET), "{e}");

    // a trace in a subfolder of the scenario's folder is fine
    std::fs::create_dir_all(scenario_dir.join("traces")).expect("test setup");
    std::fs::copy(common::data("tiny-trace.csv"), scenario_dir.join("traces/tiny.csv")).expect("test setup");
    let origin = scenario_reading(&scenario_dir, "traces/tiny.csv");
    workloads::load(&origin, &[]).expect("a trace beside the scenario");
    // and the built-in that replays its bundled sample still loads
    workloads::load("trace", &[]).expect("the trace built-in");
}

/// Hardening round 2, item 1: what a file named as a trace by mistake holds
/// stays out of the message whatever its first line.
#[test]
fn a_first_line_that_is_no_header_is_not_quoted() {
    for first in [
        format!("AWS_SECRET_ACCESS_KEY={SECRET}"),
        format!("{{\"apiVersion\":\"v1\",\"users\":[{{\"user\":{{\"token\":\"{SECRET}\"}}}}]}}"),
        format!("root:{SECRET}:0:0:root:/root:/bin/bash"),
        SECRET.to_string(),
        format!("PATH=/bin\u{0}HOME=/root\u{0}KEY={SECRET}\u{0}"),
    ] {
        let e = trace_err(Some(&format!("{first}\nmore\n")));
        assert!(
            e.starts_with("line 1: the first line is not a CSV header"),
            "{first}: {e}"
        );
        assert!(!e.contains(SECRET), "{first}: {e}");
    }
}

/// Hardening round 2, item 10: a 60 MB one-line header made a 62.9 MB
/// error line, and a CSV with CR line ends printed the whole file.
#[test]
fn a_header_is_quoted_capped_and_cr_line_ends_are_lines() {
    let wide = (0..200_000).map(|i| format!("c{i}")).collect::<Vec<_>>().join(",");
    let e = trace_err(Some(&format!("{wide}\n")));
    assert!(e.contains("missing column `name`"), "{e}");
    assert!(e.len() < 400, "{} bytes", e.len());
    // classic Mac line ends: the header is the first line, not the file
    let rows = "p,1,1,0,0,,LS,Running,0,1,0\r".repeat(10_000);
    let e = trace_err(Some(&format!("{}\r{rows}", HEADER.replace(",qos", ""))));
    assert!(e.starts_with("line 1: missing column `qos`"), "{e}");
    assert!(e.len() < 400, "{} bytes", e.len());
    let trace = parse_openb(&format!(
        "{HEADER}\rp,1,1,0,0,,LS,Running,0,1,0\rq,1,1,0,0,,LS,Running,0,1,0\r"
    ))
    .unwrap();
    assert_eq!(trace.rows.len(), 2);
    assert_eq!(trace.rows[1].line, 3);
}

/// Hardening round 2, item 16: a byte-order mark made the first column
/// `\u{feff}name` ("missing column `name`") and a scenario file unreadable.
#[test]
fn a_byte_order_mark_is_accepted_in_a_trace_and_a_scenario() {
    let trace = parse_openb(&format!("\u{feff}{HEADER}\np,1,1,0,0,,LS,Running,0,1,0\n")).unwrap();
    assert_eq!(trace.header[0], "name");
    let dir = tempfile::tempdir().expect("test setup");
    std::fs::write(
        dir.path().join("t.csv"),
        format!("\u{feff}{HEADER}\np,1,1,0,0,,LS,Running,0,1,0\n"),
    )
    .expect("test setup");
    let origin = scenario_reading(dir.path(), "t.csv");
    let text = std::fs::read_to_string(&origin).expect("test setup");
    std::fs::write(&origin, format!("\u{feff}{text}")).expect("test setup");
    let s = workloads::load(&origin, &[]).expect("a scenario and a trace with byte-order marks");
    assert_eq!(s.name(), "t");
}
