//! The scenarios that ship with schedlab (YAML files under `scenarios/`).

/// A built-in scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    pub name: &'static str,
    /// one line, for listings; the YAML's own description says more
    pub description: &'static str,
    pub yaml: &'static str,
    /// files its `replay` phases read, by the name the YAML gives: (name, text)
    pub files: &'static [(&'static str, &'static str)],
}

static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "pressure",
        description: "cascading resource pressure: waves of ever hungrier batch jobs overflow a mixed-price cluster, queue, drain, and OOM nodes",
        yaml: include_str!("../scenarios/pressure.yaml"),
        files: &[],
    },
    Builtin {
        name: "churn",
        description: "volatile churn with fault injection: crashing pods, churn, node failures and mission-critical arrivals",
        yaml: include_str!("../scenarios/churn.yaml"),
        files: &[],
    },
    Builtin {
        name: "trace",
        description: "a replayed cluster trace: a bundled sample in Alibaba's openb_pod_list format, with waves of arrivals that queue at their peaks",
        yaml: include_str!("../scenarios/trace.yaml"),
        files: &[("openb-sample.csv", include_str!("../scenarios/openb-sample.csv"))],
    },
    Builtin {
        name: "mixed",
        description: "batch waves, services and mission-critical groups across two zones, with a zone outage and spot reclaims",
        yaml: include_str!("../scenarios/mixed.yaml"),
        files: &[],
    },
    Builtin {
        name: "autoscaled",
        description: "vertically autoscaled services under churn and faults: memory requests drawn per pod, usage following each pod's own request, leaking neighbours and node faults",
        yaml: include_str!("../scenarios/autoscaled.yaml"),
        files: &[],
    },
    Builtin {
        name: "pressure-v1",
        description: "pressure as of schedlab 0.1 (never drains, no node-pressure OOMs), kept for its published tables",
        yaml: include_str!("../scenarios/pressure-v1.yaml"),
        files: &[],
    },
    Builtin {
        name: "churn-v1",
        description: "churn as of schedlab 0.1 (never tight), kept for its published tables",
        yaml: include_str!("../scenarios/churn-v1.yaml"),
        files: &[],
    },
];

/// Every built-in scenario.
pub fn builtins() -> &'static [Builtin] {
    BUILTINS
}

/// The built-in of this name (also accepted as `builtin:NAME`).
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    let name = name.strip_prefix("builtin:").unwrap_or(name);
    BUILTINS.iter().find(|b| b.name == name)
}
