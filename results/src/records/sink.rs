//! The JSON Lines writer backends record into.

use super::RecordsError;
use crate::jsonl::JsonlWriter;
use schedlab_core::{Record, RecordSink};
use std::path::Path;

/// Buffered JSON Lines writer for a run's records ([`JsonlWriter`]): a
/// file with a hole in the middle would yield wrong metrics, a truncated one
/// yields an "incomplete run" error.
#[derive(Debug)]
pub struct JsonlSink {
    lines: JsonlWriter,
}

impl JsonlSink {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &Path) -> crate::Result<Self> {
        let lines = JsonlWriter::create(path).map_err(|source| RecordsError::Create {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(JsonlSink { lines })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        self.lines.path()
    }

    /// Records written so far (not counting any after an error).
    pub fn written(&self) -> u64 {
        self.lines.written()
    }

    /// Flushes the file and reports the first error met while writing.
    pub fn finish(self) -> crate::Result<()> {
        self.lines
            .finish()
            .map_err(|(path, source)| RecordsError::Write { path, source })?;
        Ok(())
    }
}

impl RecordSink for JsonlSink {
    fn record(&mut self, record: Record) {
        self.lines.push(&record, "records");
    }
}
