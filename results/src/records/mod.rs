//! Reading and writing a run's raw records as JSON Lines: one
//! [`schedlab_core::Record`] per line, in the order the backend wrote them.

mod reader;
mod sink;

pub use reader::{for_each_numbered_record, for_each_record, read_records};
pub use sink::JsonlSink;

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
    #[error("malformed record in {} at line {line}: {source}", path.display())]
    Parse {
        path: PathBuf,
        line: u64,
        source: serde_json::Error,
    },
}
