//! A control plane that lives as long as a value: brought up for one run or
//! one test and stopped when dropped, also when the holder fails half-way.

use super::{LocalCluster, LocalOptions};
use std::path::PathBuf;

/// A [`LocalCluster`] that is taken down when dropped.
#[derive(Debug)]
pub struct ScopedCluster {
    cluster: Option<LocalCluster>,
    /// a private state folder ([`LocalOptions::private`]) is removed after `down`
    remove_state: Option<PathBuf>,
}

impl ScopedCluster {
    /// Brings a control plane up (see [`super::up`]).
    pub fn up(opts: &LocalOptions) -> crate::Result<ScopedCluster> {
        let private = opts.state_dir.parent() == Some(std::env::temp_dir().as_path())
            && opts
                .state_dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("schedlab-"));
        match super::up(opts) {
            Ok(cluster) => Ok(ScopedCluster {
                cluster: Some(cluster),
                remove_state: private.then(|| opts.state_dir.clone()),
            }),
            Err(err) => {
                // `up` stopped what it started; a private folder is nobody else's to keep
                if private {
                    let _ = std::fs::remove_dir_all(&opts.state_dir);
                }
                Err(err)
            }
        }
    }

    /// Takes the control plane down now, reporting what went wrong.
    pub fn down(mut self) -> crate::Result<()> {
        let outcome = match self.cluster.take() {
            Some(c) => c.down().map(|_| ()),
            None => Ok(()),
        };
        self.remove_private_state();
        outcome
    }

    fn remove_private_state(&mut self) {
        if let Some(dir) = self.remove_state.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl std::ops::DerefMut for ScopedCluster {
    #[allow(clippy::expect_used)]
    fn deref_mut(&mut self) -> &mut LocalCluster {
        self.cluster
            .as_mut()
            .expect("a scoped cluster holds its cluster until dropped")
    }
}

impl std::ops::Deref for ScopedCluster {
    type Target = LocalCluster;
    #[allow(clippy::expect_used)]
    fn deref(&self) -> &LocalCluster {
        // Only `down` and `drop` take the cluster, and both consume self.
        self.cluster
            .as_ref()
            .expect("a scoped cluster holds its cluster until dropped")
    }
}

impl Drop for ScopedCluster {
    fn drop(&mut self) {
        if let Some(c) = self.cluster.take()
            && let Err(err) = c.down()
        {
            tracing::warn!(error = %err, "stopping the local control plane");
        }
        self.remove_private_state();
    }
}

impl LocalOptions {
    /// Options for a control plane of its own: the shared binary cache, and a
    /// state folder `<tmp>/schedlab-<name>-<pid>` that no other process uses,
    /// so tests and runs in parallel do not stop each other's components.
    pub fn private(name: &str) -> crate::Result<LocalOptions> {
        let mut opts = LocalOptions::from_env()?;
        opts.state_dir = private_state_dir(name);
        Ok(opts)
    }
}

fn private_state_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("schedlab-{name}-{}", std::process::id()))
}
