//! The host changes real nodes make, recorded before they are made and
//! undone when the last real node on the host is gone.
//!
//! A kubelet writes kernel settings at every start, and the host paths its
//! node's mount namespace covers must exist as mount points. Several
//! control planes (tests run side by side) may have real nodes at once, so
//! the record is one per host, under `/run` (gone with a reboot, as the
//! kernel settings are), guarded by a file lock: the first user records the
//! original values and makes the missing mount points, the last one
//! restores and removes them.

use super::error::KubeletError;
use super::layout::HOST_PATHS;
use nix::fcntl::{Flock, FlockArg};
use std::path::{Path, PathBuf};

/// The folder of the host-wide record.
pub const LEDGER_DIR: &str = "/run/schedlab-real-nodes";

/// The kernel settings a 1.20 kubelet writes at start
/// (`setupKernelTunables` in pkg/kubelet/cm/container_manager_linux.go).
pub const KUBELET_SYSCTLS: &[&str] = &[
    "vm/overcommit_memory",
    "vm/panic_on_oom",
    "kernel/panic",
    "kernel/panic_on_oops",
    "kernel/keys/root_maxkeys",
    "kernel/keys/root_maxbytes",
];

/// What the host looked like before the first real node, and who uses it now.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ledger {
    /// (setting under /proc/sys, its value before)
    pub sysctls: Vec<(String, String)>,
    /// Mount points made for the nodes' namespaces, in the order made.
    pub created: Vec<PathBuf>,
    /// The state folders of the control planes whose real nodes use the host.
    pub users: Vec<PathBuf>,
}

/// The host-wide record, locked while held.
struct Locked {
    _lock: Flock<std::fs::File>,
    file: PathBuf,
}

fn lock(dir: &Path) -> Result<Locked, KubeletError> {
    std::fs::create_dir_all(dir).map_err(KubeletError::io("cannot create", dir))?;
    let lock_path = dir.join("lock");
    let file = std::fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(KubeletError::io("cannot open", &lock_path))?;
    let lock = Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, errno)| KubeletError::io("cannot lock", &lock_path)(errno.into()))?;
    Ok(Locked {
        _lock: lock,
        file: dir.join("ledger.json"),
    })
}

fn read(locked: &Locked) -> Result<Option<Ledger>, KubeletError> {
    match std::fs::read_to_string(&locked.file) {
        Ok(text) => serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| KubeletError::Malformed {
                what: "host record",
                path: locked.file.clone(),
                detail: e.to_string(),
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(KubeletError::io("cannot read", &locked.file)(e)),
    }
}

fn write(locked: &Locked, ledger: &Ledger) -> Result<(), KubeletError> {
    let text = serde_json::to_string_pretty(ledger).map_err(|e| KubeletError::Malformed {
        what: "host record",
        path: locked.file.clone(),
        detail: e.to_string(),
    })?;
    let partial = locked.file.with_extension("json.partial");
    std::fs::write(&partial, text).map_err(KubeletError::io("cannot write", &partial))?;
    std::fs::rename(&partial, &locked.file).map_err(KubeletError::io("cannot write", &locked.file))
}

/// Registers `user` (a state folder) as using the host for real nodes; the
/// first user records the kernel settings and makes the mount points.
pub fn join(user: &Path) -> Result<(), KubeletError> {
    let mount_points: Vec<&Path> = HOST_PATHS.iter().map(|(_, host)| Path::new(*host)).collect();
    join_in(Path::new(LEDGER_DIR), Path::new("/proc/sys"), &mount_points, user)
}

fn join_in(dir: &Path, proc_sys: &Path, mount_points: &[&Path], user: &Path) -> Result<(), KubeletError> {
    let locked = lock(dir)?;
    let mut ledger = match read(&locked)? {
        Some(ledger) => ledger,
        None => {
            let mut ledger = Ledger::default();
            for name in KUBELET_SYSCTLS {
                let path = proc_sys.join(name);
                let value = std::fs::read_to_string(&path).map_err(KubeletError::io("cannot read", &path))?;
                ledger.sysctls.push(((*name).to_owned(), value.trim().to_owned()));
            }
            // written before anything is made, so a crash in between leaves a record to undo from
            write(&locked, &ledger)?;
            for path in mount_points {
                make_missing(path, &mut ledger.created)?;
                write(&locked, &ledger)?;
            }
            ledger
        }
    };
    if !ledger.users.iter().any(|u| u == user) {
        ledger.users.push(user.to_path_buf());
    }
    write(&locked, &ledger)
}

/// Makes `path` and its missing parents, recording each folder made.
fn make_missing(path: &Path, created: &mut Vec<PathBuf>) -> Result<(), KubeletError> {
    let mut missing = Vec::new();
    let mut at = Some(path);
    while let Some(p) = at {
        if p.exists() {
            break;
        }
        missing.push(p.to_path_buf());
        at = p.parent();
    }
    for p in missing.into_iter().rev() {
        std::fs::create_dir(&p).map_err(KubeletError::io("cannot create", &p))?;
        created.push(p);
    }
    Ok(())
}

/// Unregisters `user`; the last one restores the kernel settings, removes
/// the mount points it made and the record. Returns whether the host was
/// given back (no user left).
pub fn leave(user: &Path) -> Result<bool, KubeletError> {
    leave_in(Path::new(LEDGER_DIR), Path::new("/proc/sys"), user)
}

fn leave_in(dir: &Path, proc_sys: &Path, user: &Path) -> Result<bool, KubeletError> {
    if !dir.join("ledger.json").exists() {
        return Ok(true);
    }
    let locked = lock(dir)?;
    let Some(mut ledger) = read(&locked)? else {
        return Ok(true);
    };
    ledger.users.retain(|u| u != user);
    if !ledger.users.is_empty() {
        write(&locked, &ledger)?;
        return Ok(false);
    }
    for (name, value) in &ledger.sysctls {
        let path = proc_sys.join(name);
        std::fs::write(&path, value).map_err(KubeletError::io("cannot restore", &path))?;
    }
    for made in ledger.created.iter().rev() {
        match std::fs::remove_dir(made) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            // something else put files there since: theirs to keep
            Err(e) => tracing::warn!(path = %made.display(), error = %e, "left in place"),
        }
    }
    std::fs::remove_file(&locked.file).map_err(KubeletError::io("cannot remove", &locked.file))?;
    let lock_file = dir.join("lock");
    let _ = std::fs::remove_file(&lock_file);
    drop(locked);
    let _ = std::fs::remove_dir(dir);
    Ok(true)
}

/// The host's current values of [`KUBELET_SYSCTLS`], to compare before and after.
pub fn sysctl_values() -> Vec<(String, Option<String>)> {
    KUBELET_SYSCTLS
        .iter()
        .map(|name| {
            let value = std::fs::read_to_string(Path::new("/proc/sys").join(name)).ok();
            ((*name).to_owned(), value.map(|v| v.trim().to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake /proc/sys holding each setting, and the record's folder beside it.
    fn fake_host() -> (tempfile::TempDir, PathBuf, PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let sys = root.path().join("sys");
        for name in KUBELET_SYSCTLS {
            let path = sys.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "7\n").unwrap();
        }
        let dir = root.path().join("ledger");
        (root, sys, dir)
    }

    #[test]
    fn the_last_user_restores_what_the_first_recorded() {
        let (root, sys, dir) = fake_host();
        let mount_point = root.path().join("var/lib/kubelet");
        let mount_points = [mount_point.as_path()];
        join_in(&dir, &sys, &mount_points, Path::new("/state/a")).unwrap();
        assert!(mount_point.is_dir());
        // a kubelet overwrites the settings
        std::fs::write(sys.join("kernel/panic"), "10").unwrap();
        join_in(&dir, &sys, &mount_points, Path::new("/state/b")).unwrap();
        let ledger: Ledger = serde_json::from_str(&std::fs::read_to_string(dir.join("ledger.json")).unwrap()).unwrap();
        assert_eq!(ledger.users.len(), 2);
        assert!(ledger.sysctls.iter().all(|(_, v)| v == "7"), "{ledger:?}");
        assert!(!leave_in(&dir, &sys, Path::new("/state/a")).unwrap());
        assert_eq!(std::fs::read_to_string(sys.join("kernel/panic")).unwrap(), "10");
        assert!(leave_in(&dir, &sys, Path::new("/state/b")).unwrap());
        assert_eq!(std::fs::read_to_string(sys.join("kernel/panic")).unwrap(), "7");
        assert!(!dir.exists());
        assert!(!root.path().join("var").exists(), "the mount points made are removed");
    }

    #[test]
    fn leaving_a_host_nobody_joined_is_nothing() {
        let (_root, sys, dir) = fake_host();
        assert!(leave_in(&dir, &sys, Path::new("/state/a")).unwrap());
        assert!(!dir.exists());
    }

    #[test]
    fn missing_folders_and_parents_are_made_and_recorded_in_order() {
        let root = tempfile::tempdir().unwrap();
        let mut created = Vec::new();
        make_missing(&root.path().join("a/b/c"), &mut created).unwrap();
        assert_eq!(
            created,
            vec![
                root.path().join("a"),
                root.path().join("a/b"),
                root.path().join("a/b/c")
            ]
        );
        let mut again = Vec::new();
        make_missing(&root.path().join("a/b/c"), &mut again).unwrap();
        assert!(again.is_empty());
    }
}
