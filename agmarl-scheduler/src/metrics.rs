//! What /metrics exports (OpenMetrics text, every name prefixed `agmarl_`):
//!
//! - `agmarl_decisions_total`, `agmarl_declines_total`,
//!   `agmarl_unschedulable_total`, `agmarl_preemptions_total`: the policy's
//!   answers (a preemption is its own answer, not an unschedulable one);
//! - `agmarl_binds_total`, `agmarl_bind_conflicts_total`: bindings the API
//!   server accepted, and 409s (somebody else bound the pod first);
//! - `agmarl_preemption_victims_total`: pods the bind loop deleted to make
//!   room for a preemptor;
//! - `agmarl_decision_latency_seconds`: histogram of the policy's time per pod;
//! - `agmarl_stress_level`: 0 calm, 1 elevated, 2 stressed;
//! - `agmarl_objective_rank{objective=...}`: 1 for the objective selection
//!   looks at first, 3 for the last (0: the policy weighs instead);
//! - `agmarl_leader`: 1 while this replica holds the Lease;
//! - `agmarl_pending_pods`: pods of this scheduler without a node, as this
//!   replica's watch sees them (leader or not).

use kube_backend::bind::LiveCounts;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::{Registry, Unit};
use scheduler::agmarl::stress::{Objective, StressLevel};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The Content-Type of [`Metrics::encode`]'s text.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

type Labels = Vec<(String, String)>;

/// What the policy answered for one pod.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Bind,
    Decline,
    Unschedulable,
    /// no node takes the pod; pods of lower priority are deleted to make room
    Preempt,
}

/// The scheduler's metrics; cheap to share (every metric is an `Arc` inside).
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    decisions: Counter,
    declines: Counter,
    unschedulable: Counter,
    preemptions: Counter,
    binds: Counter,
    bind_conflicts: Counter,
    victims: Counter,
    decision_latency: Histogram,
    stress_level: Gauge,
    objective_rank: Family<Labels, Gauge>,
    leader: Gauge,
    pending: Gauge,
    live: Arc<LiveCounts>,
    /// one scrape at a time brings the bind counters up to date
    sync: Mutex<()>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("agmarl");
        let decisions = Counter::default();
        let declines = Counter::default();
        let unschedulable = Counter::default();
        let preemptions = Counter::default();
        let binds = Counter::default();
        let bind_conflicts = Counter::default();
        let victims = Counter::default();
        // 0.1 ms .. 3.3 s: a decision over a few nodes takes well under a
        // millisecond, over thousands some tens.
        let decision_latency = Histogram::new(exponential_buckets(0.0001, 2.0, 16));
        let stress_level = Gauge::default();
        let objective_rank = Family::<Labels, Gauge>::default();
        let leader = Gauge::default();
        let pending = Gauge::default();
        registry.register("decisions", "Pods the policy decided on", decisions.clone());
        registry.register(
            "declines",
            "Pods the policy declined (strategic restraint); they stay pending and are retried",
            declines.clone(),
        );
        registry.register(
            "unschedulable",
            "Pods no node could take when the policy looked",
            unschedulable.clone(),
        );
        registry.register(
            "preemptions",
            "Pods no node could take for which the policy chose pods of lower priority to delete (DefaultPreemption)",
            preemptions.clone(),
        );
        registry.register("binds", "Bindings the API server accepted", binds.clone());
        registry.register(
            "bind_conflicts",
            "Bindings refused with 409: somebody else bound the pod first",
            bind_conflicts.clone(),
        );
        registry.register(
            "preemption_victims",
            "Pods deleted to make room for a preemptor",
            victims.clone(),
        );
        registry.register_with_unit(
            "decision_latency",
            "The policy's time per decision",
            Unit::Seconds,
            decision_latency.clone(),
        );
        registry.register(
            "stress_level",
            "The controller's stress level: 0 calm, 1 elevated, 2 stressed",
            stress_level.clone(),
        );
        registry.register(
            "objective_rank",
            "Rank of each objective in the order in force (1 first; 0 when the policy weighs them)",
            objective_rank.clone(),
        );
        registry.register(
            "leader",
            "1 while this replica holds the Lease and binds",
            leader.clone(),
        );
        registry.register(
            "pending_pods",
            "Pods of this scheduler without a node, as this replica sees them",
            pending.clone(),
        );
        let metrics = Metrics {
            registry,
            decisions,
            declines,
            unschedulable,
            preemptions,
            binds,
            bind_conflicts,
            victims,
            decision_latency,
            stress_level,
            objective_rank,
            leader,
            pending,
            live: Arc::new(LiveCounts::default()),
            sync: Mutex::new(()),
        };
        metrics.set_policy_state(StressLevel::Calm, None);
        metrics
    }

    /// Where the bind loops count their binds, conflicts and victims.
    pub fn live_counts(&self) -> Arc<LiveCounts> {
        self.live.clone()
    }

    /// One decision: its answer and the policy's time.
    pub fn record_decision(&self, answer: Answer, took: Duration) {
        self.decisions.inc();
        match answer {
            Answer::Bind => {}
            Answer::Decline => {
                self.declines.inc();
            }
            Answer::Unschedulable => {
                self.unschedulable.inc();
            }
            Answer::Preempt => {
                self.preemptions.inc();
            }
        }
        self.decision_latency.observe(took.as_secs_f64());
    }

    /// The stress level and the objective order in force.
    pub fn set_policy_state(&self, level: StressLevel, order: Option<[Objective; 3]>) {
        let index = StressLevel::ALL.iter().position(|l| *l == level).unwrap_or(0);
        self.stress_level.set(index as i64);
        for objective in Objective::ALL {
            let rank = order
                .and_then(|o| o.iter().position(|x| *x == objective))
                .map_or(0, |i| i as i64 + 1);
            self.objective_rank
                .get_or_create(&vec![("objective".to_string(), objective.name().to_string())])
                .set(rank);
        }
    }

    pub fn set_leader(&self, leader: bool) {
        self.leader.set(i64::from(leader));
    }

    pub fn set_pending(&self, pods: usize) {
        self.pending.set(i64::try_from(pods).unwrap_or(i64::MAX));
    }

    /// The text exposition, with the bind counters brought up to date.
    pub fn encode(&self) -> Result<String, std::fmt::Error> {
        {
            // a poisoned lock only means a scrape panicked; the counters are fine
            let _guard = self.sync.lock().unwrap_or_else(|p| p.into_inner());
            catch_up(&self.binds, self.live.binds.load(Ordering::Relaxed));
            catch_up(&self.bind_conflicts, self.live.conflicts.load(Ordering::Relaxed));
            catch_up(&self.victims, self.live.victims.load(Ordering::Relaxed));
        }
        let mut text = String::new();
        encode(&mut text, &self.registry)?;
        Ok(text)
    }
}

fn catch_up(counter: &Counter, total: u64) {
    let have = counter.get();
    if total > have {
        counter.inc_by(total - have);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample line that starts with `series ` in `text`.
    fn sample(text: &str, series: &str) -> Option<f64> {
        text.lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.trim().parse().ok())
    }

    #[test]
    fn exposition_names_every_metric() {
        let m = Metrics::new();
        assert!(
            m.encode()
                .unwrap()
                .contains(r#"agmarl_objective_rank{objective="cost"} 0"#)
        );
        m.set_policy_state(
            StressLevel::Calm,
            Some(scheduler::agmarl::stress::objective_order(StressLevel::Calm)),
        );
        let text = m.encode().unwrap();
        for name in [
            "# TYPE agmarl_decisions counter",
            "# TYPE agmarl_declines counter",
            "# TYPE agmarl_binds counter",
            "# TYPE agmarl_bind_conflicts counter",
            "# TYPE agmarl_preemptions counter",
            "# TYPE agmarl_preemption_victims counter",
            "# TYPE agmarl_decision_latency_seconds histogram",
            "# UNIT agmarl_decision_latency_seconds seconds",
            "# TYPE agmarl_stress_level gauge",
            "# TYPE agmarl_objective_rank gauge",
            "# TYPE agmarl_leader gauge",
            "# TYPE agmarl_pending_pods gauge",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert_eq!(sample(&text, "agmarl_decisions_total"), Some(0.0));
        assert_eq!(sample(&text, "agmarl_leader"), Some(0.0));
        // calm: cost, utilisation, fault tolerance
        assert_eq!(sample(&text, r#"agmarl_objective_rank{objective="cost"}"#), Some(1.0));
        assert_eq!(
            sample(&text, r#"agmarl_objective_rank{objective="utilization"}"#),
            Some(2.0)
        );
        assert_eq!(
            sample(&text, r#"agmarl_objective_rank{objective="fault-tolerance"}"#),
            Some(3.0)
        );
    }

    #[test]
    fn decisions_and_state_show_up() {
        let m = Metrics::new();
        let stressed = scheduler::agmarl::stress::objective_order(StressLevel::Stressed);
        m.record_decision(Answer::Bind, Duration::from_micros(300));
        m.record_decision(Answer::Decline, Duration::from_millis(2));
        m.record_decision(Answer::Unschedulable, Duration::from_millis(1));
        m.record_decision(Answer::Preempt, Duration::from_millis(1));
        m.set_policy_state(StressLevel::Stressed, Some(stressed));
        m.set_leader(true);
        m.set_pending(4);
        let text = m.encode().unwrap();
        assert_eq!(sample(&text, "agmarl_decisions_total"), Some(4.0));
        assert_eq!(sample(&text, "agmarl_declines_total"), Some(1.0));
        assert_eq!(sample(&text, "agmarl_unschedulable_total"), Some(1.0));
        assert_eq!(sample(&text, "agmarl_preemptions_total"), Some(1.0));
        assert_eq!(sample(&text, "agmarl_decision_latency_seconds_count"), Some(4.0));
        assert_eq!(sample(&text, "agmarl_stress_level"), Some(2.0));
        assert_eq!(
            sample(&text, r#"agmarl_objective_rank{objective="fault-tolerance"}"#),
            Some(1.0)
        );
        assert_eq!(sample(&text, r#"agmarl_objective_rank{objective="cost"}"#), Some(2.0));
        assert_eq!(sample(&text, "agmarl_leader"), Some(1.0));
        assert_eq!(sample(&text, "agmarl_pending_pods"), Some(4.0));
        // 0.3 ms lands in the le=0.0004 bucket, not in le=0.0002
        assert_eq!(
            sample(&text, r#"agmarl_decision_latency_seconds_bucket{le="0.0002"}"#),
            Some(0.0)
        );
        assert_eq!(
            sample(&text, r#"agmarl_decision_latency_seconds_bucket{le="0.0004"}"#),
            Some(1.0)
        );
        m.set_policy_state(StressLevel::Calm, None);
        let text = m.encode().unwrap();
        assert_eq!(sample(&text, r#"agmarl_objective_rank{objective="cost"}"#), Some(0.0));
    }

    #[test]
    fn bind_counters_follow_the_loops_counts() {
        let m = Metrics::new();
        let live = m.live_counts();
        live.binds.fetch_add(5, Ordering::Relaxed);
        live.conflicts.fetch_add(1, Ordering::Relaxed);
        live.victims.fetch_add(3, Ordering::Relaxed);
        let text = m.encode().unwrap();
        assert_eq!(sample(&text, "agmarl_binds_total"), Some(5.0));
        assert_eq!(sample(&text, "agmarl_bind_conflicts_total"), Some(1.0));
        assert_eq!(sample(&text, "agmarl_preemption_victims_total"), Some(3.0));
        // a second scrape does not add them again
        live.binds.fetch_add(2, Ordering::Relaxed);
        let text = m.encode().unwrap();
        assert_eq!(sample(&text, "agmarl_binds_total"), Some(7.0));
        assert_eq!(sample(&text, "agmarl_bind_conflicts_total"), Some(1.0));
    }
}
