//! Held-out work: scenario files in a folder marked by [`HELDOUT_MARKER`]
//! (`evaluations/heldout/`) are what a model is judged on, so training must
//! never read them, however it is started (`schedlab train`, a sweep's
//! training cells).

use std::path::{Path, PathBuf};

/// The file that marks a folder of held-out scenarios.
pub const HELDOUT_MARKER: &str = ".heldout";

/// The marked folder a scenario named `name` lies in (or below), if it is a
/// file there. Built-in names are not files and are never held out; a file
/// that does not exist is left for the scenario loader to name.
pub fn heldout_folder(name: &str) -> Option<PathBuf> {
    if crate::builtin(name).is_some() {
        return None;
    }
    let path = Path::new(name).canonicalize().ok()?;
    path.parent()
        .into_iter()
        .flat_map(Path::ancestors)
        .find(|dir| dir.join(HELDOUT_MARKER).is_file())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_below_a_marked_folder_is_held_out_and_a_builtin_never() {
        let tmp = tempfile::tempdir().unwrap();
        let marked = tmp.path().join("heldout");
        std::fs::create_dir_all(marked.join("deeper")).unwrap();
        std::fs::write(marked.join(HELDOUT_MARKER), "held out\n").unwrap();
        let inside = marked.join("deeper/a.yaml");
        std::fs::write(&inside, "name: a\n").unwrap();
        let outside = tmp.path().join("b.yaml");
        std::fs::write(&outside, "name: b\n").unwrap();
        let found = heldout_folder(inside.to_str().unwrap()).unwrap();
        assert_eq!(found, marked.canonicalize().unwrap());
        assert_eq!(heldout_folder(outside.to_str().unwrap()), None);
        assert_eq!(heldout_folder("churn"), None);
        assert_eq!(heldout_folder(tmp.path().join("missing.yaml").to_str().unwrap()), None);
    }
}
