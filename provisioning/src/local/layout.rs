//! Where things live: the cache of built binaries and the state folder of
//! one running control plane.

use super::error::ProvisionError;
use std::path::{Path, PathBuf};

/// The environment variable that moves the cache.
pub const CACHE_ENV: &str = "SCHEDLAB_CACHE";

/// The cache folder: `$SCHEDLAB_CACHE`, else `~/.cache/schedlab/k8s`.
pub fn default_cache_dir() -> crate::Result<PathBuf> {
    Ok(cache_dir_from(std::env::var_os(CACHE_ENV), std::env::var_os("HOME"))?)
}

fn cache_dir_from(
    cache: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Result<PathBuf, ProvisionError> {
    match (cache, home) {
        (Some(c), _) if !c.is_empty() => Ok(PathBuf::from(c)),
        (_, Some(h)) if !h.is_empty() => Ok(PathBuf::from(h).join(".cache/schedlab/k8s")),
        _ => Err(ProvisionError::NoCacheDir),
    }
}

/// The default state folder: `<cache>/local`.
pub fn default_state_dir() -> crate::Result<PathBuf> {
    Ok(default_cache_dir()?.join("local"))
}

/// The cache: Debian source, GOPATH, Go build cache and the built binaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CacheLayout {
    pub root: PathBuf,
}

impl CacheLayout {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }
    pub fn bin(&self) -> PathBuf {
        self.root.join("bin")
    }
    pub fn binary(&self, name: &str) -> PathBuf {
        self.bin().join(name)
    }
    pub fn src(&self) -> PathBuf {
        self.root.join("src")
    }
    pub fn gopath(&self) -> PathBuf {
        self.root.join("gopath")
    }
    /// The source seen through GOPATH, as the 1.20 build expects it.
    pub fn gopath_src(&self) -> PathBuf {
        self.gopath().join("src/k8s.io/kubernetes")
    }
    pub fn gocache(&self) -> PathBuf {
        self.root.join("gocache")
    }
    pub fn build_log(&self) -> PathBuf {
        self.root.join("build.log")
    }
}

/// The state of one control plane: PKI, kubeconfigs, logs, pid files, etcd data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateLayout {
    pub root: PathBuf,
}

impl StateLayout {
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }
    pub fn pki(&self) -> PathBuf {
        self.root.join("pki")
    }
    pub fn pki_file(&self, name: &str) -> PathBuf {
        self.pki().join(name)
    }
    pub fn logs(&self) -> PathBuf {
        self.root.join("log")
    }
    pub fn log(&self, component: &str) -> PathBuf {
        self.logs().join(format!("{component}.log"))
    }
    pub fn pids(&self) -> PathBuf {
        self.root.join("pids")
    }
    pub fn pid_file(&self, component: &str) -> PathBuf {
        self.pids().join(format!("{component}.pid"))
    }
    pub fn kubeconfig(&self, user: &str) -> PathBuf {
        self.root.join(format!("{user}.kubeconfig"))
    }
    pub fn scheduler_config(&self) -> PathBuf {
        self.root.join("scheduler-config.yaml")
    }
    pub fn etcd_data(&self) -> PathBuf {
        self.root.join("etcd-data")
    }
    pub fn cluster_file(&self) -> PathBuf {
        self.root.join("cluster.json")
    }
    pub fn exists(&self) -> bool {
        Path::new(&self.root).is_dir()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_env_wins_over_home() {
        assert_eq!(
            cache_dir_from(Some("/c".into()), Some("/h".into())).unwrap(),
            PathBuf::from("/c")
        );
        assert_eq!(
            cache_dir_from(None, Some("/h".into())).unwrap(),
            PathBuf::from("/h/.cache/schedlab/k8s")
        );
        assert_eq!(
            cache_dir_from(Some("".into()), Some("/h".into())).unwrap(),
            PathBuf::from("/h/.cache/schedlab/k8s")
        );
        assert!(matches!(cache_dir_from(None, None), Err(ProvisionError::NoCacheDir)));
    }
}
