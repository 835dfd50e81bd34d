//! Fetching Debian's `kubernetes` source package into the cache and
//! unpacking it (`apt-get source --download-only` + `dpkg-source -x`).

use super::error::ProvisionError;
use super::layout::CacheLayout;
use crate::external::{self, ExternalCommand};
use std::path::{Path, PathBuf};

/// The unpacked tree is complete once this file exists in it.
const MARKER: &str = "cmd/kube-apiserver/apiserver.go";

/// Ensures `cache.src()` holds the unpacked source; returns whether it had
/// to fetch it.
pub fn ensure(cache: &CacheLayout) -> Result<bool, ProvisionError> {
    let src = cache.src();
    if src.join(MARKER).is_file() {
        return Ok(false);
    }
    let dl = cache.root.join("dl");
    std::fs::create_dir_all(&dl).map_err(ProvisionError::io("cannot create", &dl))?;
    if find_dsc(&dl)?.is_none() {
        // gpgv may warn "No public key": apt already checked the files against the signed Release.
        external::run(
            &ExternalCommand::new(
                "apt-get",
                ["source", "-qq", "--download-only", "kubernetes"],
                "download Debian's Kubernetes source package",
            )
            .in_dir(&dl)
            .with_env("DEBIAN_FRONTEND", "noninteractive"),
        )?;
    }
    let dsc = find_dsc(&dl)?.ok_or_else(|| ProvisionError::NotFound {
        what: "kubernetes_*.dsc",
        dir: dl.clone(),
    })?;
    // Unpack elsewhere and rename, so an interrupted unpack never looks complete. Inside dl/, so
    // dpkg-source finds the orig tarball beside its target and copies nothing.
    let partial = dl.join("src.partial");
    remove_if_present(&partial)?;
    remove_if_present(&src)?;
    external::run_logged(
        &ExternalCommand::new("dpkg-source", ["-x"], "unpack the Kubernetes source package")
            .arg(&dsc)
            .arg(&partial),
        &dl.join("dpkg-source.log"),
    )?;
    std::fs::rename(&partial, &src).map_err(ProvisionError::io("cannot rename to", &src))?;
    Ok(true)
}

fn remove_if_present(path: &Path) -> Result<(), ProvisionError> {
    if path.symlink_metadata().is_ok() {
        std::fs::remove_dir_all(path).map_err(ProvisionError::io("cannot remove", path))?;
    }
    Ok(())
}

/// The `kubernetes_*.dsc` in `dir`, the newest by name when several.
pub fn find_dsc(dir: &Path) -> Result<Option<PathBuf>, ProvisionError> {
    let entries = std::fs::read_dir(dir).map_err(ProvisionError::io("cannot read", dir))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("kubernetes_") && n.ends_with(".dsc"))
        })
        .collect();
    found.sort();
    Ok(found.pop())
}

/// The Debian version a `.dsc` declares.
pub fn dsc_version(dsc_text: &str) -> Option<&str> {
    dsc_text.lines().find_map(|l| l.strip_prefix("Version:")).map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_dsc_and_its_version() {
        let dir = std::env::temp_dir().join(format!("schedlab-dsc-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(find_dsc(&dir).unwrap(), None);
        std::fs::write(
            dir.join("kubernetes_1.20.5+really1.20.2-1.dsc"),
            "Format: 3.0\nVersion: 1.20.5+really1.20.2-1\n",
        )
        .unwrap();
        std::fs::write(dir.join("kubernetes_1.20.5+really1.20.2.orig.tar.xz"), "").unwrap();
        let dsc = find_dsc(&dir).unwrap().unwrap();
        assert!(dsc.ends_with("kubernetes_1.20.5+really1.20.2-1.dsc"));
        assert_eq!(
            dsc_version(&std::fs::read_to_string(&dsc).unwrap()),
            Some("1.20.5+really1.20.2-1")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
