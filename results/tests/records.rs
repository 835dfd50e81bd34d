//! Records files: writing, streaming back, and the errors a bad file gives.

mod common;

use common::*;
use results::metrics::{self, MetricsError};
use results::records::{JsonlSink, RecordsError, for_each_record, read_records};
use schedlab_core::RecordSink;
use std::io::Write;

#[test]
fn sink_and_reader_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.jsonl");
    let records = hand_run();
    let mut sink = JsonlSink::create(&path).unwrap();
    for r in records.clone() {
        sink.record(r);
    }
    assert_eq!(sink.written(), records.len() as u64);
    sink.finish().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), records.len(), "one record per line");
    assert_eq!(read_records(&path).unwrap(), records);
    let mut n = 0;
    for_each_record(&path, |_| n += 1).unwrap();
    assert_eq!(n, records.len());
    // metrics from the file equal metrics from memory
    let from_file = metrics::from_file(&path).unwrap();
    let from_memory = metrics_of(&records).unwrap();
    assert_eq!(from_file.samples.cost_usd, from_memory.samples.cost_usd);
    assert_eq!(from_file.failures, from_memory.failures);
    assert_eq!(from_file.sched_latency_ms, from_memory.sched_latency_ms);
}

#[test]
fn missing_end_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut-short.jsonl");
    let mut sink = JsonlSink::create(&path).unwrap();
    let mut records = hand_run();
    records.pop();
    for r in records {
        sink.record(r);
    }
    sink.finish().unwrap();
    let err = metrics::from_file(&path).unwrap_err();
    assert!(matches!(err, MetricsError::Incomplete { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("cut-short.jsonl") && msg.contains("End"), "{msg}");
}

#[test]
fn malformed_line_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("broken.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    for r in &hand_run()[..3] {
        writeln!(f, "{}", serde_json::to_string(r).unwrap()).unwrap();
    }
    writeln!(f).unwrap(); // blank lines are skipped but still counted
    writeln!(f, "{{\"type\":\"event\",\"t\":oops}}").unwrap();
    drop(f);
    let err = read_records(&path).unwrap_err();
    assert!(matches!(err, RecordsError::Parse { line: 5, .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("broken.jsonl") && msg.contains("line 5"), "{msg}");
    let err = metrics::from_file(&path).unwrap_err();
    assert!(err.to_string().contains("line 5"), "{err}");
}

#[test]
fn inconsistent_record_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    for r in [node(0, 1000, 1000, 1.0), created(0, 1, 10, 10), bound(5, 9, 0), end(10)] {
        writeln!(f, "{}", serde_json::to_string(&r).unwrap()).unwrap();
    }
    drop(f);
    let msg = metrics::from_file(&path).unwrap_err().to_string();
    assert!(
        msg.contains("odd.jsonl") && msg.contains("line 3") && msg.contains("pod 9"),
        "{msg}"
    );
}

#[test]
fn unreadable_paths_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.jsonl");
    let msg = read_records(&missing).unwrap_err().to_string();
    assert!(msg.contains("nope.jsonl"), "{msg}");
    let bad_dir = dir.path().join("no-such-dir").join("run.jsonl");
    let err = JsonlSink::create(&bad_dir).unwrap_err();
    assert!(
        matches!(err, results::Error::Records(RecordsError::Create { .. })) && err.to_string().contains("no-such-dir")
    );
}

#[test]
fn sink_keeps_the_first_write_error() {
    let full = std::path::Path::new("/dev/full");
    if !full.exists() {
        return; // not Linux
    }
    let mut sink = JsonlSink::create(full).unwrap();
    // more than the write buffer holds, so writes reach the device and fail
    for _ in 0..2000 {
        for r in hand_run() {
            sink.record(r);
        }
    }
    assert!(
        sink.written() < 2000 * hand_run().len() as u64,
        "later records are dropped"
    );
    let err = sink.finish().unwrap_err();
    assert!(
        matches!(err, results::Error::Records(RecordsError::Write { .. })) && err.to_string().contains("/dev/full"),
        "{err}"
    );
}

#[test]
fn a_records_file_appears_whole_when_finished_and_never_partly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("records.jsonl");
    let partial = results::atomic::partial_path(&path);
    // more than the write buffer holds, so lines reach the disk before finish
    let mut sink = JsonlSink::create(&path).unwrap();
    for _ in 0..500 {
        for r in hand_run() {
            sink.record(r);
        }
    }
    assert!(!path.exists(), "nothing under the final name while the run plays");
    assert!(partial.metadata().unwrap().len() > 0);
    sink.finish().unwrap();
    assert!(!partial.exists());
    assert_eq!(read_records(&path).unwrap().len(), 500 * hand_run().len());

    // a run that stops before finishing (an error, Ctrl-C) leaves nothing under the final name,
    // and an earlier file there as it was
    let other = dir.path().join("other.jsonl");
    let mut sink = JsonlSink::create(&other).unwrap();
    sink.record(hand_run()[0].clone());
    drop(sink);
    assert!(!other.exists());
    let mut sink = JsonlSink::create(&path).unwrap();
    sink.record(hand_run()[0].clone());
    drop(sink);
    assert_eq!(read_records(&path).unwrap().len(), 500 * hand_run().len());
}
