//! The start counter: how many times this pod's container has started. It
//! lives in the state folder (an emptyDir, which outlives container restarts
//! but not the pod), so each start knows its number — the model's restart
//! count, which keys its draws. The counter is bumped before the start plays
//! anything, since an OOM kill leaves no chance to write afterwards; it is
//! written to a temporary file and renamed over the old one, so a kill
//! mid-write never leaves a torn file.

use schedlab_core::pod::PodId;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The counter's file name inside the state folder.
pub const FILE_NAME: &str = "starts.json";

/// The state folder cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("state file {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("state file {path} is not a start counter: {source}")]
    Corrupt {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("state file {path}: the start count is at its maximum")]
    Overflow { path: PathBuf },
}

/// What the file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counter {
    /// the pod the count belongs to
    pub pod_id: u64,
    /// container starts so far
    pub starts: u32,
}

/// The start counter in a state folder.
#[derive(Debug, Clone)]
pub struct StartCounter {
    dir: PathBuf,
}

impl StartCounter {
    pub fn new(dir: impl Into<PathBuf>) -> StartCounter {
        StartCounter { dir: dir.into() }
    }

    pub fn path(&self) -> PathBuf {
        self.dir.join(FILE_NAME)
    }

    /// The number of the next start of `pod` (0 when none is recorded, or
    /// the file belongs to another pod), without bumping it.
    pub fn peek(&self, pod: PodId) -> Result<u32, StateError> {
        Ok(match self.read()? {
            Some(c) if c.pod_id == pod.0 => c.starts,
            Some(c) => {
                tracing::warn!(
                    recorded = c.pod_id,
                    pod = pod.0,
                    "the state folder counts another pod's starts; starting over"
                );
                0
            }
            None => 0,
        })
    }

    /// The number of this start of `pod`; records it as started.
    pub fn take(&self, pod: PodId) -> Result<u32, StateError> {
        let start = self.peek(pod)?;
        let starts = start
            .checked_add(1)
            .ok_or_else(|| StateError::Overflow { path: self.path() })?;
        self.write(Counter { pod_id: pod.0, starts })?;
        Ok(start)
    }

    /// What the file holds, if it exists.
    pub fn read(&self) -> Result<Option<Counter>, StateError> {
        let path = self.path();
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StateError::Io { path, source }),
        };
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|source| StateError::Corrupt { path, source })
    }

    fn write(&self, counter: Counter) -> Result<(), StateError> {
        let path = self.path();
        let io = |source| StateError::Io {
            path: path.clone(),
            source,
        };
        fs::create_dir_all(&self.dir).map_err(io)?;
        let tmp = self.dir.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
        let result = write_file(&tmp, &counter).and_then(|()| fs::rename(&tmp, &path));
        if result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        result.map_err(io)?;
        // the rename is durable once the folder is synced
        if let Ok(dir) = fs::File::open(&self.dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }
}

fn write_file(path: &Path, counter: &Counter) -> std::io::Result<()> {
    let mut file = fs::File::create(path)?;
    let text = serde_json::to_string(counter).map_err(std::io::Error::other)?;
    file.write_all(text.as_bytes())?;
    file.write_all(b"\n")?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_starts_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let counter = StartCounter::new(dir.path());
        assert_eq!(counter.read().unwrap(), None);
        assert_eq!(counter.peek(PodId(4)).unwrap(), 0);
        assert_eq!(counter.take(PodId(4)).unwrap(), 0);
        assert_eq!(counter.take(PodId(4)).unwrap(), 1);
        // a fresh process sees what the last one wrote
        let again = StartCounter::new(dir.path());
        assert_eq!(again.peek(PodId(4)).unwrap(), 2);
        assert_eq!(again.take(PodId(4)).unwrap(), 2);
        assert_eq!(again.read().unwrap(), Some(Counter { pod_id: 4, starts: 3 }));
        // no temporary file is left behind
        let names: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(FILE_NAME)]);
    }

    #[test]
    fn another_pods_count_starts_over() {
        let dir = tempfile::tempdir().unwrap();
        let counter = StartCounter::new(dir.path());
        counter.take(PodId(1)).unwrap();
        counter.take(PodId(1)).unwrap();
        assert_eq!(counter.take(PodId(2)).unwrap(), 0);
        assert_eq!(counter.read().unwrap(), Some(Counter { pod_id: 2, starts: 1 }));
    }

    #[test]
    fn creates_the_folder_and_reports_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let nested = StartCounter::new(dir.path().join("a/b"));
        assert_eq!(nested.take(PodId(9)).unwrap(), 0);
        fs::write(nested.path(), "garbage").unwrap();
        let err = nested.take(PodId(9)).unwrap_err();
        assert!(matches!(err, StateError::Corrupt { .. }), "{err}");
        assert!(err.to_string().contains("starts.json"), "{err}");
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        let dir = tempfile::tempdir().unwrap();
        let counter = StartCounter::new(dir.path());
        fs::write(counter.path(), r#"{"pod_id":1,"starts":4294967295}"#).unwrap();
        assert!(matches!(counter.take(PodId(1)), Err(StateError::Overflow { .. })));
    }

    #[test]
    fn unwritable_folder_is_an_io_error() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        fs::write(&file, "x").unwrap();
        let err = StartCounter::new(&file).take(PodId(1)).unwrap_err();
        assert!(matches!(err, StateError::Io { .. }), "{err}");
    }
}
