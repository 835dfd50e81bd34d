//! Which kube-scheduler release a profile follows. The filters, the node
//! sampling with its rotating start index and `selectHost` are the same in
//! every release the project meets; the default profile's scores are not.
//! A difference is data: the weight is the profile's
//! ([`crate::profile::kube_default_scores`]), a scorer's rules are a field
//! of that plugin's configuration ([`crate::profile::ScorePlugin`]), the
//! failure message's wording the profile's [`crate::profile::Profile::release`].
//!
//! What changed between the two releases modelled, for the plugins the
//! cluster model has data for:
//!
//! | | v1.20 | v1.33 |
//! | --- | --- | --- |
//! | TaintToleration score weight | 1 | 3 |
//! | BalancedAllocation requests | non-zero (`useRequested: false`) | real; best-effort pods skipped |
//! | BalancedAllocation formula | `(1 - abs(cpu - memory)) * 100`, 0 once a fraction reaches 1 | `(1 - std) * 100`, fractions capped at 1 |
//! | NodeResourcesFit, a resource the node has none of | scores 0 and keeps its weight | skipped |
//! | untolerated-taint reason | `node(s) had taint {k: v}, that the pod didn't tolerate` | `node(s) had untolerated taint {k: v}` |
//!
//! Sources: v1.20 from Debian's `kubernetes` 1.20.5+really1.20.2 source
//! package (`pkg/scheduler/algorithmprovider/registry.go`,
//! `framework/plugins/noderesources/{resource_allocation,balanced_allocation,least_allocated,most_allocated}.go`,
//! `framework/plugins/tainttoleration/taint_toleration.go`), the release the
//! project's `local` control plane runs; v1.33 from upstream
//! (`apis/config/v1/default_plugins.go` and the same plugin files).

/// A kube-scheduler release whose default-profile rules a profile follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Release {
    /// v1.20: the real kube-scheduler of the `local` control plane, which the
    /// twin test (`scheduler/tests/twin_local.rs`) plays against.
    V1_20,
    /// v1.33.
    V1_33,
}

impl Release {
    /// The version as Kubernetes writes it.
    pub fn version(self) -> &'static str {
        match self {
            Release::V1_20 => "v1.20",
            Release::V1_33 => "v1.33",
        }
    }
}

/// Written as the version (`"v1.20"`), e.g. in a run folder's manifest.
impl serde::Serialize for Release {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.version())
    }
}

impl std::fmt::Display for Release {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.version())
    }
}
