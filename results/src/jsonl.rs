//! The run folder's JSON Lines files (records.jsonl, decisions.jsonl): one
//! buffered writer and one streaming reader for both.
//!
//! Backends write lines from inside loops that cannot stop for an error, so
//! the writer keeps the first I/O error, drops every line after it (a file
//! with a hole in the middle would mislead its reader; a truncated one is
//! refused as incomplete) and [`JsonlWriter::finish`] reports it.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
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

/// Why a JSON Lines file could not be read; the caller adds the path.
#[derive(Debug)]
pub enum LineError {
    Open(std::io::Error),
    Read { line: u64, source: std::io::Error },
    Parse { line: u64, source: serde_json::Error },
}

/// Streams the items of `path` to `f` with their (1-based) line numbers, in
/// file order. Blank lines are skipped; any other line that is not an item
/// stops the read with the line's error.
pub fn for_each_line<T: DeserializeOwned>(path: &Path, mut f: impl FnMut(u64, T)) -> Result<(), LineError> {
    let mut reader = BufReader::new(File::open(path).map_err(LineError::Open)?);
    let mut buf = String::new();
    let mut line = 0u64;
    loop {
        buf.clear();
        line += 1;
        let read = reader
            .read_line(&mut buf)
            .map_err(|source| LineError::Read { line, source })?;
        if read == 0 {
            return Ok(());
        }
        let text = buf.trim();
        if text.is_empty() {
            continue;
        }
        let item = serde_json::from_str(text).map_err(|source| LineError::Parse { line, source })?;
        f(line, item);
    }
}
