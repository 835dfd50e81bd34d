//! Streaming a records file back, line by line.

use super::RecordsError;
use crate::jsonl::{LineError, for_each_line};
use schedlab_core::Record;
use std::path::Path;

/// Streams the records of `path` to `f` in file order. Blank lines are
/// skipped; any other line that is not a record stops the read with an error
/// naming the file and the (1-based) line.
pub fn for_each_record(path: &Path, mut f: impl FnMut(Record)) -> Result<(), RecordsError> {
    for_each_numbered_record(path, |_, record| f(record))
}

/// As [`for_each_record`], also passing each record's line number, so that a
/// consumer's own errors can point at the line too.
pub fn for_each_numbered_record(path: &Path, f: impl FnMut(u64, Record)) -> Result<(), RecordsError> {
    let path_buf = || path.to_path_buf();
    for_each_line(path, f).map_err(|e| match e {
        LineError::Open(source) => RecordsError::Open {
            path: path_buf(),
            source,
        },
        LineError::Read { line, source } => RecordsError::Read {
            path: path_buf(),
            line,
            source,
        },
        LineError::Parse { line, source } => RecordsError::Parse {
            path: path_buf(),
            line,
            source,
        },
    })
}

/// Reads a whole records file into memory (small files and tests; metrics
/// stream instead).
pub fn read_records(path: &Path) -> Result<Vec<Record>, RecordsError> {
    let mut out = Vec::new();
    for_each_record(path, |r| out.push(r))?;
    Ok(out)
}
