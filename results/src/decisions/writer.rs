//! Writing a run's decisions.jsonl.

use super::{DecisionRecord, DecisionsError};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Buffered JSON Lines writer of decision records.
///
/// [`DecisionsWriter::record`] is called from inside a backend's decision
/// loop, which cannot stop for an error, so the writer keeps the first I/O
/// error, drops every decision after it (a file with a hole would mislead a
/// reader) and [`DecisionsWriter::finish`] reports it.
#[derive(Debug)]
pub struct DecisionsWriter {
    path: PathBuf,
    writer: BufWriter<File>,
    error: Option<std::io::Error>,
    written: u64,
}

impl DecisionsWriter {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &Path) -> Result<Self, DecisionsError> {
        let file = File::create(path).map_err(|source| DecisionsError::Create {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(DecisionsWriter {
            path: path.to_path_buf(),
            writer: BufWriter::new(file),
            error: None,
            written: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Decisions written so far (not counting any after an error).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Appends one decision as one line.
    pub fn record(&mut self, decision: &DecisionRecord) {
        if self.error.is_some() {
            return;
        }
        let line = serde_json::to_writer(&mut self.writer, decision)
            .map_err(std::io::Error::other)
            .and_then(|()| self.writer.write_all(b"\n"));
        match line {
            Ok(()) => self.written += 1,
            Err(e) => {
                tracing::error!(path = %self.path.display(), error = %e, "writing decisions failed; later decisions are dropped");
                self.error = Some(e);
            }
        }
    }

    /// Flushes the file and reports the first error met while writing;
    /// returns the number of decisions written.
    pub fn finish(mut self) -> Result<u64, DecisionsError> {
        let result = match self.error.take() {
            Some(source) => Err(source),
            None => self.writer.flush().and_then(|()| self.writer.get_ref().sync_data()),
        };
        result.map_err(|source| DecisionsError::Write {
            path: self.path.clone(),
            source,
        })?;
        Ok(self.written)
    }
}
