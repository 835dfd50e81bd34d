//! The JSON Lines writer backends record into.

use super::RecordsError;
use clusters::{Record, RecordSink};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Buffered JSON Lines writer for a run's records.
///
/// [`RecordSink::record`] cannot fail, so the sink keeps the first I/O error,
/// drops every record after it (a file with a hole in the middle would yield
/// wrong metrics, a truncated one yields an "incomplete run" error) and
/// [`JsonlSink::finish`] reports it.
#[derive(Debug)]
pub struct JsonlSink {
    path: PathBuf,
    writer: BufWriter<File>,
    error: Option<std::io::Error>,
    written: u64,
}

impl JsonlSink {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &Path) -> Result<Self, RecordsError> {
        let file = File::create(path).map_err(|source| RecordsError::Create {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(JsonlSink {
            path: path.to_path_buf(),
            writer: BufWriter::new(file),
            error: None,
            written: 0,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records written so far (not counting any after an error).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Flushes the file and reports the first error met while writing.
    pub fn finish(mut self) -> Result<(), RecordsError> {
        let result = match self.error.take() {
            Some(source) => Err(source),
            None => self.writer.flush().and_then(|()| self.writer.get_ref().sync_data()),
        };
        result.map_err(|source| RecordsError::Write {
            path: self.path.clone(),
            source,
        })
    }

    fn write_line(&mut self, record: &Record) -> std::io::Result<()> {
        serde_json::to_writer(&mut self.writer, record).map_err(std::io::Error::other)?;
        self.writer.write_all(b"\n")
    }
}

impl RecordSink for JsonlSink {
    fn record(&mut self, record: Record) {
        if self.error.is_some() {
            return;
        }
        match self.write_line(&record) {
            Ok(()) => self.written += 1,
            Err(e) => {
                tracing::error!(path = %self.path.display(), error = %e, "writing records failed; later records are dropped");
                self.error = Some(e);
            }
        }
    }
}
