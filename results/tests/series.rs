//! A run's series from its records file: the same records give the same
//! series as pushing them by hand, and damaged files are errors naming the
//! file and the line.

mod common;

use common::*;
use results::series::{RunSeriesBuilder, from_file};
use std::io::Write;

fn write_records(records: &[schedlab_core::Record]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().expect("temp file");
    for r in records {
        writeln!(f, "{}", serde_json::to_string(r).expect("record as JSON")).expect("write");
    }
    f
}

#[test]
fn file_and_pushed_records_agree() {
    let records = hand_run();
    let f = write_records(&records);
    let from_disk = from_file(f.path()).unwrap();
    let mut b = RunSeriesBuilder::new();
    for r in &records {
        b.push(r);
    }
    let pushed = b.finish().unwrap();
    assert_eq!(from_disk.node_points, pushed.node_points);
    assert_eq!(from_disk.cluster, pushed.cluster);
    assert_eq!(from_disk.restarts, pushed.restarts);
    assert_eq!(from_disk.sched_latencies_s(), pushed.sched_latencies_s());
    assert_eq!(from_disk.pod_outcomes(), pushed.pod_outcomes());
    // the metrics come along: same numbers as metrics::from_file
    let m = results::metrics::from_file(f.path()).unwrap();
    assert_eq!(from_disk.metrics.restarts, m.restarts);
    assert_eq!(from_disk.metrics.failure_rate, m.failure_rate);
}

#[test]
fn damaged_files_name_the_file_and_line() {
    let mut f = write_records(&hand_run()[..5]);
    writeln!(f, "{{not json").unwrap();
    let e = from_file(f.path()).unwrap_err().to_string();
    assert!(
        e.contains(&f.path().display().to_string()) && e.contains("line 6"),
        "{e}"
    );

    let f = write_records(&[node(0, 1, 1, 1.0), bound(1, 9, 0), end(2)]);
    let e = from_file(f.path()).unwrap_err().to_string();
    assert!(
        e.contains(&f.path().display().to_string()) && e.contains("line 2"),
        "{e}"
    );

    let mut records = hand_run();
    records.pop();
    let f = write_records(&records);
    let e = from_file(f.path()).unwrap_err().to_string();
    assert!(e.contains("no End record"), "{e}");
}
