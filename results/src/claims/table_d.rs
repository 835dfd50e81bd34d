//! Claim 5's registered table D (pre-registration amendments 9 and 11): the
//! judged arm against the monolithic foil over cluster sizes, not against
//! the baselines of tables A–C. [`crate::scaling`] computes it with exactly
//! these numbers, and [`super::prereg`] checks the registered block says
//! the same.

/// The registered parameters of table D.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TableD {
    /// the claim it decides
    pub claim: u8,
    /// the arm the judged arm is held against
    pub foil: &'static str,
    pub scenarios: &'static [&'static str],
    /// the sizes registered (the last only if the foil trains there within the budget)
    pub sizes: &'static [usize],
    /// first and last evaluation seed
    pub evaluation_seeds: [u64; 2],
    /// D1: the per-run quantity whose growth in N is fitted (log-log least squares)
    pub primary: &'static str,
    pub resamples: usize,
    pub confidence: f64,
    /// sizes an exponent needs
    pub min_sizes: usize,
    /// D2: metrics tested at each size where both run, lower is better
    pub guards: &'static [&'static str],
    /// D2's level after Holm over every D2 test of the table
    pub alpha: f64,
    /// D4: the foil's training at each size
    pub training_seed: u64,
    pub training_episodes: u64,
    pub training_budget_hours: u64,
    /// how close every later validation reward stays to the last three's mean
    pub convergence_band: f64,
}

/// Table D as registered.
pub const TABLE_D: TableD = TableD {
    claim: 5,
    foil: "drs",
    scenarios: &["churn", "pressure"],
    sizes: &[10, 40, 160, 640, 2560],
    evaluation_seeds: [1, 10],
    primary: "decision_p99_ms",
    resamples: 2_000,
    confidence: 0.95,
    min_sizes: 3,
    guards: &["cost_usd", "failures_per_running_pod_hour"],
    alpha: 0.05,
    training_seed: 1000,
    training_episodes: 100,
    training_budget_hours: 4,
    convergence_band: 0.02,
};

impl TableD {
    /// The block's form of the table.
    pub fn to_value(&self) -> serde_json::Value {
        serde_json::json!({
            "foil": self.foil,
            "scenarios": self.scenarios,
            "sizes": self.sizes,
            "evaluation_seeds": self.evaluation_seeds,
            "primary": {
                "metric": self.primary,
                "fit": "log-log-exponent",
                "resamples": self.resamples,
                "confidence": self.confidence,
                "min_sizes": self.min_sizes,
            },
            "guards": {
                "metrics": self.guards,
                "better": "lower",
                "alpha": self.alpha,
                "holm_family": "table-d",
            },
            "training": {
                "seed": self.training_seed,
                "episodes": self.training_episodes,
                "budget_hours": self.training_budget_hours,
                "convergence_band": self.convergence_band,
            },
        })
    }
}
