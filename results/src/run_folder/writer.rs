//! Writing a run folder. While runs are under way the folder holds an
//! `INCOMPLETE` marker; it is removed only after everything was written, so
//! a folder without the marker is complete and one with it never looks so.
//! Every file is written under a temporary name and renamed into place.

use super::layout::{INCOMPLETE_MARKER, run_dir};
use std::fs;
use std::path::{Path, PathBuf};

/// Why a run folder could not be made or written.
#[derive(Debug, thiserror::Error)]
pub enum FolderError {
    /// the folder the user chose (`--out`) cannot become a run folder
    #[error("--out {}: {what}", path.display())]
    Unusable { path: PathBuf, what: String },
    // `error`, not `source`: the message holds the cause already.
    #[error("writing {}: {error}", path.display())]
    Write { path: PathBuf, error: std::io::Error },
    #[error("creating {}: {error}", path.display())]
    CreateDir { path: PathBuf, error: std::io::Error },
    #[error("removing {}: {error}", path.display())]
    Remove { path: PathBuf, error: std::io::Error },
    #[error("serialising {what} as JSON: {error}")]
    Json {
        what: &'static str,
        error: serde_json::Error,
    },
}

impl FolderError {
    /// Whether the user's input caused it (an unusable `--out`).
    pub fn is_input_error(&self) -> bool {
        match self {
            FolderError::Unusable { .. } => true,
            FolderError::Write { .. }
            | FolderError::CreateDir { .. }
            | FolderError::Remove { .. }
            | FolderError::Json { .. } => false,
        }
    }
}

/// Why a folder holding an `INCOMPLETE` marker is refused: another
/// invocation took it (or one was interrupted there).
const IN_USE: &str = "already in use: another schedlab is writing it (or one was interrupted there; its INCOMPLETE \
                      marker says so); choose another";

/// The file [`RunFolder::preflight`] writes and removes in an existing folder.
const WRITE_CHECK: &str = ".schedlab-write-check";

/// How often making a folder is tried again when a folder on its path
/// vanished meanwhile.
const CLAIM_ATTEMPTS: u32 = 64;

/// `make`, again while it fails because a folder on its path vanished:
/// another invocation's [`RunFolder::preflight`] removes the empty folders it
/// made to check a path, which may be ours too.
fn retry_vanished<T>(mut make: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    let mut attempts = 0;
    loop {
        match make() {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && attempts < CLAIM_ATTEMPTS => attempts += 1,
            other => return other,
        }
    }
}

#[derive(Debug)]
pub struct RunFolder {
    root: PathBuf,
}

impl RunFolder {
    /// Checks, without leaving anything behind, that `root` can become a run
    /// folder: it does not exist and can be created, or it is an empty folder
    /// that can be written. Called before a cluster is connected or made, so
    /// an unusable `--out` costs seconds, not a provisioned cluster.
    pub fn preflight(root: &Path) -> crate::Result<()> {
        let bad = |what: String| FolderError::Unusable {
            path: root.to_path_buf(),
            what,
        };
        // an existing folder may vanish under the checks below: another
        // invocation's preflight removes the folders it created to check
        // them; the folder is then checked again as a fresh one
        let mut attempts = 0;
        // one look at what is there: a folder that vanishes between two
        // looks (`exists`, then `is_dir`) was taken for a file
        while let Ok(found) = fs::metadata(root) {
            if !found.is_dir() {
                return Err(bad("a file is there, not a folder; choose another".into()).into());
            }
            let vanished = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound && attempts < CLAIM_ATTEMPTS;
            let entries = match fs::read_dir(root) {
                Ok(entries) => entries,
                Err(e) if vanished(&e) => {
                    attempts += 1;
                    continue;
                }
                Err(e) => return Err(bad(format!("cannot be read: {e}")).into()),
            };
            // another invocation's write check is no content
            let mut entries = entries.filter(|e| e.as_ref().map_or(true, |e| e.file_name() != WRITE_CHECK));
            if entries.next().is_some() {
                if root.join(INCOMPLETE_MARKER).exists() {
                    return Err(bad(IN_USE.into()).into());
                }
                return Err(bad("the folder exists and is not empty; choose another".into()).into());
            }
            let probe = root.join(WRITE_CHECK);
            match fs::write(&probe, b"") {
                Ok(()) => {
                    let _ = fs::remove_file(&probe);
                    return Ok(());
                }
                Err(e) if vanished(&e) => attempts += 1,
                Err(e) => return Err(bad(format!("cannot be written: {e}")).into()),
            }
        }
        // create it and every missing parent, then remove what this call
        // created (not a folder another invocation made meanwhile)
        retry_vanished(|| {
            let mut missing = Vec::new();
            let mut next = Some(root);
            while let Some(dir) = next.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
                missing.push(dir);
                next = dir.parent();
            }
            let mut created = Vec::new();
            let mut made = Ok(());
            for dir in missing.iter().rev() {
                match fs::create_dir(dir) {
                    Ok(()) => created.push(*dir),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => {
                        made = Err(e);
                        break;
                    }
                }
            }
            for dir in created.iter().rev() {
                let _ = fs::remove_dir(dir);
            }
            made
        })
        .map_err(|e| bad(format!("cannot be created: {e}")))?;
        Ok(())
    }

    /// Creates `root` (which must not exist, or be an empty folder) with the
    /// incomplete marker in it. The marker is created exclusively (it must
    /// not exist yet) and first, so of two invocations racing for one fresh
    /// folder exactly one takes it; the other is refused ("already in use")
    /// before it writes anything there.
    pub fn create(root: &Path) -> crate::Result<RunFolder> {
        RunFolder::preflight(root)?;
        let bad = |what: String| FolderError::Unusable {
            path: root.to_path_buf(),
            what,
        };
        let folder = RunFolder {
            root: root.to_path_buf(),
        };
        let marker = folder.root.join(INCOMPLETE_MARKER);
        let claimed = retry_vanished(|| {
            fs::create_dir_all(root)?;
            fs::OpenOptions::new().write(true).create_new(true).open(&marker)
        });
        let mut file = match claimed {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Err(bad(IN_USE.into()).into()),
            Err(e) => return Err(bad(format!("cannot be created: {e}")).into()),
        };
        std::io::Write::write_all(
            &mut file,
            b"This run folder is incomplete: schedlab was interrupted or failed before finishing.\n",
        )
        .map_err(|e| bad(format!("cannot be written: {e}")))?;
        Ok(folder)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of one (arm, seed) run, created on demand.
    pub fn run_dir(&self, arm: &str, seed: u64) -> crate::Result<PathBuf> {
        let dir = run_dir(&self.root, arm, seed);
        fs::create_dir_all(&dir).map_err(|error| FolderError::CreateDir {
            path: dir.clone(),
            error,
        })?;
        Ok(dir)
    }

    /// Writes `name` (a path relative to the folder) whole or not at all.
    pub fn write(&self, name: &str, contents: &str) -> crate::Result<()> {
        write_atomic(&self.root.join(name), contents.as_bytes())
    }

    /// Appends `contents` to `name` (a path relative to the folder), creating
    /// it if need be: for a file that grows as the work goes (a training
    /// curve), so an interrupted run keeps every row written so far without
    /// rewriting them all each time.
    pub fn append(&self, name: &str, contents: &str) -> crate::Result<()> {
        use std::io::Write;
        let path = self.root.join(name);
        let written = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut f| f.write_all(contents.as_bytes()).and_then(|()| f.flush()));
        written.map_err(|error| FolderError::Write { path, error })?;
        Ok(())
    }

    /// Writes `value` as pretty JSON to `name` (a path relative to the folder).
    pub fn write_json<T: serde::Serialize>(&self, name: &str, what: &'static str, value: &T) -> crate::Result<()> {
        write_json(&self.root.join(name), what, value)
    }

    /// Removes the incomplete marker: call last.
    pub fn mark_complete(&self) -> crate::Result<()> {
        let path = self.root.join(INCOMPLETE_MARKER);
        fs::remove_file(&path).map_err(|error| FolderError::Remove { path, error })?;
        Ok(())
    }
}

/// Writes `path` whole or not at all (a temporary name in its folder, then a
/// rename): an interrupted or failed write never leaves part of a file under
/// the final name. The error names the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> crate::Result<()> {
    crate::atomic::write(path, bytes).map_err(|error| FolderError::Write {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(())
}

/// Writes `value` to `path` as pretty JSON with a final newline, whole or not at all.
pub fn write_json<T: serde::Serialize>(path: &Path, what: &'static str, value: &T) -> crate::Result<()> {
    let text = super::manifests::to_pretty_json(value).map_err(|error| FolderError::Json { what, error })?;
    write_atomic(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_adds_to_the_end() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = RunFolder::create(&tmp.path().join("run")).unwrap();
        folder.append("curve.csv", "a,b\n").unwrap();
        folder.append("curve.csv", "1,2\n").unwrap();
        assert_eq!(
            fs::read_to_string(tmp.path().join("run/curve.csv")).unwrap(),
            "a,b\n1,2\n"
        );
    }

    #[test]
    fn marker_lives_until_complete() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("run");
        let folder = RunFolder::create(&root).unwrap();
        assert!(root.join(INCOMPLETE_MARKER).exists());
        folder.mark_complete().unwrap();
        assert!(!root.join(INCOMPLETE_MARKER).exists());
    }

    /// Two invocations racing for one fresh `--out`: the loser sometimes
    /// failed with "manifest.json: No such file or directory". Exactly one
    /// takes the folder; every other is told it is in use, before writing.
    #[test]
    fn of_invocations_racing_for_one_folder_exactly_one_takes_it() {
        let tmp = tempfile::tempdir().unwrap();
        for round in 0..40 {
            let root = tmp.path().join(format!("round-{round}/out"));
            let barrier = std::sync::Barrier::new(4);
            let outcomes: Vec<Result<RunFolder, String>> = std::thread::scope(|scope| {
                let handles: Vec<_> = (0..4)
                    .map(|_| {
                        scope.spawn(|| {
                            barrier.wait();
                            RunFolder::create(&root).map_err(|e| {
                                assert!(e.is_input_error(), "{e}");
                                e.to_string()
                            })
                        })
                    })
                    .collect();
                handles.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let taken = outcomes.iter().filter(|o| o.is_ok()).count();
            assert_eq!(taken, 1, "round {round}: {outcomes:?}");
            for err in outcomes.iter().filter_map(|o| o.as_ref().err()) {
                assert!(err.contains("already in use"), "round {round}: {err}");
            }
            assert!(root.join(INCOMPLETE_MARKER).is_file());
        }
        // and one that comes later is told the same
        let root = tmp.path().join("later");
        let _first = RunFolder::create(&root).unwrap();
        let err = RunFolder::create(&root).unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("--out {}: already in use", root.display())),
            "{err}"
        );
    }

    #[test]
    fn refuses_a_non_empty_folder() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("keep.txt"), "mine").unwrap();
        let err = RunFolder::create(tmp.path()).unwrap_err();
        assert!(err.to_string().contains("not empty"), "{err}");
        assert!(err.is_input_error());
        assert_eq!(fs::read_to_string(tmp.path().join("keep.txt")).unwrap(), "mine");
    }

    #[test]
    fn an_unusable_out_is_named_and_the_check_leaves_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("afile");
        fs::write(&file, "mine").unwrap();
        for (out, needle) in [
            (file.clone(), "a file is there"),
            (file.join("below"), "cannot be created"),
        ] {
            let err = RunFolder::create(&out).unwrap_err();
            assert!(err.is_input_error(), "{err}");
            let text = err.to_string();
            assert!(
                text.starts_with(&format!("--out {}", out.display())) && text.contains(needle),
                "{text}"
            );
        }
        assert_eq!(fs::read_to_string(&file).unwrap(), "mine");
        // a usable one is checked without being created, nested parents included
        let nested = tmp.path().join("a/b/c");
        RunFolder::preflight(&nested).unwrap();
        assert!(!tmp.path().join("a").exists());
        let empty = tmp.path().join("empty");
        fs::create_dir(&empty).unwrap();
        RunFolder::preflight(&empty).unwrap();
        assert_eq!(fs::read_dir(&empty).unwrap().count(), 0);
    }

    #[test]
    fn a_write_that_fails_names_the_file_and_is_not_the_users_input() {
        let tmp = tempfile::tempdir().unwrap();
        let folder = RunFolder::create(&tmp.path().join("run")).unwrap();
        // a folder where the file should go: the rename into place fails
        fs::create_dir_all(folder.root().join("summary.csv").join("x")).unwrap();
        let err = folder.write("summary.csv", "arm\n").unwrap_err();
        assert!(err.to_string().contains("summary.csv"), "{err}");
        assert!(!err.is_input_error());
    }
}
