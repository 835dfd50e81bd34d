//! The run folder's JSON Lines files (records.jsonl, decisions.jsonl): one
//! buffered writer and one streaming reader for both.
//!
//! Backends write lines from inside loops that cannot stop for an error, so
//! the writer keeps the first I/O error, drops every line after it (a file
//! with a hole in the middle would mislead its reader; a truncated one is
//! refused as incomplete) and [`JsonlWriter::finish`] reports it.
//!
//! The lines go to a hidden temporary file beside the final one
//! ([`crate::atomic::partial_path`]), renamed into place by `finish`: a run
//! that is interrupted or fails leaves no file under the final name.

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct JsonlWriter {
    path: PathBuf,
    /// where the lines go until `finish` renames it to `path`; None for a
    /// device or a pipe, written in place
    partial: Option<PathBuf>,
    writer: BufWriter<File>,
    error: Option<std::io::Error>,
    written: u64,
}

impl JsonlWriter {
    /// Starts the file at `path` (replaced when `finish` succeeds).
    pub fn create(path: &Path) -> std::io::Result<JsonlWriter> {
        let partial = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::IsADirectory,
                    "a folder is in the way",
                ));
            }
            // a device or a pipe (/dev/null, /dev/full): nothing to rename over
            Ok(m) if !m.is_file() => None,
            _ => Some(crate::atomic::partial_path(path)),
        };
        let file = File::create(partial.as_deref().unwrap_or(path))?;
        Ok(JsonlWriter {
            path: path.to_path_buf(),
            partial,
            writer: BufWriter::new(file),
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

    /// Flushes and syncs the file and renames it into place; the first error
    /// met while writing, if any (and then no file is left under the name).
    pub fn finish(mut self) -> Result<u64, (PathBuf, std::io::Error)> {
        let result = match self.error.take() {
            Some(source) => Err(source),
            None => self.writer.flush().and_then(|()| self.writer.get_ref().sync_data()),
        };
        let result = match (&self.partial, result) {
            (Some(partial), Ok(())) => std::fs::rename(partial, &self.path),
            (_, result) => result,
        };
        match result {
            Ok(()) => Ok(self.written),
            Err(source) => {
                if let Some(partial) = &self.partial {
                    let _ = std::fs::remove_file(partial);
                }
                Err((self.path, source))
            }
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
