//! Cluster traces replayed as pod arrivals: the parser of Alibaba's
//! `openb_pod_list` CSV (cluster-trace-gpu-v2023) and a seeded generator of
//! small samples in that format (see FORMAT.md, "Replaying a trace").

mod openb;
pub mod sample;

pub use openb::{COLUMNS, MAX_HEADER_SHOWN, Trace, TraceRow, parse_openb};

use crate::error::one_line;
use std::cell::RefCell;
use std::collections::HashMap;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::rc::Rc;

/// Where a scenario's `replay` phases find their trace files (next to the
/// scenario file, or among a built-in's bundled files), and the traces
/// parsed so far: phases replaying one file parse it once.
#[derive(Debug)]
pub(crate) struct Files {
    source: Source,
    parsed: RefCell<HashMap<String, Rc<Trace>>>,
}

#[derive(Debug)]
enum Source {
    /// the scenario file's folder, and the paths outside it the user allowed
    Dir {
        dir: PathBuf,
        allowed: Vec<PathBuf>,
    },
    Bundled(&'static [(&'static str, &'static str)]),
}

impl Files {
    /// Files in the folder of the scenario file `origin` (the current
    /// directory for a bare file name), and the files `allowed` wherever
    /// they are.
    pub(crate) fn beside(origin: &str, allowed: &[PathBuf]) -> Files {
        let dir = std::path::Path::new(origin)
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), PathBuf::from);
        Files::new(Source::Dir {
            dir,
            allowed: allowed.to_vec(),
        })
    }

    /// A built-in's bundled files.
    pub(crate) fn bundled(files: &'static [(&'static str, &'static str)]) -> Files {
        Files::new(Source::Bundled(files))
    }

    fn new(source: Source) -> Files {
        Files {
            source,
            parsed: RefCell::default(),
        }
    }

    /// The trace file `name`, parsed.
    pub(crate) fn trace(&self, name: &str) -> Result<Rc<Trace>, TraceError> {
        if let Some(t) = self.parsed.borrow().get(name) {
            return Ok(Rc::clone(t));
        }
        let trace = Rc::new(parse_openb(&self.read(name)?)?);
        self.parsed.borrow_mut().insert(name.to_string(), Rc::clone(&trace));
        Ok(trace)
    }

    /// The text of the trace file `name`.
    fn read(&self, name: &str) -> Result<std::borrow::Cow<'static, str>, TraceError> {
        match &self.source {
            Source::Dir { dir, allowed } => read_capped(&confined(dir, name, allowed)?).map(std::borrow::Cow::Owned),
            Source::Bundled(files) => files
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, text)| std::borrow::Cow::Borrowed(*text))
                .ok_or_else(|| TraceError::Read {
                    reason: format!(
                        "the built-in bundles no such file (bundled: {})",
                        files.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
                    ),
                }),
        }
    }
}

/// The path of the trace `name` of a scenario in `dir`: a relative path
/// without `..` that stays in `dir` once symbolic links are followed, or a
/// path the user `allowed` (as written, or the same file).
fn confined(dir: &Path, name: &str, allowed: &[PathBuf]) -> Result<PathBuf, TraceError> {
    let written = Path::new(name);
    let path = dir.join(written);
    let canonical = |p: &Path| std::fs::canonicalize(p).ok();
    let is_allowed = allowed
        .iter()
        .any(|a| a == written || a == &path || canonical(a).is_some_and(|a| Some(a) == canonical(&path)));
    if is_allowed {
        return Ok(path);
    }
    let refuse = |reason: &str| Err(TraceError::Outside { reason: reason.into() });
    if written.has_root() || written.is_absolute() {
        return refuse("an absolute path");
    }
    if written
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return refuse("a path through `..`");
    }
    // a symbolic link in the folder may point anywhere
    if let (Some(inside), Some(file)) = (canonical(dir), canonical(&path))
        && !file.starts_with(&inside)
    {
        return refuse("a symbolic link to a file outside the scenario file's folder");
    }
    Ok(path)
}

/// Bytes of a trace file read at most: the whole openb_pod_list_default.csv
/// is about 0.6 MB, so 64 MiB leaves room for larger traces of that shape
/// while a wrong path (a disk image, a log) fails at once.
pub const MAX_TRACE_BYTES: u64 = 64 << 20;

/// A column of a trace file, 1-based, with its header name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    pub index: usize,
    pub name: &'static str,
}

/// Why a trace file could not be used; shown after the file's name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    /// The file does not exist, is not a regular file, is too large or
    /// cannot be read.
    #[error("cannot read the trace file: {}", one_line(reason))]
    Read { reason: String },
    /// The header lacks a column the format needs.
    #[error("line {line}: missing column `{column}` (the header has: {})", one_line(found))]
    MissingColumn {
        line: u64,
        column: &'static str,
        found: String,
    },
    /// The first line is not a header at all: it is not quoted, since the
    /// file may be anything (a secret, a kubeconfig) named by mistake.
    #[error(
        "line {line}: the first line is not a CSV header (its text is not shown); expected a header naming the columns {}",
        COLUMNS.join(", ")
    )]
    NotAHeader { line: u64 },
    /// The trace path leads out of the scenario file's folder and the user
    /// did not allow it.
    #[error(
        "{}: a trace path is relative to the scenario file's folder and stays inside it; to read a file elsewhere, name it with --allow-trace PATH",
        one_line(reason)
    )]
    Outside { reason: String },
    /// A row's field is not what its column holds.
    #[error("line {line}, {}: {}", column_detail(column, value), one_line(reason))]
    Field {
        line: u64,
        column: Column,
        value: String,
        reason: String,
    },
    /// A row without enough fields.
    #[error("line {line}: {}", one_line(reason))]
    Row { line: u64, reason: String },
}

impl TraceError {
    /// The 1-based line of the trace file the error is about, if any.
    pub fn line(&self) -> Option<u64> {
        match self {
            TraceError::Read { .. } | TraceError::Outside { .. } => None,
            TraceError::MissingColumn { line, .. }
            | TraceError::NotAHeader { line }
            | TraceError::Field { line, .. }
            | TraceError::Row { line, .. } => Some(*line),
        }
    }
}

fn column_detail<'a>(c: &'a Column, value: &'a str) -> ColumnDetail<'a> {
    ColumnDetail { column: c, value }
}

struct ColumnDetail<'a> {
    column: &'a Column,
    value: &'a str,
}

impl fmt::Display for ColumnDetail<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "column {} ({}) = {}",
            self.column.index,
            self.column.name,
            crate::error::shown(self.value)
        )
    }
}

/// Reads a trace file: a regular file of at most [`MAX_TRACE_BYTES`], read
/// through a capped reader so a file that grows while read cannot exceed it.
pub(crate) fn read_capped(path: &std::path::Path) -> Result<String, TraceError> {
    use std::io::Read;
    let fail = |reason: String| TraceError::Read { reason };
    let meta = std::fs::metadata(path).map_err(|e| fail(format!("{} ({e})", path.display())))?;
    if !meta.is_file() {
        return Err(fail(format!("{} is not a regular file", path.display())));
    }
    if meta.len() > MAX_TRACE_BYTES {
        return Err(fail(format!(
            "{} has {} bytes; trace files are capped at {} MiB",
            path.display(),
            meta.len(),
            MAX_TRACE_BYTES >> 20
        )));
    }
    let file = std::fs::File::open(path).map_err(|e| fail(format!("{} ({e})", path.display())))?;
    let mut bytes = Vec::new();
    file.take(MAX_TRACE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| fail(format!("{} ({e})", path.display())))?;
    if bytes.len() as u64 > MAX_TRACE_BYTES {
        return Err(fail(format!(
            "{} grew past {} MiB while read",
            path.display(),
            MAX_TRACE_BYTES >> 20
        )));
    }
    String::from_utf8(bytes).map_err(|e| fail(format!("{} is not UTF-8 text ({e})", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_is_parsed_once_however_often_it_is_asked_for() {
        const CSV: &str = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\np,1,1,0,0,,LS,Running,0,1,0\n";
        let files = Files::bundled(&[("t.csv", CSV)]);
        let first = files.trace("t.csv").unwrap();
        assert_eq!(first.rows.len(), 1);
        assert!(Rc::ptr_eq(&first, &files.trace("t.csv").unwrap()));
        assert!(matches!(files.trace("u.csv"), Err(TraceError::Read { .. })));
    }
}
