//! What several end-to-end tests share.
#![allow(dead_code)]

/// The pid of a process of this machine (a cell's process, or a pod's) whose command line holds every one of
/// `needles`, other than the test's own.
pub fn pid_with(needles: &[&str]) -> Option<i32> {
    for entry in std::fs::read_dir("/proc").ok()? {
        let entry = entry.ok()?;
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid == std::process::id() as i32 {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if needles.iter().all(|n| cmdline.contains(n)) {
            return Some(pid);
        }
    }
    None
}
