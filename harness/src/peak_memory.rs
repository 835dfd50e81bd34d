//! The process's peak resident memory, as the kernel counts it.

/// `VmHWM` of `/proc/self/status` in bytes; None where there is no such
/// file (not Linux) or it cannot be read.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    #[test]
    #[cfg(target_os = "linux")]
    fn a_running_process_has_a_peak() {
        assert!(super::peak_rss_bytes().is_some_and(|b| b > 0));
    }
}
