//! The command line. Every flag has the default the Deployment relies on, so
//! the manifests name only what differs per replica (`--identity`).

use clap::{Parser, ValueEnum};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How log lines look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// one JSON object per line (for log collectors)
    Json,
    /// human-readable lines
    Text,
}

/// The in-cluster AGMARL-DKS scheduler: binds pending pods whose
/// `spec.schedulerName` is its own, while it holds the Lease.
#[derive(Debug, Clone, Parser)]
#[command(name = "agmarl-scheduler", version, about)]
pub struct Args {
    /// pods with this spec.schedulerName are this scheduler's
    #[arg(long, default_value = "agmarl")]
    pub scheduler_name: String,
    /// an AGMARL checkpoint (safetensors, with its JSON sidecar beside it);
    /// default: the checkpoint built into the binary
    #[arg(long)]
    pub checkpoint: Option<PathBuf>,
    /// run the monolithic foil instead of AGMARL-DKS: a DRS network
    /// (`schedlab train --variant drs --set nodes=N`, safetensors with its
    /// JSON sidecar). It decides for a cluster of exactly the size it was
    /// trained for, so the scheduler refuses to start when the nodes it sees
    /// (after --node-selector) are another number
    #[arg(long, value_name = "FILE", conflicts_with_all = ["checkpoint", "agmarl_config"])]
    pub drs_checkpoint: Option<PathBuf>,
    /// the AGMARL controller's settings as JSON, any subset of its fields
    /// (as `schedlab scenario --agmarl-config`), e.g. `{"preemption": false}`
    /// to leave a pod no node takes unschedulable instead of preempting pods
    /// of lower priority for it; default: the controller's defaults
    /// (preemption on, as in every kube-scheduler profile)
    #[arg(long, value_name = "FILE")]
    pub agmarl_config: Option<PathBuf>,
    /// kubeconfig to use; default: in-cluster config, else KUBECONFIG, else ~/.kube/config
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// schedule only pods of this namespace; default: all namespaces
    #[arg(long)]
    pub namespace: Option<String>,
    /// label selector of the nodes pods may go to; default: every node
    #[arg(long)]
    pub node_selector: Option<String>,
    /// the coordination.k8s.io/v1 Lease the replicas compete for
    #[arg(long, default_value = "agmarl-scheduler")]
    pub lease_name: String,
    #[arg(long, default_value = "schedlab-system")]
    pub lease_namespace: String,
    /// this replica's name in the Lease (the pod name in a cluster)
    #[arg(long, env = "POD_NAME")]
    pub identity: Option<String>,
    /// how long a Lease holder keeps leadership without renewing (whole
    /// seconds, at least 2s); a standby takes over at most this long after the
    /// leader dies
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub lease_duration: Duration,
    /// address of /metrics, /healthz and /readyz
    #[arg(long, default_value = "0.0.0.0:9090")]
    pub listen: SocketAddr,
    #[arg(long, value_enum, default_value_t = LogFormat::Json)]
    pub log_format: LogFormat,
    /// kept with the policy for the record (AGMARL draws no random numbers)
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// client-side rate limit of API requests (kube-scheduler's defaults)
    #[arg(long, default_value_t = kube_backend::client::CLIENT_GO_QPS)]
    pub qps: f32,
    #[arg(long, default_value_t = kube_backend::client::CLIENT_GO_BURST)]
    pub burst: u32,
}

/// A duration as `15s`, `500ms`, `1m`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text).map_err(|e| format!("{text:?}: {e} (write e.g. 15s or 1m)"))
}

/// Why the Lease timings cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaseTimingError {
    #[error("--lease-duration {0:?}: give whole seconds (a Lease counts in seconds)")]
    Fraction(Duration),
    #[error("--lease-duration {0:?}: give at least 2s (renewal must come before expiry)")]
    TooShort(Duration),
}

/// The Lease's duration and the margin before expiry at which the holder
/// renews, both in seconds. The margin is a third of the duration, as
/// kube-scheduler renews a 15 s lease 5 s ahead (its 10 s renew deadline).
pub fn lease_timing(duration: Duration) -> Result<(u64, u64), LeaseTimingError> {
    if duration.subsec_nanos() != 0 {
        return Err(LeaseTimingError::Fraction(duration));
    }
    let secs = duration.as_secs();
    if secs < 2 {
        return Err(LeaseTimingError::TooShort(duration));
    }
    Ok((secs, (secs / 3).max(1)))
}

impl Args {
    /// The identity: `--identity` or `POD_NAME`, else `HOSTNAME`, else one
    /// made of the process id (unique on one machine only).
    pub fn identity(&self) -> String {
        self.identity
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| std::env::var("HOSTNAME").ok().filter(|s| !s.is_empty()))
            .unwrap_or_else(|| format!("agmarl-scheduler-{}", std::process::id()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, clap::Error> {
        Args::try_parse_from(std::iter::once("agmarl-scheduler").chain(args.iter().copied()))
    }

    #[test]
    fn defaults_are_the_deployments() {
        let a = parse(&[]).unwrap();
        assert_eq!(a.scheduler_name, "agmarl");
        assert_eq!(a.lease_name, "agmarl-scheduler");
        assert_eq!(a.lease_namespace, "schedlab-system");
        assert_eq!(a.lease_duration, Duration::from_secs(15));
        assert_eq!(a.listen, "0.0.0.0:9090".parse().unwrap());
        assert_eq!(a.log_format, LogFormat::Json);
        assert_eq!(a.checkpoint, None);
        assert_eq!(a.agmarl_config, None);
        assert_eq!(a.drs_checkpoint, None);
        assert_eq!(a.namespace, None);
    }

    #[test]
    fn every_flag_parses() {
        let a = parse(&[
            "--scheduler-name",
            "x",
            "--checkpoint",
            "/c.safetensors",
            "--agmarl-config",
            "/agmarl.json",
            "--kubeconfig",
            "/k",
            "--namespace",
            "ns",
            "--node-selector",
            "a=b",
            "--lease-name",
            "l",
            "--lease-namespace",
            "lns",
            "--identity",
            "pod-1",
            "--lease-duration",
            "4s",
            "--listen",
            "127.0.0.1:0",
            "--log-format",
            "text",
            "--seed",
            "7",
            "--qps",
            "100",
            "--burst",
            "200",
        ])
        .unwrap();
        assert_eq!(a.scheduler_name, "x");
        assert_eq!(a.checkpoint, Some(PathBuf::from("/c.safetensors")));
        assert_eq!(a.agmarl_config, Some(PathBuf::from("/agmarl.json")));
        assert_eq!(a.node_selector.as_deref(), Some("a=b"));
        assert_eq!(a.identity(), "pod-1");
        assert_eq!(a.lease_duration, Duration::from_secs(4));
        assert_eq!(a.log_format, LogFormat::Text);
        assert_eq!((a.seed, a.qps, a.burst), (7, 100.0, 200));
    }

    #[test]
    fn the_foil_replaces_agmarl_and_takes_none_of_its_files() {
        let a = parse(&["--drs-checkpoint", "/drs.safetensors"]).unwrap();
        assert_eq!(a.drs_checkpoint, Some(PathBuf::from("/drs.safetensors")));
        for other in ["--checkpoint", "--agmarl-config"] {
            let err = parse(&["--drs-checkpoint", "/d", other, "/x"]).unwrap_err().to_string();
            assert!(err.contains("--drs-checkpoint") && err.contains(other), "{err}");
        }
    }

    #[test]
    fn bad_values_are_refused_with_the_flag() {
        let err = parse(&["--lease-duration", "soon"]).unwrap_err().to_string();
        assert!(err.contains("soon"), "{err}");
        assert!(parse(&["--log-format", "xml"]).is_err());
        assert!(parse(&["--listen", "nowhere"]).is_err());
        assert!(parse(&["--bogus"]).is_err());
    }

    #[test]
    fn lease_timing_renews_a_third_ahead() {
        assert_eq!(lease_timing(Duration::from_secs(15)), Ok((15, 5)));
        assert_eq!(lease_timing(Duration::from_secs(4)), Ok((4, 1)));
        assert_eq!(lease_timing(Duration::from_secs(2)), Ok((2, 1)));
        assert_eq!(
            lease_timing(Duration::from_secs(1)),
            Err(LeaseTimingError::TooShort(Duration::from_secs(1)))
        );
        assert!(matches!(
            lease_timing(Duration::from_millis(4500)),
            Err(LeaseTimingError::Fraction(_))
        ));
    }
}
