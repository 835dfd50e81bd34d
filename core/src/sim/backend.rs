//! The simulator as a [`Backend`]: every run in process, in virtual time,
//! as many at once as the caller likes.

use super::{Sim, SimError};
use crate::backend::{Backend, ClusterScheduler, PROGRESS_STEPS, Played, PolicyTimes, RunObserver, RunRequest};
use crate::behaviour::ModelConfig;
use crate::record::RecordSink;
use crate::time::Time;

/// The simulator backend: each run a fresh [`Sim`] with the same model.
#[derive(Debug, Clone, Default)]
pub struct SimBackend {
    pub model: ModelConfig,
    /// charge each decision's wall-clock time to virtual time ([`Sim::charge_decision_time`])
    pub charge_decision_time: bool,
}

/// Why the simulator could not play a run.
#[derive(Debug, thiserror::Error)]
pub enum SimBackendError {
    #[error("setting up the simulator: {0}")]
    Setup(#[from] SimError),
    #[error("arm {arm}: the simulator has no scheduler of its own, so every arm needs a policy")]
    NoPolicy { arm: String },
}

impl Backend for SimBackend {
    type Error = crate::Error;
    /// The simulator says nothing beyond the run manifest's common fields.
    type RunFacts = ();

    fn name(&self) -> &'static str {
        "sim"
    }

    fn max_parallel_runs(&self) -> Option<usize> {
        None
    }

    fn decided_by_cluster(&self, _arm: &str) -> Option<ClusterScheduler> {
        None
    }

    fn play(
        &self,
        run: RunRequest<'_>,
        sink: &mut (dyn RecordSink + Send),
        observer: &dyn RunObserver,
    ) -> crate::Result<Played<()>> {
        let Some(mut policy) = run.policy else {
            return Err(SimBackendError::NoPolicy {
                arm: run.arm.to_string(),
            }
            .into());
        };
        let mut sim = Sim::checked(run.timeline, run.seed, self.model.clone()).map_err(SimBackendError::from)?;
        sim.charge_decision_time(self.charge_decision_time);
        let end = sim.end();
        // in steps, so the observer is called between decisions
        let step = (end.as_millis() / PROGRESS_STEPS).max(1);
        while sim.now() < end {
            let until = Time((sim.now().as_millis() + step).min(end.as_millis()));
            sim.run_until(until, &mut *policy, sink);
            let done = (until.as_millis() * PROGRESS_STEPS / end.as_millis().max(1)).min(PROGRESS_STEPS);
            observer.progressed(done);
        }
        // the decisions of the run's time; those `finish` makes at the end instant are not timed
        let policy_times = PolicyTimes {
            nanos: sim.decision_times().clone(),
            charged: sim.decision_time_charged(),
        };
        let summary = sim.finish(&mut *policy, sink);
        tracing::debug!(arm = %run.arm, seed = run.seed, ?summary, "run finished");
        observer.progressed(PROGRESS_STEPS);
        Ok(Played {
            scenario_seconds: end.as_secs_f64(),
            policy_times: Some(policy_times),
            facts: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Unobserved;
    use crate::record::Record;
    use crate::testing::{MI, TimelineBuilder, first_feasible, pod};
    use std::sync::Mutex;

    /// Two nodes, four pods of one workload created at once, ten minutes.
    fn timeline() -> crate::timeline::Timeline {
        TimelineBuilder::new(600.0)
            .nodes(2, 2000, 4096 * MI)
            .workload("w", pod(500, 256 * MI), true)
            .create(1.0, 0, 0, 4)
            .build()
    }

    #[test]
    fn a_run_plays_to_its_end_and_reports_progress_to_the_last_step() {
        let timeline = timeline();
        let steps = Mutex::new(Vec::new());
        struct Steps<'a>(&'a Mutex<Vec<u64>>);
        impl RunObserver for Steps<'_> {
            fn progressed(&self, done: u64) {
                self.0.lock().unwrap().push(done);
            }
        }
        let mut records: Vec<Record> = Vec::new();
        let played = SimBackend::default()
            .play(
                RunRequest {
                    timeline,
                    arm: "first-fit",
                    seed: 1,
                    policy: Some(Box::new(first_feasible)),
                },
                &mut records,
                &Steps(&steps),
            )
            .unwrap();
        let steps = steps.into_inner().unwrap();
        assert!(steps.windows(2).all(|w| w[0] <= w[1]), "{steps:?}");
        assert_eq!(steps.last(), Some(&PROGRESS_STEPS));
        assert!(matches!(records.last(), Some(Record::End { .. })));
        assert!(played.policy_times.is_some_and(|t| !t.charged && !t.nanos.is_empty()));
        assert!(played.scenario_seconds > 0.0);
    }

    #[test]
    fn an_arm_without_a_policy_is_refused() {
        let timeline = timeline();
        let mut records: Vec<Record> = Vec::new();
        let err = SimBackend::default()
            .play(
                RunRequest {
                    timeline,
                    arm: "default",
                    seed: 1,
                    policy: None,
                },
                &mut records,
                &Unobserved,
            )
            .unwrap_err();
        assert!(err.to_string().contains("arm default"), "{err}");
        assert!(records.is_empty());
    }
}
