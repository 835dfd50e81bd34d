//! A seeded generator of small traces in the openb_pod_list format, so that
//! schedlab ships a replayable sample without the real dataset (which is not
//! ours to redistribute in the repository).
//!
//! Over [`SPAN_SECS`] of trace time (starting at [`EPOCH_SECS`], so replay's
//! shift to the phase start is exercised):
//! - arrivals are a Poisson process whose rate follows two daily-like waves,
//!   `rate(t) = base · (1 − 0.9·cos(2πt / 3h))` (quiet at 0, 3h and 6h, peaks
//!   at 1.5h and 4.5h), drawn by thinning; `base` makes `rows` arrivals
//!   expected over the span, and exactly `rows` are written;
//! - each row's qos class is LS 40%, BE 45%, Burstable 10%, Guaranteed 5%,
//!   and its requests one of a few shapes of its class (as in the real trace,
//!   where a handful of shapes cover most tasks);
//! - lifetimes are log-normal per class (median LS 90m, BE 8m, Burstable 30m,
//!   Guaranteed 60m; sigma 0.8, 1.0, 0.8, 0.6); a pod still alive at the
//!   span's end has no deletion_time, as tasks running at the end of the
//!   real trace;
//! - 30% of rows also ask for one GPU (gpu_milli 250, 500 or 1000), a tenth
//!   of those with a gpu_spec; scheduled_time is 0–3 s after creation.
//!
//! Every draw comes from `rng::stream(seed, &[SAMPLE_STREAM])`.

use rand::Rng;
use schedlab_core::Dist;
use schedlab_core::rng;
use std::fmt::Write;

/// Trace seconds the sample covers.
pub const SPAN_SECS: f64 = 6.0 * 3600.0;
/// The trace time of the sample's first instant.
pub const EPOCH_SECS: f64 = 1_000_000.0;
/// The random stream of the generator: its own key, so that it never shares
/// draws with a run's streams (`rng::purpose` keys are small numbers).
const SAMPLE_STREAM: u64 = 0x7472_6163_6500;

struct Class {
    qos: &'static str,
    weight: f64,
    /// (cpu_milli, memory_mib)
    shapes: &'static [(u64, u64)],
    median_life_secs: f64,
    sigma: f64,
}

const CLASSES: &[Class] = &[
    Class {
        qos: "LS",
        weight: 0.40,
        shapes: &[(2000, 4096), (4000, 8192), (8000, 16384)],
        median_life_secs: 90.0 * 60.0,
        sigma: 0.8,
    },
    Class {
        qos: "BE",
        weight: 0.45,
        shapes: &[(1000, 2048), (2000, 8192), (4000, 4096)],
        median_life_secs: 8.0 * 60.0,
        sigma: 1.0,
    },
    Class {
        qos: "Burstable",
        weight: 0.10,
        shapes: &[(4000, 16384)],
        median_life_secs: 30.0 * 60.0,
        sigma: 0.8,
    },
    Class {
        qos: "Guaranteed",
        weight: 0.05,
        shapes: &[(8000, 32768)],
        median_life_secs: 60.0 * 60.0,
        sigma: 0.6,
    },
];

/// `rows` rows of a sample trace, with its header, for `seed`.
pub fn openb_sample(seed: u64, rows: usize) -> String {
    let mut rng = rng::stream(seed, &[SAMPLE_STREAM]);
    let base = rows as f64 / SPAN_SECS;
    let peak = base * 1.9;
    let mut out = super::COLUMNS.join(",");
    out.push('\n');
    let mut t = 0.0f64;
    let mut written = 0;
    while written < rows {
        // thinning: candidates at the peak rate, kept with rate(t) / peak
        t += Dist::Exponential { mean: 1.0 / peak }.sample(&mut rng);
        let wave = 1.0 - 0.9 * (2.0 * std::f64::consts::PI * t / (3.0 * 3600.0)).cos();
        if rng.random::<f64>() * 1.9 > wave {
            continue;
        }
        let class = pick(&mut rng);
        let (cpu, memory) = class.shapes[rng.random_range(0..class.shapes.len())];
        let created = (EPOCH_SECS + t).floor();
        let life = Dist::LogNormal {
            median: class.median_life_secs,
            sigma: class.sigma,
        }
        .sample(&mut rng)
        .round()
        .max(1.0);
        let deleted = (created + life <= EPOCH_SECS + SPAN_SECS).then_some(created + life);
        let (num_gpu, gpu_milli, gpu_spec) = if rng.random::<f64>() < 0.3 {
            let milli = [250, 500, 1000][rng.random_range(0..3)];
            let spec = if rng.random::<f64>() < 0.1 {
                "V100M16|V100M32"
            } else {
                ""
            };
            (1, milli, spec)
        } else {
            (0, 0, "")
        };
        let phase = match deleted {
            None => "Running",
            Some(_) => ["Succeeded", "Succeeded", "Succeeded", "Failed", "Running"][rng.random_range(0..5)],
        };
        let scheduled = created + rng.random_range(0..=3) as f64;
        let _ = writeln!(
            out,
            "sample-pod-{written:04},{cpu},{memory},{num_gpu},{gpu_milli},{gpu_spec},{},{phase},{created},{},{scheduled}",
            class.qos,
            deleted.map(|d| d.to_string()).unwrap_or_default(),
        );
        written += 1;
    }
    out
}

fn pick(rng: &mut impl Rng) -> &'static Class {
    let mut x = rng.random::<f64>();
    for c in CLASSES {
        if x < c.weight {
            return c;
        }
        x -= c.weight;
    }
    &CLASSES[0]
}
