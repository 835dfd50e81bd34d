//! Cost volatility: how much the cluster's cost rate swings, over the whole
//! run and over the fault window.

use super::Volatility;
use crate::stats::{mean, sample_std};
use schedlab_core::Time;

/// The cost rate series, ClusterSample.hourly_cost in time order (the
/// samples check the order and the values).
#[derive(Debug, Default)]
pub(super) struct CostSeries {
    samples: Vec<(Time, f64)>,
}

fn volatility(rates: &[f64]) -> Volatility {
    let cv = match (mean(rates), sample_std(rates)) {
        (Some(m), Some(s)) if m > 0.0 => Some(s / m),
        _ => None,
    };
    let max = rates.iter().copied().reduce(f64::max);
    let min = rates.iter().copied().reduce(f64::min);
    Volatility {
        cv,
        range: max.zip(min).map(|(a, b)| a - b),
        step_max: rates.windows(2).map(|w| (w[1] - w[0]).abs()).reduce(f64::max),
    }
}

impl CostSeries {
    pub fn push(&mut self, t: Time, hourly_cost: f64) {
        self.samples.push((t, hourly_cost));
    }

    /// Over every sample, and over the samples inside `window` (bounds
    /// included) when there is one.
    pub fn finish(&self, window: Option<(Time, Time)>) -> (Volatility, Option<Volatility>) {
        let all: Vec<f64> = self.samples.iter().map(|&(_, c)| c).collect();
        let fault = window.map(|(start, stop)| {
            let inside: Vec<f64> = self
                .samples
                .iter()
                .filter(|&&(t, _)| start <= t && t <= stop)
                .map(|&(_, c)| c)
                .collect();
            volatility(&inside)
        });
        (volatility(&all), fault)
    }
}
