//! Every scheduling decision's real wall-clock time, per run.
//!
//! Wall-clock time is the one metric input that is not in records.jsonl:
//! records must stay byte-identical for a seed, and no two machines (or two
//! runs on one) take the same nanoseconds. The harness writes
//! `runs/<arm>/seed-<n>/decision_times.json` beside the records with
//! [`DecisionTimes::write`]; [`crate::metrics::from_file`] reads it when it
//! is there. This crate owns the run-folder format, hence the file's.
//!
//! ```json
//! {"format": 1, "unit": "ns", "decisions": 1200, "mean_ns": 41000.5,
//!  "p50_ns": 38015, "p99_ns": 120319, "max_ns": 400127, "charged": false,
//!  "histogram": "<HdrHistogram V2, uncompressed, base64>"}
//! ```
//!
//! The histogram is the data; the other numbers are read from it, for
//! people and tools that do not decode HdrHistogram. `charged` says whether
//! the simulator added the decision time to virtual time (then it shaped the
//! run's records too).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file beside a run's records.jsonl.
pub const DECISION_TIMES_FILE: &str = "decision_times.json";
/// The version of the file's layout that this crate writes and reads.
pub const FORMAT: u32 = 1;
/// Significant digits of the nanosecond histogram.
pub const SIGNIFICANT_DIGITS: u8 = 3;

/// Why a decision-times file could not be written or read; every variant
/// names the file.
#[derive(Debug, thiserror::Error)]
pub enum DecisionTimesError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a decision-times file: {source}")]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{path}: {reason}")]
    Invalid { path: PathBuf, reason: String },
}

/// The wall-clock time of every scheduling decision of one run, in
/// nanoseconds.
#[derive(Debug, Clone)]
pub struct DecisionTimes {
    pub histogram: Histogram<u64>,
    /// the simulator charged decision time to virtual time
    pub charged: bool,
}

impl Default for DecisionTimes {
    fn default() -> Self {
        Self::new()
    }
}

/// A run's decision times as its metrics hold them (see
/// [`DecisionTimes::facts`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecisionTimeFacts {
    pub decisions: u64,
    /// the simulator charged decision time to virtual time
    pub charged: bool,
    /// `None` without decisions, as are the quantiles
    pub mean_ns: Option<f64>,
    pub p50_ns: Option<u64>,
    pub p99_ns: Option<u64>,
}

/// The file's JSON.
#[derive(Debug, Serialize, Deserialize)]
struct File {
    format: u32,
    unit: String,
    decisions: u64,
    mean_ns: Option<f64>,
    p50_ns: Option<u64>,
    p99_ns: Option<u64>,
    max_ns: Option<u64>,
    charged: bool,
    histogram: String,
}

impl DecisionTimes {
    /// An empty, auto-resizing histogram, not charged.
    pub fn new() -> Self {
        DecisionTimes {
            // hdrhistogram refuses only more than 5 significant digits
            histogram: Histogram::new(SIGNIFICANT_DIGITS).expect("3 significant digits are valid"),
            charged: false,
        }
    }

    pub fn from_histogram(histogram: Histogram<u64>, charged: bool) -> Self {
        DecisionTimes { histogram, charged }
    }

    /// Adds one decision that took `ns` nanoseconds. The histogram grows to
    /// hold it; a value it cannot grow to (or a histogram that does not
    /// auto-resize) is clamped to its range rather than lost.
    pub fn record(&mut self, ns: u64) {
        // `saturating_record` alone would clamp without growing
        if self.histogram.record(ns).is_err() {
            self.histogram.saturating_record(ns);
        }
    }

    pub fn decisions(&self) -> u64 {
        self.histogram.len()
    }

    /// The histogram's mean (of bucket midpoints, within 0.1%); `None` without
    /// decisions.
    pub fn mean_ns(&self) -> Option<f64> {
        (!self.histogram.is_empty()).then(|| self.histogram.mean())
    }

    /// The nearest-rank `q`-quantile, as the upper bound of its bucket.
    pub fn quantile_ns(&self, q: f64) -> Option<u64> {
        (!self.histogram.is_empty()).then(|| self.histogram.value_at_quantile(q))
    }

    pub fn max_ns(&self) -> Option<u64> {
        (!self.histogram.is_empty()).then(|| self.histogram.max())
    }

    /// What a run's metrics keep: the histogram's counts take tens of KB per
    /// run, and a summary of thousands of runs needs only these.
    pub fn facts(&self) -> DecisionTimeFacts {
        DecisionTimeFacts {
            decisions: self.decisions(),
            charged: self.charged,
            mean_ns: self.mean_ns(),
            p50_ns: self.quantile_ns(0.5),
            p99_ns: self.quantile_ns(0.99),
        }
    }

    /// Writes the file to a temporary name beside `path`, then renames it, so
    /// that a reader never sees half a file.
    pub fn write(&self, path: &Path) -> crate::Result<()> {
        let invalid = |reason: String| DecisionTimesError::Invalid {
            path: path.to_path_buf(),
            reason,
        };
        let histogram = crate::hdr::to_base64(&self.histogram).map_err(invalid)?;
        let file = File {
            format: FORMAT,
            unit: "ns".to_string(),
            decisions: self.decisions(),
            mean_ns: self.mean_ns(),
            p50_ns: self.quantile_ns(0.5),
            p99_ns: self.quantile_ns(0.99),
            max_ns: self.max_ns(),
            charged: self.charged,
            histogram,
        };
        let json = serde_json::to_string_pretty(&file).map_err(|source| DecisionTimesError::Json {
            path: path.to_path_buf(),
            source,
        })?;
        crate::atomic::write(path, (json + "\n").as_bytes()).map_err(|source| DecisionTimesError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(())
    }

    /// Reads a file [`DecisionTimes::write`] wrote; refuses another format or
    /// unit, a histogram that does not decode, and a decision count that
    /// disagrees with the histogram.
    pub fn read(path: &Path) -> Result<Self, DecisionTimesError> {
        let invalid = |reason: String| DecisionTimesError::Invalid {
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|source| DecisionTimesError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let file: File = schedlab_core::json_input::parse_object(&text)
            .map_err(|e| invalid(format!("not a decision-times file: {e}")))?;
        if file.format != FORMAT {
            return Err(invalid(format!(
                "format {} (this schedlab reads {FORMAT})",
                file.format
            )));
        }
        if file.unit != "ns" {
            return Err(invalid(format!("unit {:?}, expected \"ns\"", file.unit)));
        }
        let histogram = crate::hdr::from_base64(&file.histogram).map_err(invalid)?;
        if histogram.len() != file.decisions {
            return Err(invalid(format!(
                "\"decisions\" is {} but the histogram holds {}",
                file.decisions,
                histogram.len()
            )));
        }
        Ok(DecisionTimes {
            histogram,
            charged: file.charged,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_file_reads_back() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(DECISION_TIMES_FILE);
        let mut d = DecisionTimes::new();
        for ns in [1_000, 2_000, 3_000, 1_000_000] {
            d.record(ns);
        }
        d.charged = true;
        d.write(&path).unwrap();
        let back = DecisionTimes::read(&path).unwrap();
        assert_eq!(back.histogram, d.histogram);
        assert!(back.charged);
        assert_eq!(back.decisions(), 4);
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(json["format"], 1);
        assert_eq!(json["unit"], "ns");
        assert_eq!(json["decisions"], 4);
        assert_eq!(json["p50_ns"], d.quantile_ns(0.5).unwrap());
        assert_eq!(json["max_ns"], d.max_ns().unwrap());
        assert_eq!(json["charged"], true);
        // no temporary file is left behind
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 1);
        // an empty histogram round-trips too
        DecisionTimes::new().write(&path).unwrap();
        assert_eq!(DecisionTimes::read(&path).unwrap().decisions(), 0);
    }

    #[test]
    fn damaged_files_are_refused_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(DECISION_TIMES_FILE);
        let name = path.display().to_string();
        let mut d = DecisionTimes::new();
        d.record(5_000);
        d.write(&path).unwrap();
        let good = std::fs::read_to_string(&path).unwrap();
        let cases = [
            ("{\"format\": 1", "not a decision-times file"),
            (&good.replace("\"format\": 1", "\"format\": 2"), "format 2"),
            (&good.replace("\"ns\"", "\"ms\""), "unit"),
            (
                &good.replace("\"decisions\": 1", "\"decisions\": 7"),
                "histogram holds 1",
            ),
        ];
        for (text, expected) in cases {
            std::fs::write(&path, text).unwrap();
            let err = DecisionTimes::read(&path).unwrap_err().to_string();
            assert!(err.starts_with(&name) && err.contains(expected), "{err}");
        }
        // a histogram cut short
        let json: serde_json::Value = serde_json::from_str(&good).unwrap();
        let h = json["histogram"].as_str().unwrap();
        std::fs::write(&path, good.replace(h, &h[..12])).unwrap();
        let err = DecisionTimes::read(&path).unwrap_err().to_string();
        assert!(err.starts_with(&name) && err.contains("histogram"), "{err}");
        std::fs::remove_file(&path).unwrap();
        let err = DecisionTimes::read(&path).unwrap_err().to_string();
        assert!(err.starts_with(&name), "{err}");
    }
}
