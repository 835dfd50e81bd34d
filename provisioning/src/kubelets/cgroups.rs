//! The node's cgroups in every cgroup v1 hierarchy: made before the kubelet
//! starts (it expects its `cgroupRoot` to exist everywhere), the node's own
//! processes moved into one, and at teardown every process under them
//! killed and the folders removed, so nothing the node started outlives it.

use super::error::KubeletError;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The mount points of the cgroup v1 hierarchies in `/proc/self/mountinfo` text.
pub fn v1_hierarchies(mountinfo: &str) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(|line| {
            // fields: id parent major:minor root mount-point options [optional...] - fstype source super-options
            let (before, after) = line.split_once(" - ")?;
            let fstype = after.split_whitespace().next()?;
            let mount_point = before.split_whitespace().nth(4)?;
            (fstype == "cgroup").then(|| PathBuf::from(unescape_mount_path(mount_point)))
        })
        .collect()
}

/// mountinfo writes a space, tab, newline and backslash in a path as octal escapes.
fn unescape_mount_path(text: &str) -> String {
    text.replace("\\040", " ")
        .replace("\\011", "\t")
        .replace("\\012", "\n")
        .replace("\\134", "\\")
}

/// This host's cgroup v1 hierarchies; real nodes need at least the memory one.
pub fn hierarchies() -> Result<Vec<PathBuf>, KubeletError> {
    let path = "/proc/self/mountinfo";
    let text = std::fs::read_to_string(path).map_err(KubeletError::io("cannot read", path))?;
    let found = v1_hierarchies(&text);
    if !found
        .iter()
        .any(|h| h.file_name().is_some_and(|n| n.to_string_lossy().contains("memory")))
    {
        return Err(KubeletError::HostUnfit {
            what: "cgroup v1 with the memory controller",
            why: format!("{path} lists no cgroup v1 memory hierarchy"),
        });
    }
    Ok(found)
}

/// Makes `name` in every hierarchy. A new cpuset group starts with no CPUs
/// and no memory nodes, in which nothing may run: it gets its parent's.
pub fn create(hierarchies: &[PathBuf], name: &str) -> Result<(), KubeletError> {
    for h in hierarchies {
        let dir = h.join(name);
        std::fs::create_dir_all(&dir).map_err(KubeletError::io("cannot create the cgroup", &dir))?;
        if dir.join("cpuset.cpus").exists() {
            for file in ["cpuset.cpus", "cpuset.mems"] {
                let from = h.join(file);
                let value = std::fs::read_to_string(&from).map_err(KubeletError::io("cannot read", &from))?;
                let to = dir.join(file);
                std::fs::write(&to, value.trim()).map_err(KubeletError::io("cannot write", &to))?;
            }
        }
    }
    Ok(())
}

/// Moves process `pid` into `name` in every hierarchy; what it starts later stays there.
pub fn enter(hierarchies: &[PathBuf], name: &str, pid: i32) -> Result<(), KubeletError> {
    for h in hierarchies {
        let procs = h.join(name).join("cgroup.procs");
        std::fs::write(&procs, pid.to_string()).map_err(KubeletError::io("cannot write", &procs))?;
    }
    Ok(())
}

/// Every process in `name` or below it, in any hierarchy.
pub fn processes(hierarchies: &[PathBuf], name: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for h in hierarchies {
        for dir in subtree(&h.join(name)) {
            if let Ok(text) = std::fs::read_to_string(dir.join("cgroup.procs")) {
                out.extend(text.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// `dir` and every folder below it, deepest first.
fn subtree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        if let Ok(entries) = std::fs::read_dir(&d) {
            for entry in entries.flatten() {
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    stack.push(entry.path());
                }
            }
            out.push(d);
        }
    }
    out.sort_by_key(|p| std::cmp::Reverse(p.components().count()));
    out
}

/// Kills every process in `name` (containers fork while dying, so until none
/// is left or `timeout` passes) and removes its folders in every hierarchy.
pub fn kill_and_remove(hierarchies: &[PathBuf], name: &str, timeout: Duration) -> Result<(), KubeletError> {
    let t0 = Instant::now();
    loop {
        let left = processes(hierarchies, name);
        if left.is_empty() {
            break;
        }
        if t0.elapsed() >= timeout {
            return Err(KubeletError::HostUnfit {
                what: "its processes gone at teardown",
                why: format!("{} processes were still in cgroup {name} after {timeout:?}", left.len()),
            });
        }
        for pid in left {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    for h in hierarchies {
        for dir in subtree(&h.join(name)) {
            remove_dir(&dir, t0, timeout)?;
        }
    }
    Ok(())
}

/// A cgroup folder whose last process has just exited can be busy for a moment.
fn remove_dir(dir: &Path, t0: Instant, timeout: Duration) -> Result<(), KubeletError> {
    loop {
        match std::fs::remove_dir(dir) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) if t0.elapsed() < timeout => {
                tracing::debug!(dir = %dir.display(), error = %e, "cgroup busy; retrying");
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => return Err(KubeletError::io("cannot remove the cgroup", dir)(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
25 30 0:23 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
26 25 0:24 / /sys/fs/cgroup ro,nosuid,nodev,noexec - tmpfs tmpfs ro,mode=755
27 26 0:25 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:9 - cgroup cgroup rw,memory
28 26 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
29 26 0:27 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
30 26 0:28 / /sys/fs/cgroup/odd\\040name rw,relatime - cgroup cgroup rw,name=odd
";

    #[test]
    fn only_v1_hierarchies_are_listed() {
        assert_eq!(
            v1_hierarchies(MOUNTINFO),
            vec![
                PathBuf::from("/sys/fs/cgroup/memory"),
                PathBuf::from("/sys/fs/cgroup/cpu,cpuacct"),
                PathBuf::from("/sys/fs/cgroup/odd name"),
            ]
        );
    }

    #[test]
    fn a_subtree_lists_the_deepest_folders_first() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("a/b/c")).unwrap();
        std::fs::create_dir_all(dir.path().join("a/d")).unwrap();
        let found = subtree(&dir.path().join("a"));
        assert_eq!(found.len(), 4);
        assert!(found[0].ends_with("a/b/c"));
        assert!(found.last().unwrap().ends_with("a"));
        assert!(subtree(&dir.path().join("missing")).is_empty());
    }
}
