//! One buffered JSON Lines file writer for the run folder's line files
//! (records.jsonl, decisions.jsonl).
//!
//! Backends write lines from inside loops that cannot stop for an error, so
//! the writer keeps the first I/O error, drops every line after it (a file
//! with a hole in the middle would mislead its reader; a truncated one is
//! refused as incomplete) and [`JsonlWriter::finish`] reports it.

use serde::Serialize;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct JsonlWriter {
    path: PathBuf,
    writer: BufWriter<File>,
    error: Option<std::io::Error>,
    written: u64,
}

impl JsonlWriter {
    /// Creates (or truncates) the file at `path`.
    pub fn create(path: &Path) -> std::io::Result<JsonlWriter> {
        Ok(JsonlWriter {
            path: path.to_path_buf(),
            writer: BufWriter::new(File::create(path)?),
            error: None,
            written: 0,
        })
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Lines written so far (not counting any after an error).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Appends `item` as one line; after an error, nothing. `what` names the
    /// lines in the log ("records", "decisions").
    pub fn push(&mut self, item: &impl Serialize, what: &str) {
        if self.error.is_some() {
            return;
        }
        let line = serde_json::to_writer(&mut self.writer, item)
            .map_err(std::io::Error::other)
            .and_then(|()| self.writer.write_all(b"\n"));
        match line {
            Ok(()) => self.written += 1,
            Err(e) => {
                tracing::error!(path = %self.path.display(), error = %e, "writing {what} failed; later {what} are dropped");
                self.error = Some(e);
            }
        }
    }

    /// Flushes and syncs the file; the first error met while writing, if any.
    pub fn finish(mut self) -> Result<u64, (PathBuf, std::io::Error)> {
        let result = match self.error.take() {
            Some(source) => Err(source),
            None => self.writer.flush().and_then(|()| self.writer.get_ref().sync_data()),
        };
        match result {
            Ok(()) => Ok(self.written),
            Err(source) => Err((self.path, source)),
        }
    }
}
