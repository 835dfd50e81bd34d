//! How many real nodes this machine holds: an estimate from its available
//! memory and its cores, checked before anything starts.

use super::error::KubeletError;

/// Memory one real node takes with tens of pods: kubelet 66–109 MiB,
/// containerd 37–81 MiB, about 3 MiB per pod's shim plus the pods' own
/// use (measured on a 2-core, 24 GiB machine), rounded up for head-room.
pub const PER_NODE_MIB: u64 = 512;

/// Every kubelet's cAdvisor watches every cgroup on the host, so kubelet CPU
/// grows with the host's pod count: 3–5 nodes with tens of pods each were
/// comfortable on 2 cores.
pub const NODES_PER_CORE: usize = 2;

/// What the estimate was made from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    pub available_mib: u64,
    /// all of its memory, in bytes (exactly what a kubelet reports as capacity)
    pub total_bytes: u64,
    pub cores: usize,
}

impl Machine {
    /// This machine: `MemAvailable` of /proc/meminfo and the cores this process may use.
    pub fn this() -> Result<Machine, KubeletError> {
        let path = "/proc/meminfo";
        let text = std::fs::read_to_string(path).map_err(KubeletError::io("cannot read", path))?;
        let available_mib = mem_available_mib(&text).ok_or_else(|| KubeletError::Malformed {
            what: "memory summary",
            path: path.into(),
            detail: "no MemAvailable line".into(),
        })?;
        let total_bytes = mem_total_bytes(&text).unwrap_or(available_mib << 20);
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Ok(Machine {
            available_mib,
            total_bytes,
            cores,
        })
    }

    /// The number of real nodes it holds (at most [`super::layout::MAX_NODES`]).
    pub fn fits(&self) -> usize {
        let by_memory = usize::try_from(self.available_mib / PER_NODE_MIB).unwrap_or(usize::MAX);
        by_memory
            .min(self.cores.saturating_mul(NODES_PER_CORE))
            .min(super::layout::MAX_NODES)
    }

    /// An error when `asked` nodes do not fit, naming the estimate.
    pub fn check(&self, asked: usize) -> Result<(), KubeletError> {
        let fits = self.fits();
        if asked > fits {
            return Err(KubeletError::TooMany {
                asked,
                fits,
                free_mib: self.available_mib,
                per_node_mib: PER_NODE_MIB,
                cores: self.cores,
                nodes_per_core: NODES_PER_CORE,
            });
        }
        Ok(())
    }
}

/// `MemAvailable` of /proc/meminfo text, in MiB.
pub fn mem_available_mib(meminfo: &str) -> Option<u64> {
    meminfo_mib(meminfo, "MemAvailable:")
}

/// `MemTotal` of /proc/meminfo text, in bytes.
pub fn mem_total_bytes(meminfo: &str) -> Option<u64> {
    meminfo_kib(meminfo, "MemTotal:").map(|kib| kib * 1024)
}

fn meminfo_mib(meminfo: &str, key: &str) -> Option<u64> {
    meminfo_kib(meminfo, key).map(|kib| kib / 1024)
}

fn meminfo_kib(meminfo: &str, key: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn available_memory_is_read_from_meminfo() {
        let text = "MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   20480000 kB\n";
        assert_eq!(mem_available_mib(text), Some(20000));
        assert_eq!(mem_total_bytes(text), Some(24576000 * 1024));
        assert_eq!(mem_available_mib("MemTotal: 1 kB\n"), None);
        assert_eq!(mem_available_mib("MemAvailable: lots kB\n"), None);
    }

    #[test]
    fn the_scarcer_of_memory_and_cores_bounds_the_nodes() {
        let roomy = Machine {
            available_mib: 20_000,
            total_bytes: 24_000 << 20,
            cores: 2,
        };
        assert_eq!(roomy.fits(), 4);
        let tight = Machine {
            available_mib: 1_100,
            total_bytes: 2_000 << 20,
            cores: 8,
        };
        assert_eq!(tight.fits(), 2);
    }

    #[test]
    fn too_many_nodes_is_refused_with_the_estimate() {
        let machine = Machine {
            available_mib: 20_000,
            total_bytes: 24_000 << 20,
            cores: 2,
        };
        assert!(machine.check(4).is_ok());
        let err = machine.check(5).unwrap_err();
        assert!(err.is_input_error());
        let text = err.to_string();
        assert!(
            text.starts_with("5 real nodes do not fit this machine: it holds about 4"),
            "{text}"
        );
        assert!(text.contains("20000 MiB"), "{text}");
        assert!(text.contains("2 cores"), "{text}");
    }
}
