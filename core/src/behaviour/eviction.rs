//! How long a pod stays on a node that stopped reporting before it is
//! evicted.
//!
//! When a kubelet stops posting status, the node lifecycle controller taints
//! the node `node.kubernetes.io/unreachable:NoExecute`; the taint-eviction
//! controller (`pkg/controller/tainteviction`) then evicts each pod after the
//! smallest `tolerationSeconds` of its tolerations matching the taint: at once
//! when none matches, never when a matching one has no `tolerationSeconds`.
//! The DefaultTolerationSeconds admission plugin
//! (`plugin/pkg/admission/defaulttolerationseconds`) gives every pod that
//! does not already tolerate the taint an `Exists` toleration for it with
//! `tolerationSeconds: 300`.

use crate::node::{Taint, TaintEffect};
use crate::pod::{Toleration, TolerationOperator};
use crate::time::Span;

/// The taint the node lifecycle controller puts on an unreachable node.
pub const UNREACHABLE_TAINT_KEY: &str = "node.kubernetes.io/unreachable";

/// The time a pod with `tolerations` stays bound to an unreachable node
/// before it is evicted; None: it is never evicted.
pub fn unreachable_eviction_delay(tolerations: &[Toleration], default_toleration_seconds: u64) -> Option<Span> {
    let taint = Taint {
        key: UNREACHABLE_TAINT_KEY.to_string(),
        value: None,
        effect: TaintEffect::NoExecute,
    };
    // the admission plugin looks at key and effect only
    let admitted_default = !tolerations.iter().any(|t| {
        (t.key == UNREACHABLE_TAINT_KEY || t.key.is_empty()) && matches!(t.effect, None | Some(TaintEffect::NoExecute))
    });
    let default = Toleration {
        key: UNREACHABLE_TAINT_KEY.to_string(),
        operator: TolerationOperator::Exists,
        value: None,
        effect: Some(TaintEffect::NoExecute),
        toleration_seconds: Some(default_toleration_seconds),
    };
    let defaults = if admitted_default { Some(&default) } else { None };
    let mut any_match = false;
    let mut min_seconds: Option<u64> = None;
    for t in tolerations.iter().chain(defaults).filter(|t| t.tolerates(&taint)) {
        any_match = true;
        // getMinTolerationTime: an untimed toleration does not bound the stay
        if let Some(secs) = t.toleration_seconds {
            min_seconds = Some(min_seconds.map_or(secs, |m| m.min(secs)));
        }
    }
    if !any_match {
        return Some(Span::ZERO);
    }
    // None here: every matching toleration is untimed, the pod stays for ever
    min_seconds.map(Span::from_secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unreachable(seconds: Option<u64>) -> Toleration {
        Toleration {
            key: UNREACHABLE_TAINT_KEY.into(),
            operator: TolerationOperator::Exists,
            effect: Some(TaintEffect::NoExecute),
            toleration_seconds: seconds,
            ..Default::default()
        }
    }

    #[test]
    fn default_admission_gives_five_minutes() {
        assert_eq!(unreachable_eviction_delay(&[], 300), Some(Span::from_secs(300)));
        // an unrelated toleration does not stop the default
        let spot = Toleration {
            key: "spot".into(),
            operator: TolerationOperator::Exists,
            ..Default::default()
        };
        assert_eq!(unreachable_eviction_delay(&[spot], 42), Some(Span::from_secs(42)));
    }

    #[test]
    fn own_toleration_seconds_win() {
        assert_eq!(
            unreachable_eviction_delay(&[unreachable(Some(30))], 300),
            Some(Span::from_secs(30))
        );
        assert_eq!(
            unreachable_eviction_delay(&[unreachable(Some(30)), unreachable(Some(10))], 300),
            Some(Span::from_secs(10))
        );
    }

    #[test]
    fn untimed_toleration_stays_for_ever() {
        assert_eq!(unreachable_eviction_delay(&[unreachable(None)], 300), None);
        let everything = Toleration {
            operator: TolerationOperator::Exists,
            ..Default::default()
        };
        assert_eq!(unreachable_eviction_delay(&[everything], 300), None);
    }

    #[test]
    fn non_matching_unreachable_toleration_means_immediate_eviction() {
        // key and effect stop the admission default, but the value does not match the taint
        let wrong_value = Toleration {
            key: UNREACHABLE_TAINT_KEY.into(),
            operator: TolerationOperator::Equal,
            value: Some("x".into()),
            effect: Some(TaintEffect::NoExecute),
            toleration_seconds: Some(100),
        };
        assert_eq!(unreachable_eviction_delay(&[wrong_value], 300), Some(Span::ZERO));
    }
}
