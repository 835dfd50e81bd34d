//! Streaming a records file back, line by line.

use super::RecordsError;
use clusters::Record;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Streams the records of `path` to `f` in file order. Blank lines are
/// skipped; any other line that is not a record stops the read with an error
/// naming the file and the (1-based) line.
pub fn for_each_record(path: &Path, mut f: impl FnMut(Record)) -> Result<(), RecordsError> {
    for_each_numbered_record(path, |_, record| f(record))
}

/// As [`for_each_record`], also passing each record's line number, so that a
/// consumer's own errors can point at the line too.
pub fn for_each_numbered_record(path: &Path, mut f: impl FnMut(u64, Record)) -> Result<(), RecordsError> {
    let file = File::open(path).map_err(|source| RecordsError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let mut reader = BufReader::new(file);
    let mut buf = String::new();
    let mut line = 0u64;
    loop {
        buf.clear();
        line += 1;
        let read = reader.read_line(&mut buf).map_err(|source| RecordsError::Read {
            path: path.to_path_buf(),
            line,
            source,
        })?;
        if read == 0 {
            return Ok(());
        }
        let text = buf.trim();
        if text.is_empty() {
            continue;
        }
        let record = serde_json::from_str(text).map_err(|source| RecordsError::Parse {
            path: path.to_path_buf(),
            line,
            source,
        })?;
        f(line, record);
    }
}

/// Reads a whole records file into memory (small files and tests; metrics
/// stream instead).
pub fn read_records(path: &Path) -> Result<Vec<Record>, RecordsError> {
    let mut out = Vec::new();
    for_each_record(path, |r| out.push(r))?;
    Ok(out)
}
