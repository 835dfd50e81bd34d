//! Size caps, so that a typo (`nodes: 5000000`, `every: 1ms`) fails at load
//! instead of eating the machine.

/// Nodes in one cluster.
pub const MAX_NODES: u64 = 100_000;
/// Pods created over a whole scenario.
pub const MAX_PODS: u64 = 10_000_000;
/// Actions of every kind over a whole scenario.
pub const MAX_ACTIONS: u64 = 20_000_000;
/// Rounds of one churn phase (`for` / `every`).
pub const MAX_CHURN_ROUNDS: u64 = 1_000_000;
/// Any duration: a scenario longer than a year is surely a mistake.
pub const MAX_DURATION_SECS: f64 = 366.0 * 86_400.0;
/// Bytes of a scenario file.
pub const MAX_FILE_BYTES: u64 = 4 << 20;
/// A log-normal distribution's `sigma`: at 4, one draw in 30,000 (4σ) is
/// already e¹⁶ ≈ 9 million times the median; much beyond, draws overflow
/// (sigma 30 drew 2⁶⁴−1 bytes) or underflow to 0.
pub const MAX_LOGNORMAL_SIGMA: f64 = 4.0;
/// Bytes of any one text value after substitution (a name, a label, a
/// description): `${...}` can repeat a parameter, so a small file could
/// otherwise ask for gigabytes.
pub const MAX_TEXT_BYTES: usize = 64 << 10;
/// Characters of a label or taint value, as Kubernetes allows
/// (`validation.IsValidLabelValue`).
pub const MAX_LABEL_VALUE_CHARS: usize = 63;
