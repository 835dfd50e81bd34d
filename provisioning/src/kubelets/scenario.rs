//! A scenario's nodes as real nodes of this machine: `--nodes real:N` makes
//! the scenario's first N nodes real (`real:N+emulated` puts the rest on the
//! node emulator beside them). A real node gets its scenario node's labels,
//! taints and pod limit, and reservations that bring its allocatable down
//! from the host's to the scenario node's where the host is larger.

use super::config::KubeletTuning;
use schedlab_core::NodeSpec;

/// The eviction threshold of every real node's kubelet (`evictionHard`'s
/// `memory.available`), which the kubelet also subtracts from allocatable.
pub const EVICTION_MEMORY_BYTES: u64 = 100 << 20;

/// How many of a scenario's nodes are real, and what becomes of the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RealNodesFlag {
    pub count: usize,
    /// the scenario's nodes beyond `count` are played by the node emulator
    pub emulated_rest: bool,
}

impl std::str::FromStr for RealNodesFlag {
    type Err = String;

    /// `real:N` or `real:N+emulated`, N at least 1.
    fn from_str(text: &str) -> Result<RealNodesFlag, String> {
        let bad = || format!("{text:?} is not real:N or real:N+emulated (N a whole number of at least 1)");
        let rest = text.strip_prefix("real:").ok_or_else(bad)?;
        let (count, emulated_rest) = match rest.strip_suffix("+emulated") {
            Some(count) => (count, true),
            None => (rest, false),
        };
        let count: usize = count.parse().map_err(|_| bad())?;
        if count == 0 {
            return Err(bad());
        }
        Ok(RealNodesFlag { count, emulated_rest })
    }
}

impl RealNodesFlag {
    /// Whether a scenario of `nodes` nodes fits: no more real nodes than it
    /// has, and its other nodes emulated only when asked.
    pub fn check(&self, nodes: usize) -> Result<(), String> {
        if self.count > nodes {
            return Err(format!(
                "--nodes real:{}: the scenario has {nodes} nodes; ask for at most {nodes} real ones",
                self.count
            ));
        }
        if self.count < nodes && !self.emulated_rest {
            return Err(format!(
                "--nodes real:{}: the scenario has {nodes} nodes; give real:{nodes}, or real:{}+emulated to play the other {} on the node emulator",
                self.count,
                self.count,
                nodes - self.count
            ));
        }
        Ok(())
    }

    /// Per scenario node: the real node's name, or None for an emulated one.
    pub fn placement(&self, nodes: usize) -> Vec<Option<String>> {
        (0..nodes)
            .map(|i| (i < self.count).then(|| format!("real-{i}")))
            .collect()
    }
}

/// The kubelet settings that make a real node look like `spec` on a host of
/// `host_cpu_milli` and `host_memory_bytes`. Where the scenario node is
/// larger than the host, the real node has the host's capacity: nothing can
/// reserve it up.
pub fn tuning_for(spec: &NodeSpec, host_cpu_milli: u64, host_memory_bytes: u64) -> KubeletTuning {
    KubeletTuning {
        system_reserved_cpu_milli: host_cpu_milli.saturating_sub(spec.allocatable.cpu_milli),
        system_reserved_memory_bytes: host_memory_bytes
            .saturating_sub(EVICTION_MEMORY_BYTES)
            .saturating_sub(spec.allocatable.memory_bytes),
        max_pods: Some(spec.max_pods),
        taints: spec.taints.iter().map(ToString::to_string).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::Resources;
    use schedlab_core::node::{Taint, TaintEffect};

    #[test]
    fn the_flag_reads_real_n_with_or_without_emulated() {
        assert_eq!(
            "real:2".parse::<RealNodesFlag>(),
            Ok(RealNodesFlag {
                count: 2,
                emulated_rest: false
            })
        );
        assert_eq!(
            "real:3+emulated".parse::<RealNodesFlag>(),
            Ok(RealNodesFlag {
                count: 3,
                emulated_rest: true
            })
        );
        for bad in ["real:0", "real:", "real:x", "2", "real:2+existing", "emulated"] {
            let err = bad.parse::<RealNodesFlag>().unwrap_err();
            assert!(err.contains("real:N or real:N+emulated"), "{bad}: {err}");
        }
    }

    #[test]
    fn the_scenario_must_hold_the_real_nodes_and_say_what_becomes_of_the_rest() {
        let two: RealNodesFlag = "real:2".parse().unwrap();
        assert!(two.check(2).is_ok());
        let err = two.check(5).unwrap_err();
        assert!(err.contains("real:2+emulated to play the other 3"), "{err}");
        assert!(two.check(1).unwrap_err().contains("at most 1 real ones"));
        let mixed: RealNodesFlag = "real:2+emulated".parse().unwrap();
        assert!(mixed.check(5).is_ok());
        assert_eq!(
            mixed.placement(3),
            vec![Some("real-0".to_owned()), Some("real-1".to_owned()), None]
        );
    }

    #[test]
    fn reservations_bring_the_host_down_to_the_scenario_node() {
        let mut spec = NodeSpec::plain(
            "n",
            Resources {
                cpu_milli: 1500,
                memory_bytes: 4 << 30,
            },
            0.1,
        );
        spec.max_pods = 30;
        spec.taints.push(Taint {
            key: "spot".into(),
            value: Some("true".into()),
            effect: TaintEffect::NoSchedule,
        });
        let tuning = tuning_for(&spec, 2000, 24 << 30);
        assert_eq!(tuning.system_reserved_cpu_milli, 500);
        assert_eq!(tuning.system_reserved_memory_bytes, (20 << 30) - EVICTION_MEMORY_BYTES);
        assert_eq!(tuning.max_pods, Some(30));
        assert_eq!(tuning.taints, vec!["spot=true:NoSchedule".to_owned()]);
        // a scenario node larger than the host: nothing to reserve
        let big = tuning_for(&spec, 1000, 1 << 30);
        assert_eq!(
            (big.system_reserved_cpu_milli, big.system_reserved_memory_bytes),
            (0, 0)
        );
    }
}
