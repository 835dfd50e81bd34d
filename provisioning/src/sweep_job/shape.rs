//! Which Job shape a server can run a sweep in.

use serde::Serialize;
use std::fmt;

/// How a submission's cells become Jobs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobShape {
    /// One Indexed Job: completion index i runs the submission's i-th cell,
    /// each index with its own retries (`backoffLimitPerIndex`), so one
    /// failing cell neither stops nor starves the others, and Kubernetes
    /// keeps at most `parallelism` pods running. Needs a server where
    /// `backoffLimitPerIndex` is on by default: 1.29 and later.
    Indexed,
    /// One Job per cell (`completions: 1`, the cell's plan index as
    /// `--index N`, retries as its `backoffLimit`), for older servers such as
    /// the project's local 1.20 control plane, which have neither Indexed
    /// Jobs nor per-index retries. Kubernetes does not enforce the sweep's
    /// parallelism here: every cell's pod is created at once and waits
    /// Pending until the cluster (or a Kueue queue) has room for it.
    PerCell,
}

/// The first server version whose Indexed Jobs have per-index retries on
/// by default (`backoffLimitPerIndex`, beta in 1.29).
pub const INDEXED_SINCE: (u32, u32) = (1, 29);

impl JobShape {
    /// The shape for a server of version `major`.`minor`, as its `/version`
    /// reports them (a minor such as "29+", as GKE and EKS write it, counts
    /// as 29). A version that does not parse gets the per-cell shape, which
    /// every server runs.
    pub fn for_server(major: &str, minor: &str) -> JobShape {
        match (leading_number(major), leading_number(minor)) {
            (Some(major), Some(minor)) if (major, minor) >= INDEXED_SINCE => JobShape::Indexed,
            _ => JobShape::PerCell,
        }
    }

    /// The shape for a server's `gitVersion` ("v1.29.3-gke.1"), for servers
    /// whose major and minor are empty; None when it does not parse.
    pub fn for_git_version(git_version: &str) -> Option<JobShape> {
        let mut parts = git_version.trim_start_matches('v').split('.');
        let major = parts.next()?;
        let minor = parts.next()?;
        leading_number(major)?;
        leading_number(minor)?;
        Some(JobShape::for_server(major, minor))
    }

    /// The name `--dry-run` and messages use.
    pub fn as_str(self) -> &'static str {
        match self {
            JobShape::Indexed => "indexed",
            JobShape::PerCell => "per-cell",
        }
    }
}

impl fmt::Display for JobShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The number `text` starts with ("29+" is 29); None without one.
fn leading_number(text: &str) -> Option<u32> {
    let digits: &str = text.trim();
    let end = digits.find(|c: char| !c.is_ascii_digit()).unwrap_or(digits.len());
    digits.get(..end).filter(|d| !d.is_empty())?.parse().ok()
}
