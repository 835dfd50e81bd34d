//! Reading and writing a run's raw records as JSON Lines: one
//! [`schedlab_core::Record`] per line, in the order the backend wrote them.

mod reader;
mod sink;

pub use reader::{for_each_numbered_record, for_each_record, read_records};
pub use sink::{JsonlSink, RunSink};

use std::path::PathBuf;

/// Why a records file could not be written or read. Every variant names the
/// file, and reading errors name the line, so a bad run can be found by hand.
#[derive(Debug, thiserror::Error)]
pub enum RecordsError {
    #[error("cannot create records file {}: {source}", path.display())]
    Create { path: PathBuf, source: std::io::Error },
    #[error("cannot write records file {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot open records file {}: {source}", path.display())]
    Open { path: PathBuf, source: std::io::Error },
    #[error("cannot read records file {} at line {line}: {source}", path.display())]
    Read {
        path: PathBuf,
        line: u64,
        source: std::io::Error,
    },
    #[error("malformed record in {} at line {line}: {}", path.display(), one_line(&source.to_string()))]
    Parse {
        path: PathBuf,
        line: u64,
        source: serde_json::Error,
    },
}

/// `text` on one line, its control characters escaped: serde_json quotes
/// an unknown tag as written, line breaks, ESC and BEL and all (found by
/// schedlab-fuzz's control-character oracle).
fn one_line(text: &str) -> String {
    schedlab_core::text::escape_controls(text).into_owned()
}

#[cfg(test)]
mod tests {
    /// Found by schedlab-fuzz (records): a record whose `type` holds a line
    /// break made a multi-line message.
    #[test]
    fn a_malformed_record_is_reported_on_one_line() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("records.jsonl");
        for tag in ["a\\r\\nb", "a\\rb", "a\\nb"] {
            std::fs::write(&path, format!("{{\"type\":\"{tag}\"}}\n")).unwrap();
            let shown = super::read_records(&path).unwrap_err().to_string();
            assert!(!shown.contains(['\n', '\r']), "{shown:?}");
            assert!(shown.contains("unknown variant `a\\"), "{shown:?}");
            assert!(shown.contains("records.jsonl at line 1"), "{shown:?}");
        }
        // a terminal escape, a bell and a C1 control in the tag are escaped too
        std::fs::write(&path, "{\"type\":\"\\u001b[31m\\u0007\\u009b\"}\n").unwrap();
        let shown = super::read_records(&path).unwrap_err().to_string();
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(shown.contains("unknown variant `\\e[31m\\u{7}\\u{9b}`"), "{shown:?}");
    }
}
