//! One AGMARL episode on the simulator: the exploring policy deciding, the
//! records feeding the tracker of realised metrics (and, for a probe, the
//! run's metrics), and what the episode taught. Training and its validation
//! both play them.

use anyhow::{Context, Result};
use results::metrics::RunMetricsBuilder;
use scheduler::agmarl::train::{Episode, Explorer, RealisedTracker, RewardConfig};

/// Forwards the simulator's records to the realised-metrics tracker and,
/// for a probe episode, to the run's metrics.
struct TrackerSink<'a> {
    tracker: &'a mut RealisedTracker,
    metrics: Option<&'a mut RunMetricsBuilder>,
}

impl schedlab_core::RecordSink for TrackerSink<'_> {
    fn record(&mut self, record: schedlab_core::Record) {
        self.tracker.observe(&record);
        if let Some(metrics) = self.metrics.as_deref_mut() {
            metrics.push(&record);
        }
    }
}

/// Plays `scenario` at `seed` on the simulator with `explorer` deciding,
/// and assembles what it taught; the records also go to `metrics` when given.
pub(crate) fn play_episode(
    scenario: &workloads::Scenario,
    seed: u64,
    mut explorer: Explorer,
    mut tracker: RealisedTracker,
    reward: &RewardConfig,
    metrics: Option<&mut RunMetricsBuilder>,
) -> Result<Episode> {
    let timeline = scenario.expand(seed);
    let sim = schedlab_core::sim::Sim::new(timeline, seed, schedlab_core::behaviour::ModelConfig::default())
        .context("setting up the simulator")?;
    let mut placer =
        |pod: &schedlab_core::PendingPod<'_>, view: &schedlab_core::ClusterView<'_>| explorer.place(pod, view);
    let summary = sim.finish(
        &mut placer,
        &mut TrackerSink {
            tracker: &mut tracker,
            metrics,
        },
    );
    tracing::debug!(scenario = scenario.name(), seed, ?summary, "episode played");
    let realised = tracker.take_completed();
    Ok(explorer.finish(realised, tracker.horizon(), reward)?)
}
