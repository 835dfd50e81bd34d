//! A kube-scheduler extender as an arm (`--arms extender:URL`): a profile's
//! scheduling cycle that also calls an HTTP extender's filter and
//! prioritize verbs, as kube-scheduler calls the extenders of its
//! configuration (`pkg/scheduler/extender.go`, `schedule_one.go`).
//!
//! In each attempt the profile's filters run first; the extender's filter
//! is then sent the names of the nodes they kept (never when none is
//! left) and keeps some of them; the nodes it drops are infeasible, with
//! its `FailedNodes` reasons in the "0/N nodes are available" message. A
//! lone node left is bound without scoring. Otherwise the framework's
//! totals get the extender's prioritize scores added, each
//! `score × weight × 10` (its 0–10 scaled to the framework's 0–100), and
//! the profile selects as it does alone. A pod no node takes goes to the
//! profile's DefaultPreemption.
//!
//! A filter call that fails (no answer, past the timeout, not 200,
//! malformed JSON, an `Error`, a node that was not sent) fails the attempt:
//! the pod is unschedulable for that attempt and retried with back-off, as
//! kube-scheduler does for an extender that is not `ignorable` (an
//! `ignorable` one is skipped: the profile's nodes stand). A failed
//! prioritize call is ignored, as kube-scheduler ignores it. Both are
//! counted ([`ExtenderCounts`]) for the run's manifest.
//!
//! Because the simulator measures each decision around the policy call,
//! the extender's round trips are in the decision times.
//!
//! - [`spec`]: the `--arms` entry.
//! - [`protocol`]: the messages (`ExtenderArgs`, `ExtenderFilterResult`, `HostPriority`).
//! - [`pod`]: the `v1.Pod` sent.
//! - [`transport`]: HTTP, behind a trait for tests.

pub mod pod;
pub mod protocol;
pub mod spec;
pub mod transport;

pub use spec::{ExtenderArm, is_extender_arm, parse_arm};
pub use transport::{CallError, HttpTransport, Transport};

use crate::api::Scheduler;
use crate::diagnosis::Diagnosis;
use crate::explain::Explanation;
use crate::profile::{Cycle, Extension};
use pod::PodJson;
use protocol::{ExtenderArgs, ExtenderFilterResult, HostPriority, MAX_EXTENDER_PRIORITY, scaled_extender_score};
use schedlab_core::node::NodeState;
use schedlab_core::{ClusterView, PendingPod, Placement};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

/// The filter verb, appended to the URL prefix.
pub const FILTER_VERB: &str = "filter";
/// The prioritize verb.
pub const PRIORITIZE_VERB: &str = "prioritize";

/// What goes wrong with an extender arm: its entry, or the check before a run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExtenderError {
    #[error("--arms {spec:?}: {message}")]
    Spec { spec: String, message: String },
    /// the extender's answer to the check before the run was not usable
    #[error("--arms {spec:?}: the extender at {url}/{verb} {problem}")]
    Check {
        spec: String,
        url: String,
        verb: &'static str,
        problem: String,
    },
}

/// One call's failure, in words naming the verb's URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerbError {
    #[error("{0}")]
    Call(#[from] CallError),
    #[error("answered malformed JSON ({0})")]
    Malformed(String),
    #[error("answered with the error {0:?}")]
    Said(String),
    #[error("named the node {0:?}, which it was not sent")]
    UnknownNode(String),
    #[error("answered neither NodeNames nor Nodes")]
    NoNodes,
    #[error("scored the node {host:?} {score}, outside 0..={MAX_EXTENDER_PRIORITY}")]
    ScoreRange { host: String, score: i64 },
}

/// How often an extender's calls failed during a run.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExtenderCounts {
    /// filter calls made
    pub filter_calls: u64,
    /// filter calls that failed: each made its attempt unschedulable
    /// (skipped instead, for an `ignorable` extender)
    pub failed_filter_calls: u64,
    /// prioritize calls made
    pub prioritize_calls: u64,
    /// prioritize calls that failed: each was ignored, the framework's scores decided
    pub failed_prioritize_calls: u64,
    /// the first failure, in words
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_failure: Option<String>,
}

impl ExtenderCounts {
    fn failed(&mut self, verb: &str, url: &str, error: &VerbError) -> String {
        let message = format!("extender {url}/{verb} {error}");
        if self.first_failure.is_none() {
            self.first_failure = Some(message.clone());
        }
        message
    }
}

/// The counts of a running arm, shared with whoever reads them after the run.
pub type SharedCounts = Arc<Mutex<ExtenderCounts>>;

/// The extender as the cycle consults it.
#[derive(Debug)]
struct Client {
    url: String,
    weight: i64,
    ignorable: bool,
    transport: Box<dyn Transport>,
    counts: SharedCounts,
}

impl Client {
    fn count(&self, change: impl FnOnce(&mut ExtenderCounts) -> String) -> String {
        match self.counts.lock() {
            Ok(mut counts) => change(&mut counts),
            Err(poisoned) => change(&mut poisoned.into_inner()),
        }
    }
}

/// Sends `args` to `verb` and reads the answer as `T`.
fn call<T: serde::de::DeserializeOwned>(
    transport: &mut dyn Transport,
    verb: &str,
    args: &ExtenderArgs<'_>,
) -> Result<T, VerbError> {
    let body = serde_json::to_vec(args).map_err(|e| VerbError::Malformed(format!("writing the request: {e}")))?;
    let answer = transport.post(verb, &body)?;
    serde_json::from_slice(&answer).map_err(|e| VerbError::Malformed(e.to_string()))
}

/// The filter verb's answer for `sent` (node names): the kept names, each
/// one of `sent`, and the reason of each failed node.
fn filter_call(
    transport: &mut dyn Transport,
    pod: &PodJson,
    sent: &[&str],
) -> Result<(BTreeSet<String>, BTreeMap<String, String>), VerbError> {
    let args = ExtenderArgs {
        pod,
        nodes: None,
        node_names: sent,
    };
    let result: ExtenderFilterResult = call(transport, FILTER_VERB, &args)?;
    if let Some(error) = result.error.as_deref().filter(|e| !e.is_empty()) {
        return Err(VerbError::Said(error.to_string()));
    }
    let known: BTreeSet<&str> = sent.iter().copied().collect();
    let kept = result.kept_names().ok_or(VerbError::NoNodes)?;
    let mut kept_set = BTreeSet::new();
    for name in kept {
        if !known.contains(name) {
            return Err(VerbError::UnknownNode(name.to_string()));
        }
        kept_set.insert(name.to_string());
    }
    let mut failed = BTreeMap::new();
    for map in [&result.failed_nodes, &result.failed_and_unresolvable_nodes]
        .into_iter()
        .flatten()
    {
        for (name, reason) in map {
            if !known.contains(name.as_str()) {
                return Err(VerbError::UnknownNode(name.clone()));
            }
            failed.insert(name.clone(), reason.clone());
        }
    }
    Ok((kept_set, failed))
}

/// The prioritize verb's answer for `sent`.
fn prioritize_call(
    transport: &mut dyn Transport,
    pod: &PodJson,
    sent: &[&str],
) -> Result<Vec<HostPriority>, VerbError> {
    let args = ExtenderArgs {
        pod,
        nodes: None,
        node_names: sent,
    };
    call(transport, PRIORITIZE_VERB, &args)
}

/// Why a node the extender dropped without naming it in `FailedNodes` is
/// infeasible (kube-scheduler gives such a node no status at all, which
/// would leave it out of the message).
pub const DROPPED_WITHOUT_REASON: &str = "node(s) were filtered out by the extender without a reason";

impl Extension for Client {
    fn filter<'a>(
        &mut self,
        pod: &PendingPod<'_>,
        nodes: &'a [NodeState],
        feasible: &mut Vec<usize>,
        diagnosis: &mut Diagnosis<'a>,
    ) -> Result<(), String> {
        let sent: Vec<&str> = feasible.iter().map(|&i| nodes[i].spec.name.as_str()).collect();
        let answer = filter_call(self.transport.as_mut(), &PodJson::of(pod), &sent);
        let url = self.url.clone();
        let (kept, failed) = match answer {
            Ok(answer) => {
                self.count(|c| {
                    c.filter_calls += 1;
                    String::new()
                });
                answer
            }
            Err(error) => {
                let message = self.count(|c| {
                    c.filter_calls += 1;
                    c.failed_filter_calls += 1;
                    c.failed(FILTER_VERB, &url, &error)
                });
                if self.ignorable {
                    // kube-scheduler: an ignorable extender's failure is skipped
                    tracing::debug!(pod = pod.id.0, %message, "extender filter failed, ignored");
                    return Ok(());
                }
                tracing::debug!(pod = pod.id.0, %message, "extender filter failed");
                return Err(message);
            }
        };
        feasible.retain(|&i| {
            let name = nodes[i].spec.name.as_str();
            if kept.contains(name) {
                return true;
            }
            diagnosis.record_reason(failed.get(name).map_or(DROPPED_WITHOUT_REASON, String::as_str));
            false
        });
        Ok(())
    }

    fn prioritize(&mut self, pod: &PendingPod<'_>, nodes: &[NodeState], totals: &mut [(usize, i64)]) {
        let sent: Vec<&str> = totals.iter().map(|&(i, _)| nodes[i].spec.name.as_str()).collect();
        let answer = prioritize_call(self.transport.as_mut(), &PodJson::of(pod), &sent);
        let url = self.url.clone();
        let list = match answer {
            Ok(list) => {
                self.count(|c| {
                    c.prioritize_calls += 1;
                    String::new()
                });
                list
            }
            Err(error) => {
                let message = self.count(|c| {
                    c.prioritize_calls += 1;
                    c.failed_prioritize_calls += 1;
                    c.failed(PRIORITIZE_VERB, &url, &error)
                });
                // kube-scheduler: "Prioritization errors from extender can be ignored"
                tracing::debug!(pod = pod.id.0, %message, "extender prioritize failed, ignored");
                return;
            }
        };
        // a host listed twice adds up, as kube-scheduler's per-host sum does;
        // hosts that were not sent are never looked up
        let mut by_host: BTreeMap<&str, i64> = BTreeMap::new();
        for p in &list {
            let score = by_host.entry(p.host.as_str()).or_default();
            *score = score.saturating_add(p.score.saturating_mul(self.weight));
        }
        for (name, (_, total)) in sent.iter().zip(totals.iter_mut()) {
            if let Some(&weighted) = by_host.get(*name) {
                *total = total.saturating_add(scaled_extender_score(weighted, 1));
            }
        }
    }
}

/// An extender arm: a built-in profile's cycle with the extender consulted.
#[derive(Debug)]
pub struct ExtenderScheduler {
    arm: String,
    cycle: Cycle,
    client: Client,
}

impl ExtenderScheduler {
    /// The arm `arm` reaching its extender over HTTP, drawing tie-breaks
    /// from `seed`; its failures are counted in the counts returned.
    pub fn new(arm: &ExtenderArm, seed: u64) -> (ExtenderScheduler, SharedCounts) {
        ExtenderScheduler::with_transport(arm, seed, Box::new(HttpTransport::new(&arm.url, arm.timeout)))
    }

    /// [`ExtenderScheduler::new`] over another transport (tests).
    pub fn with_transport(
        arm: &ExtenderArm,
        seed: u64,
        transport: Box<dyn Transport>,
    ) -> (ExtenderScheduler, SharedCounts) {
        let counts = SharedCounts::default();
        let scheduler = ExtenderScheduler {
            arm: arm.arm.clone(),
            cycle: Cycle::new(arm.base, seed),
            client: Client {
                url: arm.url.clone(),
                weight: arm.weight,
                ignorable: arm.ignorable,
                transport,
                counts: counts.clone(),
            },
        };
        (scheduler, counts)
    }
}

impl Scheduler for ExtenderScheduler {
    fn name(&self) -> &str {
        &self.arm
    }

    fn schedule(&mut self, pod: &PendingPod<'_>, cluster: &ClusterView<'_>) -> Placement {
        self.cycle.schedule_with(pod, cluster, &mut self.client)
    }

    fn set_explain(&mut self, on: bool) {
        self.cycle.set_explain(on);
    }

    fn explanation(&self) -> Option<Explanation> {
        self.cycle.explanation()
    }
}

/// Calls the extender once before a run, as a scheduling attempt would:
/// filter with a small pod (100m, 128Mi) and every node of `node_names`,
/// then prioritize with the nodes it kept (every node, should it keep
/// none). An extender that does not answer, answers past the timeout, not
/// 200, malformed JSON, an `Error`, a node it was not sent or a score
/// outside 0–10 is refused, naming the URL and the value. The check's pod
/// is named `schedlab-extender-check`, so an extender with state can tell it apart.
pub fn check(arm: &ExtenderArm, node_names: &[&str]) -> Result<(), ExtenderError> {
    check_with(arm, node_names, &mut HttpTransport::new(&arm.url, arm.timeout))
}

/// [`check`] over another transport (tests).
pub fn check_with(arm: &ExtenderArm, node_names: &[&str], transport: &mut dyn Transport) -> Result<(), ExtenderError> {
    let failed = |verb: &'static str, error: VerbError| ExtenderError::Check {
        spec: arm.spec.clone(),
        url: arm.url.clone(),
        verb,
        problem: match error {
            VerbError::Call(CallError::Timeout(_)) => format!(
                "did not answer within {} (its timeout; set another with #timeout=DURATION)",
                spec::format_duration(arm.timeout)
            ),
            other => other.to_string(),
        },
    };
    let pod = PodJson::probe("default-scheduler");
    let (kept, _) = filter_call(transport, &pod, node_names).map_err(|e| failed(FILTER_VERB, e))?;
    let scored: Vec<&str> = if kept.is_empty() {
        node_names.to_vec()
    } else {
        kept.iter().map(String::as_str).collect()
    };
    let list = prioritize_call(transport, &pod, &scored).map_err(|e| failed(PRIORITIZE_VERB, e))?;
    let known: BTreeSet<&str> = scored.iter().copied().collect();
    for p in list {
        if !known.contains(p.host.as_str()) {
            return Err(failed(PRIORITIZE_VERB, VerbError::UnknownNode(p.host)));
        }
        if !(0..=MAX_EXTENDER_PRIORITY).contains(&p.score) {
            return Err(failed(
                PRIORITIZE_VERB,
                VerbError::ScoreRange {
                    host: p.host,
                    score: p.score,
                },
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cluster, node, pending, view};
    use schedlab_core::node::NodeId;
    use schedlab_core::testing::{GI, pod};
    use std::collections::VecDeque;

    /// Answers each call with the next of its canned answers, and keeps what it was sent.
    #[derive(Debug, Default)]
    struct Canned {
        answers: VecDeque<Result<String, CallError>>,
        sent: Arc<Mutex<Vec<(String, serde_json::Value)>>>,
    }

    impl Canned {
        fn new(answers: impl IntoIterator<Item = Result<&'static str, CallError>>) -> Canned {
            Canned {
                answers: answers.into_iter().map(|a| a.map(str::to_string)).collect(),
                sent: Arc::default(),
            }
        }
    }

    impl Transport for Canned {
        fn post(&mut self, verb: &str, body: &[u8]) -> Result<Vec<u8>, CallError> {
            let value = serde_json::from_slice(body).expect("the lab sends JSON");
            self.sent.lock().unwrap().push((verb.to_string(), value));
            self.answers
                .pop_front()
                .expect("a canned answer for every call")
                .map(String::into_bytes)
        }
    }

    fn arm() -> ExtenderArm {
        parse_arm("extender:http://127.0.0.1:1/x").unwrap()
    }

    #[test]
    fn the_extenders_scores_decide_a_framework_tie_and_the_sent_nodes_are_the_feasible_ones() {
        let nodes = crate::testing::three_way_tie();
        let spec = pod(500, GI);
        // keeps every node but a; prioritize prefers d (10) over b (0)
        let canned = Canned::new([
            Ok(r#"{"NodeNames":["b","c","d"],"FailedNodes":{"a":"no"},"Error":""}"#),
            Ok(r#"[{"Host":"b","Score":0},{"Host":"c","Score":5},{"Host":"d","Score":10}]"#),
        ]);
        let sent = canned.sent.clone();
        let (mut s, counts) = ExtenderScheduler::with_transport(&arm(), 3, Box::new(canned));
        assert_eq!(s.schedule(&pending(&spec), &view(&nodes)), Placement::Bind(NodeId(3)));
        let sent = sent.lock().unwrap();
        assert_eq!(sent[0].0, FILTER_VERB);
        assert_eq!(sent[0].1["NodeNames"], serde_json::json!(["a", "b", "c", "d"]));
        assert_eq!(sent[1].0, PRIORITIZE_VERB);
        assert_eq!(sent[1].1["NodeNames"], serde_json::json!(["b", "c", "d"]));
        let counts = counts.lock().unwrap().clone();
        assert_eq!((counts.filter_calls, counts.prioritize_calls), (1, 1));
        assert_eq!((counts.failed_filter_calls, counts.failed_prioritize_calls), (0, 0));
    }

    #[test]
    fn the_weight_scales_the_extender_against_the_framework() {
        // c is fuller: the framework prefers a by its fit and balance; an extender score of 1
        // for c (10 points at weight 1) does not beat that, at weight 10 (100 points) it does
        let nodes = cluster([
            node("a").cpu("4").memory("16Gi"),
            node("c").cpu("4").memory("16Gi").requested("2", "8Gi"),
        ]);
        let spec = pod(500, GI);
        let pick = |weight: &str| {
            let arm = parse_arm(&format!("extender:http://h:1#weight={weight}")).unwrap();
            let canned = Canned::new([
                Ok(r#"{"NodeNames":["a","c"]}"#),
                Ok(r#"[{"Host":"a","Score":0},{"Host":"c","Score":1}]"#),
            ]);
            let (mut s, _) = ExtenderScheduler::with_transport(&arm, 1, Box::new(canned));
            s.schedule(&pending(&spec), &view(&nodes))
        };
        let framework = crate::default::PROFILE.node_scores(&spec, &nodes, &[0, 1]);
        let gap = framework[0].total - framework[1].total;
        assert!(
            gap > 10 && gap < 100,
            "the test needs a gap between 10 and 100, not {gap}"
        );
        assert_eq!(pick("1"), Placement::Bind(NodeId(0)));
        assert_eq!(pick("10"), Placement::Bind(NodeId(1)));
    }

    #[test]
    fn a_lone_node_left_by_the_extender_is_bound_without_prioritize() {
        let nodes = crate::testing::three_way_tie();
        let canned = Canned::new([Ok(r#"{"NodeNames":["c"]}"#)]);
        let (mut s, counts) = ExtenderScheduler::with_transport(&arm(), 1, Box::new(canned));
        assert_eq!(
            s.schedule(&pending(&pod(500, GI)), &view(&nodes)),
            Placement::Bind(NodeId(2))
        );
        assert_eq!(counts.lock().unwrap().prioritize_calls, 0);
    }

    #[test]
    fn nodes_the_extender_drops_are_infeasible_with_its_reasons() {
        let nodes = crate::testing::three_way_tie();
        let canned = Canned::new([Ok(
            r#"{"NodeNames":[],"FailedNodes":{"a":"too hot","b":"too hot"},"FailedAndUnresolvableNodes":{"c":"gone"}}"#,
        )]);
        let (mut s, _) = ExtenderScheduler::with_transport(&arm(), 1, Box::new(canned));
        match s.schedule(&pending(&pod(500, GI)), &view(&nodes)) {
            Placement::Unschedulable { reason } => assert_eq!(
                reason,
                format!("0/4 nodes are available: 1 gone, 1 {DROPPED_WITHOUT_REASON}, 2 too hot.")
            ),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_failed_filter_call_makes_the_attempt_unschedulable_and_is_counted() {
        let nodes = crate::testing::three_way_tie();
        let answers = [
            Err(CallError::Timeout(std::time::Duration::from_millis(20))),
            Ok("not json"),
            Ok(r#"{"NodeNames":["zz"]}"#),
            Ok(r#"{"Error":"busy"}"#),
            Err(CallError::Status(500)),
        ];
        let wants = [
            "did not answer within 20ms",
            "malformed JSON",
            "\"zz\", which it was not sent",
            "the error \"busy\"",
            "HTTP status 500",
        ];
        let (mut s, counts) = ExtenderScheduler::with_transport(&arm(), 1, Box::new(Canned::new(answers)));
        for want in wants {
            match s.schedule(&pending(&pod(500, GI)), &view(&nodes)) {
                Placement::Unschedulable { reason } => {
                    assert!(reason.contains("extender http://127.0.0.1:1/x/filter"), "{reason}");
                    assert!(reason.contains(want), "{reason}");
                }
                other => panic!("{other:?}"),
            }
        }
        let counts = counts.lock().unwrap().clone();
        assert_eq!((counts.filter_calls, counts.failed_filter_calls), (5, 5));
        assert!(counts.first_failure.unwrap().contains("20ms"));
    }

    #[test]
    fn an_ignorable_extenders_failed_filter_call_is_skipped_and_counted() {
        let nodes = crate::testing::three_way_tie();
        let spec = pod(500, GI);
        let arm = parse_arm("extender:http://h:1#ignorable=true").unwrap();
        let canned = Canned::new([Err(CallError::Status(503)), Ok(r#"[{"Host":"d","Score":10}]"#)]);
        let (mut s, counts) = ExtenderScheduler::with_transport(&arm, 4, Box::new(canned));
        // the profile's four nodes stand, and prioritize still decides among them
        assert_eq!(s.schedule(&pending(&spec), &view(&nodes)), Placement::Bind(NodeId(3)));
        let counts = counts.lock().unwrap().clone();
        assert_eq!((counts.filter_calls, counts.failed_filter_calls), (1, 1));
        assert_eq!(counts.prioritize_calls, 1);
    }

    #[test]
    fn a_failed_prioritize_call_is_ignored_and_counted() {
        let nodes = crate::testing::three_way_tie();
        let spec = pod(500, GI);
        let canned = Canned::new([
            Ok(r#"{"NodeNames":["a","b","c","d"]}"#),
            Err(CallError::Unreachable("refused".into())),
        ]);
        let (mut s, counts) = ExtenderScheduler::with_transport(&arm(), 4, Box::new(canned));
        let mut alone = Cycle::new(crate::default::PROFILE, 4);
        // the framework alone decides, with the same tie-break draw
        assert_eq!(
            s.schedule(&pending(&spec), &view(&nodes)),
            alone.schedule(&pending(&spec), &view(&nodes))
        );
        let counts = counts.lock().unwrap().clone();
        assert_eq!((counts.prioritize_calls, counts.failed_prioritize_calls), (1, 1));
        assert_eq!(counts.failed_filter_calls, 0);
    }

    #[test]
    fn the_check_refuses_each_bad_answer_naming_the_url_and_value() {
        let names = ["a", "b"];
        let cases: [(Vec<Result<&'static str, CallError>>, &str); 6] = [
            (
                vec![Err(CallError::Timeout(std::time::Duration::from_secs(5)))],
                "/filter did not answer within 5s",
            ),
            (vec![Ok("{")], "/filter answered malformed JSON"),
            (
                vec![Ok(r#"{"NodeNames":["a","ghost"]}"#)],
                "\"ghost\", which it was not sent",
            ),
            (
                vec![Ok(r#"{"NodeNames":["a"]}"#), Ok(r#"[{"Host":"b","Score":1}]"#)],
                "/prioritize named the node \"b\"",
            ),
            (
                vec![Ok(r#"{"NodeNames":["a"]}"#), Ok(r#"[{"Host":"a","Score":11}]"#)],
                "scored the node \"a\" 11",
            ),
            (
                vec![Ok(r#"{"NodeNames":["a"]}"#), Ok(r#"{"a":1}"#)],
                "/prioritize answered malformed JSON",
            ),
        ];
        for (answers, want) in cases {
            let message = check_with(&arm(), &names, &mut Canned::new(answers))
                .unwrap_err()
                .to_string();
            assert!(
                message.starts_with("--arms \"extender:http://127.0.0.1:1/x\": the extender at http://127.0.0.1:1/x/"),
                "{message}"
            );
            assert!(message.contains(want), "{want}: {message}");
        }
        let good = Canned::new([Ok(r#"{"NodeNames":["a","b"]}"#), Ok(r#"[{"Host":"a","Score":10}]"#)]);
        assert_eq!(check_with(&arm(), &names, &mut { good }), Ok(()));
    }
}
