//! Writing a run's decisions.jsonl.

use super::{DecisionRecord, DecisionsError};
use crate::jsonl::JsonlWriter;
use std::path::Path;

/// Buffered JSON Lines writer of decision records ([`JsonlWriter`]),
/// called from inside a backend's decision loop, which cannot stop for an
/// error.
#[derive(Debug)]
pub struct DecisionsWriter {
    lines: JsonlWriter,
}

impl DecisionsWriter {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &Path) -> crate::Result<Self> {
        let lines = JsonlWriter::create(path).map_err(|source| DecisionsError::Create {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(DecisionsWriter { lines })
    }

    pub fn path(&self) -> &Path {
        self.lines.path()
    }

    /// Decisions written so far (not counting any after an error).
    pub fn written(&self) -> u64 {
        self.lines.written()
    }

    /// Appends one decision as one line.
    pub fn record(&mut self, decision: &DecisionRecord) {
        self.lines.push(decision, "decisions");
    }

    /// Flushes the file and reports the first error met while writing;
    /// returns the number of decisions written.
    pub fn finish(self) -> crate::Result<u64> {
        let written = self
            .lines
            .finish()
            .map_err(|(path, source)| DecisionsError::Write { path, source })?;
        Ok(written)
    }
}
