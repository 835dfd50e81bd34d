//! The run folder: where a `scenario` invocation writes its records,
//! manifests and summaries. While runs are under way the folder holds an
//! `INCOMPLETE` marker; it is removed only after everything was written, so
//! a folder without the marker is complete and one with it never looks so.
//! Every file is written under a temporary name and renamed into place.

use anyhow::{Context, Result, bail};
use std::fs;
use std::path::{Path, PathBuf};

pub const INCOMPLETE_MARKER: &str = "INCOMPLETE";
/// The invocation manifest at a run folder's root: a folder holding it is a run folder.
pub const MANIFEST_FILE: &str = "manifest.json";

#[derive(Debug)]
pub struct RunFolder {
    root: PathBuf,
}

impl RunFolder {
    /// Creates `root` (which must not exist, or be an empty folder) with the
    /// incomplete marker in it.
    pub fn create(root: &Path) -> Result<RunFolder> {
        if root.exists() {
            let mut entries = fs::read_dir(root).with_context(|| format!("reading {}", root.display()))?;
            if entries.next().is_some() {
                bail!(crate::exit::InputError(format!(
                    "--out {}: the folder exists and is not empty; choose another",
                    root.display()
                )));
            }
        }
        fs::create_dir_all(root).with_context(|| format!("creating run folder {}", root.display()))?;
        let folder = RunFolder {
            root: root.to_path_buf(),
        };
        fs::write(
            folder.root.join(INCOMPLETE_MARKER),
            "This run folder is incomplete: schedlab was interrupted or failed before finishing.\n",
        )
        .with_context(|| format!("writing {}", folder.root.join(INCOMPLETE_MARKER).display()))?;
        Ok(folder)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The folder of one (arm, seed) run, created on demand.
    pub fn run_dir(&self, arm: &str, seed: u64) -> Result<PathBuf> {
        let dir = self.root.join("runs").join(arm).join(format!("seed-{seed}"));
        fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(dir)
    }

    pub fn write(&self, name: &str, contents: &str) -> Result<()> {
        write_atomic(&self.root.join(name), contents.as_bytes())
    }

    /// Removes the incomplete marker: call last.
    pub fn mark_complete(&self) -> Result<()> {
        let path = self.root.join(INCOMPLETE_MARKER);
        fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))
    }
}

/// Writes `path` whole or not at all (a temporary name in its folder, then a
/// rename): an interrupted or failed write never leaves part of a file under
/// the final name. The error names the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    results::atomic::write(path, bytes).with_context(|| format!("writing {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_lives_until_complete() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("run");
        let folder = RunFolder::create(&root).unwrap();
        assert!(root.join(INCOMPLETE_MARKER).exists());
        folder.mark_complete().unwrap();
        assert!(!root.join(INCOMPLETE_MARKER).exists());
    }

    #[test]
    fn refuses_a_non_empty_folder() {
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("keep.txt"), "mine").unwrap();
        let err = RunFolder::create(tmp.path()).unwrap_err();
        assert!(err.to_string().contains("not empty"), "{err}");
        assert_eq!(fs::read_to_string(tmp.path().join("keep.txt")).unwrap(), "mine");
    }
}
