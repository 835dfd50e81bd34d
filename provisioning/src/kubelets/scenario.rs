//! A scenario's nodes as real nodes of this machine: `--nodes real:N` makes
//! the scenario's first N nodes real (`real:N+emulated` puts the rest on the
//! node emulator beside them). A real node gets its scenario node's labels,
//! taints and pod limit, and reservations that bring its allocatable down
//! from the host's to the scenario node's where the host is larger, and its
//! memory to at most its share of the host's.

use super::config::KubeletTuning;
use kube_backend::{ApiClient, KubeError};
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

/// Memory of the host that no real node's pods may have: the control plane
/// (etcd, kube-apiserver, kube-scheduler, kube-controller-manager: about
/// 0.6–0.9 GiB here) and schedlab itself with its watches and recorder.
pub const HOST_HEADROOM_BYTES: u64 = 2 << 30;

/// The most allocatable memory each of `nodes` real nodes may have on a
/// host with `host_memory_bytes`: what is left after the head-room and each
/// node's own processes ([`super::capacity::PER_NODE_MIB`]), split evenly,
/// less the kubelet's eviction threshold. Every node's kubelet reports the
/// whole host as its capacity, and the kernel has one memory for all of
/// them: without a share each, nodes would promise the same memory twice
/// and the host's OOM killer would take pods of any node, where separate
/// machines run out one by one.
pub fn memory_share(nodes: usize, host_memory_bytes: u64) -> u64 {
    let nodes = nodes.max(1) as u64;
    let own = nodes.saturating_mul(super::capacity::PER_NODE_MIB << 20);
    (host_memory_bytes
        .saturating_sub(HOST_HEADROOM_BYTES)
        .saturating_sub(own)
        / nodes)
        .saturating_sub(EVICTION_MEMORY_BYTES)
}

/// The kubelet settings that make a real node look like `spec` on a host of
/// `host_cpu_milli` and `host_memory_bytes`, with at most `memory_share`
/// bytes of allocatable memory ([`memory_share`]). Where the scenario node is
/// larger than the host, or than the node's share of its memory, the real
/// node is that large: nothing can reserve it up. Cores are not shared out:
/// cpu is time-shared (a busy node slows the others, it kills nothing), and
/// a scenario node keeps its cpu up to the host's.
pub fn tuning_for(spec: &NodeSpec, host_cpu_milli: u64, host_memory_bytes: u64, memory_share: u64) -> KubeletTuning {
    let memory = spec.allocatable.memory_bytes.min(memory_share);
    KubeletTuning {
        system_reserved_cpu_milli: host_cpu_milli.saturating_sub(spec.allocatable.cpu_milli),
        system_reserved_memory_bytes: host_memory_bytes
            .saturating_sub(EVICTION_MEMORY_BYTES)
            .saturating_sub(memory),
        max_pods: Some(spec.max_pods),
        taints: spec.taints.iter().map(ToString::to_string).collect(),
    }
}

/// [`tuning_for`] each of `specs` on this machine, all of them real nodes
/// of one host.
pub fn tunings(specs: &[NodeSpec]) -> Result<Vec<KubeletTuning>, super::KubeletError> {
    let host = super::capacity::Machine::this()?;
    let host_cpu_milli = host.cores as u64 * 1000;
    let share = memory_share(specs.len(), host.total_bytes);
    for (i, spec) in specs.iter().enumerate() {
        let (cpu, memory) = (spec.allocatable.cpu_milli, spec.allocatable.memory_bytes);
        if cpu > host_cpu_milli || memory > share {
            tracing::warn!(
                node = %format!("real-{i}"),
                scenario_node = %spec.name,
                scenario_cpu_milli = cpu,
                scenario_memory_bytes = memory,
                cpu_milli = cpu.min(host_cpu_milli),
                memory_bytes = memory.min(share),
                "a real node is smaller than the scenario node it plays: this machine's cores, or its share of this machine's memory"
            );
        }
    }
    Ok(specs
        .iter()
        .map(|spec| tuning_for(spec, host_cpu_milli, host.total_bytes, share))
        .collect())
}

/// Gives real node `real-i` the labels of scenario node `i`, its pool's
/// label and its price (a merge patch after the node registered: the kubelet
/// refuses some `kubernetes.io` labels on its command line).
pub async fn label_like(admin: &ApiClient, specs: &[NodeSpec]) -> Result<(), KubeError> {
    use k8s_openapi::api::core::v1::Node;
    use kube::api::{Api, Patch, PatchParams};
    let api: Api<Node> = Api::all(admin.client());
    for (i, spec) in specs.iter().enumerate() {
        let name = format!("real-{i}");
        let mut labels: serde_json::Map<String, serde_json::Value> = spec
            .labels
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
            .collect();
        labels.insert(
            kube_backend::labels::POOL.to_string(),
            kube_backend::objects::dns_label(&[&spec.pool.name]).into(),
        );
        let patch = serde_json::json!({
            "metadata": {
                "labels": labels,
                "annotations": { kube_backend::labels::HOURLY_PRICE: spec.pool.hourly_price.to_string() },
            }
        });
        admin.throttle().await;
        api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(KubeError::api(format!("labelling node {name}")))?;
    }
    Ok(())
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
        let tuning = tuning_for(&spec, 2000, 24 << 30, u64::MAX);
        assert_eq!(tuning.system_reserved_cpu_milli, 500);
        assert_eq!(tuning.system_reserved_memory_bytes, (20 << 30) - EVICTION_MEMORY_BYTES);
        assert_eq!(tuning.max_pods, Some(30));
        assert_eq!(tuning.taints, vec!["spot=true:NoSchedule".to_owned()]);
        // a scenario node larger than the host: nothing to reserve
        let big = tuning_for(&spec, 1000, 1 << 30, u64::MAX);
        assert_eq!(
            (big.system_reserved_cpu_milli, big.system_reserved_memory_bytes),
            (0, 0)
        );
        // larger than the node's share of the host's memory: the share
        let shared = tuning_for(&spec, 2000, 24 << 30, 3 << 30);
        assert_eq!(
            (24 << 30) - EVICTION_MEMORY_BYTES - shared.system_reserved_memory_bytes,
            3 << 30,
            "allocatable is the share"
        );
        assert_eq!(shared.system_reserved_cpu_milli, 500, "cores are not shared out");
    }

    #[test]
    fn real_nodes_split_what_the_host_has_left() {
        let host = 24u64 << 30;
        let one = memory_share(1, host);
        assert_eq!(one, host - HOST_HEADROOM_BYTES - (512 << 20) - EVICTION_MEMORY_BYTES);
        let four = memory_share(4, host);
        assert_eq!(
            four,
            (host - HOST_HEADROOM_BYTES - 4 * (512 << 20)) / 4 - EVICTION_MEMORY_BYTES
        );
        // the nodes' allocatable, their thresholds and their own processes
        // never add up to more than the host less its head-room
        for nodes in 1..=8u64 {
            let share = memory_share(nodes as usize, host);
            assert!(
                nodes * (share + EVICTION_MEMORY_BYTES + (512 << 20)) <= host - HOST_HEADROOM_BYTES,
                "{nodes} nodes"
            );
        }
        assert_eq!(memory_share(3, 1 << 30), 0, "a host too small for the head-room");
    }
}
