//! Utilisation, packing, nodes in use and cost, from the node and cluster
//! samples.

use crate::stats::{mean, nearest_rank};
use schedlab_core::record::{ClusterSample, NodeSample};
use schedlab_core::{NodeId, Resources, Time};
use std::collections::BTreeMap;

/// Node samples of one sample time, summed.
#[derive(Debug, Default, Clone, Copy)]
struct NodeSums {
    ready_allocatable: Resources,
    ready_requested: Resources,
    ready_used: Resources,
    in_use_allocatable: Resources,
    in_use_requested: Resources,
    in_use_nodes: u32,
}

#[derive(Debug, Default)]
pub(super) struct Samples {
    allocatable: BTreeMap<NodeId, Resources>,
    last_node_sample: BTreeMap<NodeId, Time>,
    // Keyed by time, not by arrival: a backend may write a time's cluster
    // sample before or after its node samples.
    by_time: BTreeMap<Time, NodeSums>,
    cluster_samples: u64,
    /// every cluster sample's time, in order
    cluster_times: Vec<Time>,
    last_cluster: Option<(Time, f64)>,
    // Σ hourly_cost × interval in ms, divided by 3.6e6 at the end
    cost_ms: f64,
    nodes_in_use_sum: u64,
    nodes_in_use_max: u32,
}

/// What the node and cluster samples yield (see `crate::definitions`).
/// `None` marks a metric undefined for the run.
#[derive(Debug, Clone)]
pub struct SampleMetrics {
    /// Node records
    pub nodes: u32,
    pub cluster_samples: u64,
    /// distinct times with at least one NodeSample
    pub node_sample_times: u64,
    pub cpu_util_mean: Option<f64>,
    pub cpu_util_p95: Option<f64>,
    pub mem_util_mean: Option<f64>,
    pub mem_util_p95: Option<f64>,
    pub cpu_used_mean: Option<f64>,
    pub mem_used_mean: Option<f64>,
    pub cpu_util_in_use_mean: Option<f64>,
    pub mem_util_in_use_mean: Option<f64>,
    pub nodes_in_use_mean: Option<f64>,
    pub nodes_in_use_max: Option<u32>,
    pub cost_usd: Option<f64>,
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

impl Samples {
    pub fn is_known(&self, node: NodeId) -> bool {
        self.allocatable.contains_key(&node)
    }

    pub fn node(&mut self, node: NodeId, allocatable: Resources) -> Result<(), String> {
        if self.allocatable.insert(node, allocatable).is_some() {
            return Err(format!("a second Node record for node {}", node.0));
        }
        Ok(())
    }

    pub fn node_sample(&mut self, s: &NodeSample) -> Result<(), String> {
        let Some(&allocatable) = self.allocatable.get(&s.node) else {
            return Err(format!("NodeSample for node {} that has no Node record", s.node.0));
        };
        if let Some(&last) = self.last_node_sample.get(&s.node)
            && s.t <= last
        {
            return Err(format!(
                "NodeSample for node {} at {} does not come after its previous one at {last}",
                s.node.0, s.t
            ));
        }
        self.last_node_sample.insert(s.node, s.t);
        let sums = self.by_time.entry(s.t).or_default();
        if s.condition.is_ready() {
            sums.ready_allocatable += allocatable;
            sums.ready_requested += s.requested;
            sums.ready_used += s.used;
        }
        if s.pods > 0 {
            sums.in_use_allocatable += allocatable;
            sums.in_use_requested += s.requested;
            sums.in_use_nodes += 1;
        }
        Ok(())
    }

    pub fn cluster_sample(&mut self, s: &ClusterSample) -> Result<(), String> {
        if !(s.hourly_cost.is_finite() && s.hourly_cost >= 0.0) {
            return Err(format!("ClusterSample at {} has hourly_cost {}", s.t, s.hourly_cost));
        }
        if let Some((last_t, last_cost)) = self.last_cluster {
            if s.t < last_t {
                return Err(format!(
                    "ClusterSample at {} comes after one at {last_t}: samples must be in time order",
                    s.t
                ));
            }
            self.cost_ms += last_cost * s.t.since(last_t).as_millis() as f64;
        }
        self.last_cluster = Some((s.t, s.hourly_cost));
        self.cluster_samples += 1;
        self.cluster_times.push(s.t);
        self.nodes_in_use_sum += u64::from(s.nodes_in_use);
        self.nodes_in_use_max = self.nodes_in_use_max.max(s.nodes_in_use);
        Ok(())
    }

    /// `fault_headroom_mean`: at each cluster sample time inside `window`
    /// (bounds included), 1 − the memory requested on Ready nodes over their
    /// allocatable memory; the mean. `None` without a window or without a
    /// sample time in it that has Ready allocatable memory.
    pub fn headroom_mean(&self, window: Option<(Time, Time)>) -> Option<f64> {
        let (start, stop) = window?;
        let free: Vec<f64> = self
            .cluster_times
            .iter()
            .filter(|t| start <= **t && **t <= stop)
            .filter_map(|t| self.by_time.get(t))
            .filter_map(|sums| ratio(sums.ready_requested.memory_bytes, sums.ready_allocatable.memory_bytes))
            .map(|used| 1.0 - used)
            .collect();
        mean(&free)
    }

    pub fn finish(self, end: Time) -> SampleMetrics {
        let mut cpu = Vec::new();
        let mut mem = Vec::new();
        let mut cpu_used = Vec::new();
        let mut mem_used = Vec::new();
        let mut cpu_in_use = Vec::new();
        let mut mem_in_use = Vec::new();
        for sums in self.by_time.values() {
            let (a, r, u) = (sums.ready_allocatable, sums.ready_requested, sums.ready_used);
            cpu.extend(ratio(r.cpu_milli, a.cpu_milli));
            mem.extend(ratio(r.memory_bytes, a.memory_bytes));
            cpu_used.extend(ratio(u.cpu_milli, a.cpu_milli));
            mem_used.extend(ratio(u.memory_bytes, a.memory_bytes));
            if sums.in_use_nodes > 0 {
                let (a, r) = (sums.in_use_allocatable, sums.in_use_requested);
                cpu_in_use.extend(ratio(r.cpu_milli, a.cpu_milli));
                mem_in_use.extend(ratio(r.memory_bytes, a.memory_bytes));
            }
        }
        let p95 = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            nearest_rank(&v, 0.95)
        };
        let cost_ms = match self.last_cluster {
            Some((last_t, last_cost)) => Some(self.cost_ms + last_cost * end.since(last_t).as_millis() as f64),
            None => None,
        };
        let n = self.cluster_samples;
        SampleMetrics {
            nodes: self.allocatable.len() as u32,
            cluster_samples: n,
            node_sample_times: self.by_time.len() as u64,
            cpu_util_mean: mean(&cpu),
            cpu_util_p95: p95(cpu),
            mem_util_mean: mean(&mem),
            mem_util_p95: p95(mem),
            cpu_used_mean: mean(&cpu_used),
            mem_used_mean: mean(&mem_used),
            cpu_util_in_use_mean: mean(&cpu_in_use),
            mem_util_in_use_mean: mean(&mem_in_use),
            nodes_in_use_mean: (n > 0).then(|| self.nodes_in_use_sum as f64 / n as f64),
            nodes_in_use_max: (n > 0).then_some(self.nodes_in_use_max),
            cost_usd: cost_ms.map(|ms| ms / 3_600_000.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::test_records::*;

    #[test]
    fn cost_holds_each_rate_until_the_next_sample() {
        // $2/h for 30 s, $0/h for 10 s, $4/h for 20 s (to End at 60 s); a
        // time-weighted left sum, not a trapezoid and not a right sum
        let m = metrics_of(&[
            cluster_sample(0, 1, 2.0),
            cluster_sample(30_000, 0, 0.0),
            cluster_sample(40_000, 3, 4.0),
            end(60_000),
        ])
        .unwrap();
        let expected = (2.0 * 30.0 + 0.0 * 10.0 + 4.0 * 20.0) / 3600.0;
        assert!(
            (m.samples.cost_usd.unwrap() - expected).abs() < 1e-12,
            "{:?}",
            m.samples.cost_usd
        );
        assert_eq!(m.samples.nodes_in_use_max, Some(3));
        assert_eq!(m.samples.nodes_in_use_mean, Some(4.0 / 3.0));
    }

    #[test]
    fn time_before_the_first_sample_is_not_billed() {
        let m = metrics_of(&[cluster_sample(50_000, 1, 36.0), end(60_000)]).unwrap();
        assert!((m.samples.cost_usd.unwrap() - 0.1).abs() < 1e-12);
    }

    #[test]
    fn p95_is_the_nearest_rank_over_twenty_samples() {
        // cpu requested 100, 200, ..., 2000 of 2000 m over 20 sample times,
        // written in shuffled order: ⌈0.95·20⌉ = 19 → 1900/2000
        let mut records = vec![node(0, 2000, 1000, 1.0)];
        let order = [7u64, 0, 19, 3, 12, 5, 18, 1, 9, 14, 2, 16, 4, 11, 6, 17, 8, 13, 10, 15];
        let mut sorted = order;
        sorted.sort();
        for i in sorted {
            let req = 100 * (order[i as usize] + 1);
            records.push(node_sample(
                i * 1000,
                0,
                (req, 0),
                (0, 0),
                1,
                schedlab_core::NodeCondition::Ready,
            ));
        }
        records.push(end(20_000));
        let m = metrics_of(&records).unwrap();
        assert_eq!(m.samples.cpu_util_p95, Some(0.95));
        // mean: (100 + ... + 2000) / 20 / 2000 = 10500 / 20 / 2000
        assert!((m.samples.cpu_util_mean.unwrap() - 0.525).abs() < 1e-12);
        assert_eq!(m.samples.mem_util_mean, Some(0.0));
        assert_eq!(m.samples.node_sample_times, 20);
    }

    #[test]
    fn sample_times_without_ready_allocatable_are_left_out() {
        let m = metrics_of(&[
            node(0, 1000, 1000, 1.0),
            node_sample(0, 0, (500, 500), (0, 0), 1, schedlab_core::NodeCondition::NotReady),
            node_sample(1000, 0, (250, 250), (0, 0), 1, schedlab_core::NodeCondition::Ready),
            end(2000),
        ])
        .unwrap();
        assert_eq!(m.samples.cpu_util_mean, Some(0.25));
        // packing still sees both times: the node hosts a pod at both
        assert_eq!(m.samples.cpu_util_in_use_mean, Some(0.375));
    }
}
