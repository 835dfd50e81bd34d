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
    /// Checks, without leaving anything behind, that `root` can become a run
    /// folder: it does not exist and can be created, or it is an empty folder
    /// that can be written. Called before a cluster is connected or made, so
    /// an unusable `--out` costs seconds, not a provisioned cluster.
    pub fn preflight(root: &Path) -> Result<()> {
        let bad = |what: String| crate::exit::InputError(format!("--out {}: {what}", root.display()));
        if root.exists() {
            if !root.is_dir() {
                bail!(bad("a file is there, not a folder; choose another".into()));
            }
            let mut entries = fs::read_dir(root).map_err(|e| bad(format!("cannot be read: {e}")))?;
            if entries.next().is_some() {
                bail!(bad("the folder exists and is not empty; choose another".into()));
            }
            let probe = root.join(".schedlab-write-check");
            fs::write(&probe, b"").map_err(|e| bad(format!("cannot be written: {e}")))?;
            let _ = fs::remove_file(&probe);
            return Ok(());
        }
        // create it and every missing parent, then remove what was created
        let mut created = Vec::new();
        let mut missing = Some(root);
        while let Some(dir) = missing.filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            created.push(dir.to_path_buf());
            missing = dir.parent();
        }
        let made = fs::create_dir_all(root);
        for dir in created.iter() {
            let _ = fs::remove_dir(dir);
        }
        made.map_err(|e| bad(format!("cannot be created: {e}")))?;
        Ok(())
    }

    /// Creates `root` (which must not exist, or be an empty folder) with the
    /// incomplete marker in it.
    pub fn create(root: &Path) -> Result<RunFolder> {
        RunFolder::preflight(root)?;
        let bad = |what: String| crate::exit::InputError(format!("--out {}: {what}", root.display()));
        fs::create_dir_all(root).map_err(|e| bad(format!("cannot be created: {e}")))?;
        let folder = RunFolder {
            root: root.to_path_buf(),
        };
        fs::write(
            folder.root.join(INCOMPLETE_MARKER),
            "This run folder is incomplete: schedlab was interrupted or failed before finishing.\n",
        )
        .map_err(|e| bad(format!("cannot be written: {e}")))?;
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
            assert!(err.downcast_ref::<crate::exit::InputError>().is_some(), "{err}");
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
}
