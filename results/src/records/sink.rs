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

/// A run's sink in its folder: records into records.jsonl and, when the
/// run explains its decisions, decision records into decisions.jsonl.
#[derive(Debug)]
pub struct RunSink {
    records: JsonlSink,
    decisions: Option<crate::decisions::DecisionsWriter>,
}

impl RunSink {
    /// Records into `records`; decision records into `decisions` when given
    /// (and otherwise dropped).
    pub fn create(records: &Path, decisions: Option<&Path>) -> crate::Result<Self> {
        Ok(RunSink {
            records: JsonlSink::create(records)?,
            decisions: decisions.map(crate::decisions::DecisionsWriter::create).transpose()?,
        })
    }

    /// Flushes both files and reports the first error met while writing;
    /// returns how many decision records were written, when they were kept.
    pub fn finish(self) -> crate::Result<Option<u64>> {
        self.records.finish()?;
        self.decisions.map(|d| d.finish()).transpose()
    }
}

impl RecordSink for RunSink {
    fn record(&mut self, record: Record) {
        self.records.record(record);
    }

    fn decision(&mut self, decision: schedlab_core::decision::DecisionRecord) {
        if let Some(writer) = &mut self.decisions {
            writer.record(&decision);
        }
    }
}
