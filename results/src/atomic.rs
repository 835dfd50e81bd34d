//! Output files that appear whole or not at all: each is written to a
//! temporary name in its own folder, synced, and renamed over the final
//! name, so that an interrupted or failed write (Ctrl-C, a full disk) never
//! leaves part of a file under the final name.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The temporary name `path` is written under before it is renamed into
/// place: `.NAME.partial` in the same folder (hidden, and in the same file
/// system, so the rename is atomic).
pub fn partial_path(path: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(".partial");
    path.with_file_name(name)
}

/// Writes `bytes` to `path` atomically: to [`partial_path`] first, synced,
/// then renamed. On an error the partial file is removed and `path` is as
/// it was.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let partial = partial_path(path);
    let result = File::create(&partial)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_data()))
        .and_then(|()| std::fs::rename(&partial, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_replaces_the_old_one_and_leaves_no_partial() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("summary.csv");
        write(&path, b"old").unwrap();
        write(&path, b"new contents").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new contents");
        let names: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("summary.csv")]);
    }

    #[test]
    fn a_failed_write_leaves_the_final_name_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        // the final name is a non-empty directory: the rename fails after the data was written
        let path = tmp.path().join("report.html");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("keep"), "x").unwrap();
        assert!(write(&path, b"<html>").is_err());
        assert!(path.join("keep").is_file());
        assert!(!partial_path(&path).exists(), "partial file removed");
        // a folder that does not exist: nothing is created
        let missing = tmp.path().join("no/such/dir/file");
        assert!(write(&missing, b"x").is_err());
        assert!(!missing.exists());
    }

    #[test]
    fn the_partial_name_is_hidden_beside_the_file() {
        assert_eq!(
            partial_path(Path::new("a/b/report.md")),
            Path::new("a/b/.report.md.partial")
        );
    }
}
