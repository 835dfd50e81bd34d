//! What a GKE cluster made for a scenario costs, before making it: every
//! pool's nodes at the scenario's hourly price for the expected wall time.

use super::pools::PoolNeed;
use serde::Serialize;

/// Wall time for creating and deleting the cluster and its node pools, and
/// deploying the scheduler (GKE takes minutes for each).
pub const SETUP_OVERHEAD_HOURS: f64 = 0.25;
/// GKE's cluster management fee, US dollars per cluster-hour.
pub const MANAGEMENT_FEE_PER_HOUR: f64 = 0.10;

/// One pool's share.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PoolCost {
    pub pool: String,
    pub machine_type: String,
    pub nodes: usize,
    pub hourly_price: f64,
    pub cost: f64,
}

/// The estimate and how it was made.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostEstimate {
    pub pools: Vec<PoolCost>,
    pub runs: u64,
    pub scenario_hours: f64,
    pub time_scale: f64,
    pub overhead_hours: f64,
    /// runs × scenario hours / time scale + overhead
    pub wall_hours: f64,
    pub management_fee: f64,
    pub total: f64,
}

/// The cost of playing `runs` runs of `scenario_seconds` each at
/// `time_scale` scenario seconds per wall second on a cluster with `pools`.
pub fn estimate(pools: &[PoolNeed], runs: u64, scenario_seconds: f64, time_scale: f64) -> CostEstimate {
    let scenario_hours = scenario_seconds / 3600.0;
    let wall_hours = runs as f64 * scenario_hours / time_scale + SETUP_OVERHEAD_HOURS;
    let pools: Vec<PoolCost> = pools
        .iter()
        .map(|p| PoolCost {
            pool: p.name.clone(),
            machine_type: p.machine_type.clone(),
            nodes: p.count,
            hourly_price: p.hourly_price,
            cost: p.count as f64 * p.hourly_price * wall_hours,
        })
        .collect();
    let management_fee = MANAGEMENT_FEE_PER_HOUR * wall_hours;
    let total = pools.iter().map(|p| p.cost).sum::<f64>() + management_fee;
    CostEstimate {
        pools,
        runs,
        scenario_hours,
        time_scale,
        overhead_hours: SETUP_OVERHEAD_HOURS,
        wall_hours,
        management_fee,
        total,
    }
}

impl CostEstimate {
    /// The estimate as printed before a cluster is created.
    pub fn render(&self) -> String {
        let mut out = String::from("Cost estimate (US dollars):\n");
        for p in &self.pools {
            out.push_str(&format!(
                "  pool {}: {} × {} at ${:.4}/h × {:.2} h = ${:.2}\n",
                p.pool, p.nodes, p.machine_type, p.hourly_price, self.wall_hours, p.cost
            ));
        }
        out.push_str(&format!(
            "  GKE management fee: ${MANAGEMENT_FEE_PER_HOUR:.2}/h × {:.2} h = ${:.2}\n",
            self.wall_hours, self.management_fee
        ));
        out.push_str(&format!("  total: ${:.2}\n", self.total));
        out.push_str(&format!(
            "Assumptions: {} runs × {:.3} scenario hours / time scale {} + {:.2} h to create, deploy and delete \
             = {:.2} wall hours with every node up throughout; prices are the scenario's hourly_price per node; \
             disks, network, load balancers and taxes are not included.\n",
            self.runs, self.scenario_hours, self.time_scale, self.overhead_hours, self.wall_hours
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::node::Provisioning;

    fn need(name: &str, count: usize, price: f64) -> PoolNeed {
        PoolNeed {
            name: name.into(),
            machine_type: "n2-standard-8".into(),
            count,
            hourly_price: price,
            provisioning: Provisioning::OnDemand,
            labels: Default::default(),
            taints: Vec::new(),
        }
    }

    #[test]
    fn arithmetic() {
        // 8 runs of 30 min at time scale 2: 8 × 0.5 / 2 = 2 h, + 0.25 h overhead
        let e = estimate(&[need("general", 3, 0.4), need("spot", 2, 0.1)], 8, 1800.0, 2.0);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(e.wall_hours, 2.25), "{}", e.wall_hours);
        assert!(close(e.pools[0].cost, 3.0 * 0.4 * 2.25));
        assert!(close(e.pools[1].cost, 2.0 * 0.1 * 2.25));
        assert!(close(e.management_fee, 0.1 * 2.25));
        assert!(close(e.total, 2.7 + 0.45 + 0.225), "{}", e.total);
        let text = e.render();
        assert!(
            text.contains("pool general: 3 × n2-standard-8 at $0.4000/h × 2.25 h = $2.70"),
            "{text}"
        );
        assert!(text.contains("total: $3.38"), "{text}");
        assert!(text.contains("8 runs"), "{text}");
    }

    #[test]
    fn a_faster_clock_costs_less() {
        let pools = [need("general", 4, 0.39)];
        let slow = estimate(&pools, 3, 3600.0, 1.0);
        let fast = estimate(&pools, 3, 3600.0, 10.0);
        assert!(fast.total < slow.total);
        assert!((slow.wall_hours - 3.25).abs() < 1e-9);
    }
}
