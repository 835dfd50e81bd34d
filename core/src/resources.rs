//! Resource quantities: cpu in millicores, memory in bytes, as Kubernetes
//! accounts them, and parsing of Kubernetes quantity strings ("250m", "1.5",
//! "512Mi", "2G").

use serde::{Deserialize, Serialize};
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// An amount of cpu and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Resources {
    /// cpu in millicores (1000 = one core)
    pub cpu_milli: u64,
    /// memory in bytes
    pub memory_bytes: u64,
}

/// What a missing cpu request counts as when kube-scheduler scores nodes
/// (`schedutil.DefaultMilliCPURequest`).
pub const DEFAULT_MILLI_CPU_REQUEST: u64 = 100;
/// What a missing memory request counts as when scoring (`schedutil.DefaultMemoryRequest`, 200Mi).
pub const DEFAULT_MEMORY_REQUEST: u64 = 200 * 1024 * 1024;

impl Resources {
    /// These requests with a zero cpu or memory request replaced by the
    /// scoring default (`schedutil.GetNonzeroRequests`): what a bound pod adds
    /// to its node's [`crate::NodeState::non_zero_requested`]. Upstream
    /// replaces only a *missing* request; the model cannot tell a missing
    /// request from an explicit zero and treats both as missing.
    pub fn non_zero_for_scoring(self) -> Resources {
        Resources {
            cpu_milli: if self.cpu_milli == 0 {
                DEFAULT_MILLI_CPU_REQUEST
            } else {
                self.cpu_milli
            },
            memory_bytes: if self.memory_bytes == 0 {
                DEFAULT_MEMORY_REQUEST
            } else {
                self.memory_bytes
            },
        }
    }

    pub const ZERO: Resources = Resources {
        cpu_milli: 0,
        memory_bytes: 0,
    };

    pub fn new(cpu_milli: u64, memory_bytes: u64) -> Resources {
        Resources {
            cpu_milli,
            memory_bytes,
        }
    }
    pub fn is_zero(&self) -> bool {
        self.cpu_milli == 0 && self.memory_bytes == 0
    }
    /// True when every dimension of `self` is at most that of `other`.
    pub fn fits_in(&self, other: &Resources) -> bool {
        self.cpu_milli <= other.cpu_milli && self.memory_bytes <= other.memory_bytes
    }
    pub fn saturating_sub(self, rhs: Resources) -> Resources {
        Resources {
            cpu_milli: self.cpu_milli.saturating_sub(rhs.cpu_milli),
            memory_bytes: self.memory_bytes.saturating_sub(rhs.memory_bytes),
        }
    }
}

impl Add for Resources {
    type Output = Resources;
    fn add(self, rhs: Resources) -> Resources {
        Resources {
            cpu_milli: self.cpu_milli.saturating_add(rhs.cpu_milli),
            memory_bytes: self.memory_bytes.saturating_add(rhs.memory_bytes),
        }
    }
}

impl AddAssign for Resources {
    fn add_assign(&mut self, rhs: Resources) {
        *self = *self + rhs;
    }
}

impl Sub for Resources {
    type Output = Resources;
    fn sub(self, rhs: Resources) -> Resources {
        self.saturating_sub(rhs)
    }
}

impl SubAssign for Resources {
    fn sub_assign(&mut self, rhs: Resources) {
        *self = self.saturating_sub(rhs);
    }
}

/// A quantity string that is not a valid Kubernetes quantity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid quantity {value:?}: {reason}")]
pub struct QuantityError {
    pub value: String,
    pub reason: &'static str,
}

fn split_quantity(s: &str) -> Result<(f64, &str), QuantityError> {
    let err = |reason| QuantityError {
        value: s.to_string(),
        reason,
    };
    let t = s.trim();
    if t.is_empty() {
        return Err(err("empty"));
    }
    let idx = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(t.len());
    let (num, suffix) = t.split_at(idx);
    let n: f64 = num.parse().map_err(|_| err("not a number"))?;
    if !n.is_finite() {
        return Err(err("not finite"));
    }
    if n < 0.0 {
        return Err(err("negative"));
    }
    Ok((n, suffix))
}

/// Parses a cpu quantity ("250m", "0.5", "2") into millicores.
pub fn parse_cpu_milli(s: &str) -> Result<u64, QuantityError> {
    let (n, suffix) = split_quantity(s)?;
    let milli = match suffix {
        "" => n * 1000.0,
        "m" => n,
        _ => {
            return Err(QuantityError {
                value: s.to_string(),
                reason: "unknown cpu suffix (use m or none)",
            });
        }
    };
    if milli > 1e15 {
        return Err(QuantityError {
            value: s.to_string(),
            reason: "too large",
        });
    }
    Ok(milli.round() as u64)
}

/// Parses a memory quantity ("512Mi", "1Gi", "1G", "1048576") into bytes.
pub fn parse_memory_bytes(s: &str) -> Result<u64, QuantityError> {
    let (n, suffix) = split_quantity(s)?;
    let mult: f64 = match suffix {
        "" => 1.0,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0f64.powi(4),
        _ => {
            return Err(QuantityError {
                value: s.to_string(),
                reason: "unknown memory suffix (use k, M, G, T, Ki, Mi, Gi, Ti or none)",
            });
        }
    };
    let bytes = n * mult;
    if bytes > 1e18 {
        return Err(QuantityError {
            value: s.to_string(),
            reason: "too large",
        });
    }
    Ok(bytes.round() as u64)
}

/// Formats millicores the way kubectl does ("250m", "2").
pub fn format_cpu_milli(milli: u64) -> String {
    if milli.is_multiple_of(1000) {
        format!("{}", milli / 1000)
    } else {
        format!("{milli}m")
    }
}

/// Formats bytes with the largest binary suffix that divides them exactly.
pub fn format_memory_bytes(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)];
    for (suffix, unit) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{suffix}", bytes / unit);
        }
    }
    bytes.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu() {
        assert_eq!(parse_cpu_milli("250m").unwrap(), 250);
        assert_eq!(parse_cpu_milli("0.5").unwrap(), 500);
        assert_eq!(parse_cpu_milli("2").unwrap(), 2000);
        assert!(parse_cpu_milli("2Gi").is_err());
        assert!(parse_cpu_milli("-1").is_err());
        assert!(parse_cpu_milli("").is_err());
    }

    #[test]
    fn parses_memory() {
        assert_eq!(parse_memory_bytes("512Mi").unwrap(), 512 << 20);
        assert_eq!(parse_memory_bytes("1G").unwrap(), 1_000_000_000);
        assert_eq!(parse_memory_bytes("1.5Gi").unwrap(), 3 << 29);
        assert!(parse_memory_bytes("12q").is_err());
    }

    #[test]
    fn formats_round_trip() {
        assert_eq!(format_cpu_milli(1500), "1500m");
        assert_eq!(format_cpu_milli(2000), "2");
        assert_eq!(format_memory_bytes(512 << 20), "512Mi");
        assert_eq!(parse_memory_bytes(&format_memory_bytes(3 << 30)).unwrap(), 3 << 30);
    }

    #[test]
    fn missing_requests_count_as_the_scoring_defaults() {
        assert_eq!(Resources::ZERO.non_zero_for_scoring(), Resources::new(100, 200 << 20));
        assert_eq!(Resources::new(0, 5).non_zero_for_scoring(), Resources::new(100, 5));
        assert_eq!(
            Resources::new(7, 0).non_zero_for_scoring(),
            Resources::new(7, 200 << 20)
        );
        assert_eq!(Resources::new(7, 5).non_zero_for_scoring(), Resources::new(7, 5));
    }

    #[test]
    fn fits_and_subtracts() {
        let a = Resources::new(500, 100);
        let b = Resources::new(1000, 100);
        assert!(a.fits_in(&b));
        assert!(!b.fits_in(&a));
        assert_eq!(a - b, Resources::new(0, 0));
    }
}
