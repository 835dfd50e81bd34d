//! Why no node fit: the reason histogram of kube-scheduler's `FitError`
//! (`pkg/scheduler/framework/types.go` `FitError.Error`), e.g.
//! "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated
//! taint {spot: true}."
//!
//! Counting is cheap (a few integers, plus one entry per distinct taint) so a
//! scan can record every rejection as it goes; the message is formatted only
//! when a pod turns out unschedulable. The message has no trailing
//! "preemption: ..." part: v1.20 writes none (later releases add one).

use crate::filters::FilterFailure;
use crate::release::Release;
use schedlab_core::node::Taint;

/// Reason strings exactly as upstream writes them.
pub mod reason {
    /// nodeunschedulable `ErrReasonUnschedulable`
    pub const UNSCHEDULABLE: &str = "node(s) were unschedulable";
    /// noderesources/fit.go `fitsRequest`
    pub const TOO_MANY_PODS: &str = "Too many pods";
    pub const INSUFFICIENT_CPU: &str = "Insufficient cpu";
    pub const INSUFFICIENT_MEMORY: &str = "Insufficient memory";
    /// schedule_one.go `ErrNoNodesAvailable`
    pub const NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";
}

/// TaintToleration's reason for a node with the untolerated taint `key: value`.
fn untolerated_taint(release: Release, key: &str, value: &str) -> String {
    match release {
        Release::V1_20 => format!("node(s) had taint {{{key}: {value}}}, that the pod didn't tolerate"),
        Release::V1_33 => format!("node(s) had untolerated taint {{{key}: {value}}}"),
    }
}

fn same_str(a: &str, b: &str) -> bool {
    std::ptr::eq(a, b) || a == b
}

/// Counts of filter rejections by reason, for one scheduling attempt.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnosis<'a> {
    unschedulable: u32,
    too_many_pods: u32,
    insufficient_cpu: u32,
    insufficient_memory: u32,
    /// (taint key, taint value, nodes): upstream's reason names only key and
    /// value, so taints differing only in effect share an entry
    taints: Vec<(&'a str, &'a str, u32)>,
    /// (reason, nodes) of filters outside the default profile
    plugins: Vec<(&'static str, u32)>,
    /// (reason, nodes) an extender gave for the nodes it filtered out
    extenders: Vec<(String, u32)>,
}

impl<'a> Diagnosis<'a> {
    pub fn new() -> Diagnosis<'a> {
        Diagnosis::default()
    }

    /// Records one node's rejection.
    pub fn record(&mut self, failure: FilterFailure<'a>) {
        match failure {
            FilterFailure::Unschedulable => self.unschedulable += 1,
            FilterFailure::UntoleratedTaint(taint) => self.record_taint(taint),
            FilterFailure::Insufficient(short) => {
                self.too_many_pods += u32::from(short.pods);
                self.insufficient_cpu += u32::from(short.cpu);
                self.insufficient_memory += u32::from(short.memory);
            }
            FilterFailure::Plugin(reason) => match self.plugins.iter_mut().find(|(r, _)| *r == reason) {
                Some((_, n)) => *n += 1,
                None => self.plugins.push((reason, 1)),
            },
        }
    }

    /// Records one node an extender filtered out, for `reason` (its
    /// `FailedNodes` entry).
    pub fn record_reason(&mut self, reason: &str) {
        match self.extenders.iter_mut().find(|(r, _)| r == reason) {
            Some((_, n)) => *n += 1,
            None => self.extenders.push((reason.to_string(), 1)),
        }
    }

    fn record_taint(&mut self, taint: &'a Taint) {
        let key = taint.key.as_str();
        let value = taint.value.as_deref().unwrap_or("");
        // A failed scan records one taint per tainted node, and most are the
        // same shared taint (the synthetic unreachable ones): comparing the
        // addresses first skips reading the bytes of every node's copy.
        match self
            .taints
            .iter_mut()
            .find(|(k, v, _)| same_str(k, key) && same_str(v, value))
        {
            Some((_, _, n)) => *n += 1,
            None => self.taints.push((key, value, 1)),
        }
    }

    /// Nodes rejected for any reason.
    pub fn is_empty(&self) -> bool {
        self.unschedulable == 0
            && self.too_many_pods == 0
            && self.insufficient_cpu == 0
            && self.insufficient_memory == 0
            && self.taints.is_empty()
            && self.plugins.is_empty()
            && self.extenders.is_empty()
    }

    /// How many nodes were rejected with `reason_text` (one of [`reason`], or
    /// an untolerated-taint reason as upstream formats it).
    pub fn count(&self, reason_text: &str) -> u32 {
        self.histogram()
            .into_iter()
            .find(|(_, r)| r == reason_text)
            .map_or(0, |(n, _)| n)
    }

    fn histogram(&self) -> Vec<(u32, String)> {
        self.histogram_as(Release::V1_33)
    }

    fn histogram_as(&self, release: Release) -> Vec<(u32, String)> {
        let fixed = [
            (self.unschedulable, reason::UNSCHEDULABLE),
            (self.too_many_pods, reason::TOO_MANY_PODS),
            (self.insufficient_cpu, reason::INSUFFICIENT_CPU),
            (self.insufficient_memory, reason::INSUFFICIENT_MEMORY),
        ];
        fixed
            .into_iter()
            .filter(|(n, _)| *n > 0)
            .map(|(n, r)| (n, r.to_string()))
            .chain(
                self.taints
                    .iter()
                    .map(|(k, v, n)| (*n, untolerated_taint(release, k, v))),
            )
            .chain(self.plugins.iter().map(|(r, n)| (*n, r.to_string())))
            .chain(self.extenders.iter().map(|(r, n)| (*n, r.clone())))
            .collect()
    }

    /// The message of a failed attempt over `num_all_nodes` nodes: each
    /// reason as "COUNT REASON", sorted as strings (as upstream's
    /// `sortReasonsHistogram`, so "10 ..." sorts before "2 ...").
    pub fn message(&self, num_all_nodes: usize) -> String {
        self.message_as(Release::V1_33, num_all_nodes)
    }

    /// [`Diagnosis::message`] in the words of `release`.
    pub fn message_as(&self, release: Release, num_all_nodes: usize) -> String {
        if num_all_nodes == 0 {
            return reason::NO_NODES_AVAILABLE.to_string();
        }
        let mut reasons: Vec<String> = self
            .histogram_as(release)
            .into_iter()
            .map(|(n, r)| format!("{n} {r}"))
            .collect();
        reasons.sort();
        format!("0/{num_all_nodes} nodes are available: {}.", reasons.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filters::Insufficient;
    use schedlab_core::node::TaintEffect;

    fn taint(key: &str, value: Option<&str>, effect: TaintEffect) -> Taint {
        Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect,
        }
    }

    #[test]
    fn formats_like_upstream() {
        let spot = taint("spot", Some("true"), TaintEffect::NoSchedule);
        let spot_exec = taint("spot", Some("true"), TaintEffect::NoExecute);
        let bare = taint("gpu", None, TaintEffect::NoSchedule);
        let mut d = Diagnosis::new();
        assert!(d.is_empty());
        d.record(FilterFailure::UntoleratedTaint(&spot));
        d.record(FilterFailure::UntoleratedTaint(&spot_exec));
        d.record(FilterFailure::UntoleratedTaint(&bare));
        d.record(FilterFailure::Unschedulable);
        d.record(FilterFailure::Insufficient(Insufficient {
            pods: true,
            cpu: true,
            memory: false,
        }));
        for _ in 0..10 {
            d.record(FilterFailure::Insufficient(Insufficient {
                pods: false,
                cpu: false,
                memory: true,
            }));
        }
        assert_eq!(
            d.message(15),
            "0/15 nodes are available: 1 Insufficient cpu, 1 Too many pods, 1 node(s) had untolerated taint {gpu: }, \
             1 node(s) were unschedulable, 10 Insufficient memory, 2 node(s) had untolerated taint {spot: true}."
        );
        assert_eq!(d.count("node(s) had untolerated taint {spot: true}"), 2);
        assert_eq!(d.count(reason::INSUFFICIENT_MEMORY), 10);
        assert_eq!(d.count(reason::INSUFFICIENT_CPU), 1);
        assert_eq!(d.count("Insufficient gpu"), 0);
    }

    #[test]
    fn v1_20_words_the_taint_reason_differently() {
        let spot = taint("spot", Some("true"), TaintEffect::NoSchedule);
        let mut d = Diagnosis::new();
        d.record(FilterFailure::UntoleratedTaint(&spot));
        d.record(FilterFailure::Unschedulable);
        assert_eq!(
            d.message_as(Release::V1_20, 2),
            "0/2 nodes are available: 1 node(s) had taint {spot: true}, that the pod didn't tolerate, \
             1 node(s) were unschedulable."
        );
        assert_eq!(d.message(2), d.message_as(Release::V1_33, 2));
    }

    #[test]
    fn plugin_reasons_are_counted_and_sorted_with_the_rest() {
        let mut d = Diagnosis::new();
        d.record(FilterFailure::Plugin("node(s) cpu usage exceed threshold"));
        d.record(FilterFailure::Plugin("node(s) cpu usage exceed threshold"));
        d.record(FilterFailure::Plugin("node(s) memory usage exceed threshold"));
        d.record(FilterFailure::Unschedulable);
        assert!(!d.is_empty());
        assert_eq!(d.count("node(s) cpu usage exceed threshold"), 2);
        assert_eq!(
            d.message(4),
            "0/4 nodes are available: 1 node(s) memory usage exceed threshold, 1 node(s) were unschedulable, \
             2 node(s) cpu usage exceed threshold."
        );
    }

    #[test]
    fn no_nodes() {
        assert_eq!(Diagnosis::new().message(0), reason::NO_NODES_AVAILABLE);
    }
}
