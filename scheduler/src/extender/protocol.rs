//! The kube-scheduler extender protocol's messages
//! (`k8s.io/kube-scheduler/extender/v1`): what the filter and prioritize
//! verbs are sent and answer, as JSON.
//!
//! The Go types carry no JSON tags, so their fields travel under their Go
//! names (`Pod`, `NodeNames`, `FailedNodes`, `Host`, ...). Go's decoder
//! matches field names without regard to case, so kube-scheduler also takes
//! an answer written `nodeNames` or `failedNodes`: the answers here accept
//! the camel-case and lower-case spellings too.
//!
//! The lab sends node names only, as kube-scheduler does for an extender
//! with `nodeCacheCapable: true` (`NodeNames`, no `Nodes`): the simulator
//! has no Node objects to send, and an extender that needs a node's state
//! reads what it needs from its own source, as a node-cache-capable one does.

use super::pod::PodJson;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// kube-scheduler's highest extender score (`MaxExtenderPriority`).
pub const MAX_EXTENDER_PRIORITY: i64 = 10;
/// The framework's highest node score (`MaxNodeScore`); an extender's
/// weighted score is scaled by `MAX_NODE_SCORE / MAX_EXTENDER_PRIORITY`.
pub const MAX_NODE_SCORE: i64 = 100;

/// `ExtenderArgs`: the body of a filter or prioritize call.
#[derive(Debug, Clone, Serialize)]
pub struct ExtenderArgs<'a> {
    #[serde(rename = "Pod")]
    pub pod: &'a PodJson,
    /// `Nodes`: the full Node objects, for an extender that is not node
    /// cache capable; never sent by the lab (always null)
    #[serde(rename = "Nodes")]
    pub nodes: Option<()>,
    #[serde(rename = "NodeNames")]
    pub node_names: &'a [&'a str],
}

/// `ExtenderFilterResult`: the answer to a filter call.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct ExtenderFilterResult {
    /// `Nodes`: kept nodes as Node objects (a list with `items`), for an
    /// extender that is not node cache capable; read for their names
    #[serde(rename = "Nodes", alias = "nodes", default)]
    pub nodes: Option<NodeList>,
    /// the kept nodes, by name
    #[serde(rename = "NodeNames", alias = "nodeNames", alias = "nodenames", default)]
    pub node_names: Option<Vec<String>>,
    /// nodes filtered out, with the reason for each
    #[serde(rename = "FailedNodes", alias = "failedNodes", alias = "failednodes", default)]
    pub failed_nodes: Option<BTreeMap<String, String>>,
    /// nodes filtered out that preemption cannot help either
    #[serde(
        rename = "FailedAndUnresolvableNodes",
        alias = "failedAndUnresolvableNodes",
        alias = "failedandunresolvablenodes",
        default
    )]
    pub failed_and_unresolvable_nodes: Option<BTreeMap<String, String>>,
    /// the extender's own failure: the attempt fails with it
    #[serde(rename = "Error", alias = "error", default)]
    pub error: Option<String>,
}

/// A `v1.NodeList`, as far as the lab reads it: each item's name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct NodeList {
    #[serde(default)]
    pub items: Option<Vec<NodeItem>>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct NodeItem {
    #[serde(default)]
    pub metadata: NodeMeta,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
pub struct NodeMeta {
    #[serde(default)]
    pub name: String,
}

impl ExtenderFilterResult {
    /// The names of the nodes the extender kept: `NodeNames` when given
    /// (what kube-scheduler reads from a node-cache-capable extender), else
    /// the names of `Nodes`' items; None when it gave neither.
    pub fn kept_names(&self) -> Option<Vec<&str>> {
        if let Some(names) = &self.node_names {
            return Some(names.iter().map(String::as_str).collect());
        }
        let items = self.nodes.as_ref()?.items.as_ref()?;
        Some(items.iter().map(|i| i.metadata.name.as_str()).collect())
    }
}

/// `HostPriority`: one node's score in a prioritize answer
/// (`HostPriorityList` is a JSON array of them).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct HostPriority {
    #[serde(rename = "Host", alias = "host")]
    pub host: String,
    #[serde(rename = "Score", alias = "score")]
    pub score: i64,
}

/// What an extender's prioritize scores add to the framework's totals, as
/// kube-scheduler's `prioritizeNodes` adds them: each score times the
/// extender's weight, scaled from the extender's 0–10 to the framework's
/// 0–100.
pub fn scaled_extender_score(score: i64, weight: i64) -> i64 {
    score
        .saturating_mul(weight)
        .saturating_mul(MAX_NODE_SCORE / MAX_EXTENDER_PRIORITY)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_filter_answer_as_a_go_extender_writes_it_is_read() {
        // encoding/json of extenderv1.ExtenderFilterResult: untagged fields, nil pointers as null
        let text = r#"{"Nodes":null,"NodeNames":["node-1","node-3"],
            "FailedNodes":{"node-2":"too hot"},"FailedAndUnresolvableNodes":{},"Error":""}"#;
        let result: ExtenderFilterResult = serde_json::from_str(text).unwrap();
        assert_eq!(result.kept_names(), Some(vec!["node-1", "node-3"]));
        assert_eq!(
            result.failed_nodes,
            Some(BTreeMap::from([("node-2".to_string(), "too hot".to_string())]))
        );
        assert_eq!(result.error.as_deref(), Some(""));
    }

    #[test]
    fn field_names_match_without_regard_to_case_as_go_reads_them() {
        let result: ExtenderFilterResult =
            serde_json::from_str(r#"{"nodeNames":["a"],"failedNodes":{"b":"no"},"error":"x"}"#).unwrap();
        assert_eq!(result.kept_names(), Some(vec!["a"]));
        assert_eq!(result.error.as_deref(), Some("x"));
        let list: Vec<HostPriority> =
            serde_json::from_str(r#"[{"host":"a","score":3},{"Host":"b","Score":7}]"#).unwrap();
        assert_eq!(
            list,
            vec![
                HostPriority {
                    host: "a".into(),
                    score: 3
                },
                HostPriority {
                    host: "b".into(),
                    score: 7
                }
            ]
        );
    }

    #[test]
    fn nodes_as_objects_are_read_for_their_names_when_no_names_are_given() {
        let text = r#"{"Nodes":{"items":[{"metadata":{"name":"n1"}},{"metadata":{"name":"n2"}}]}}"#;
        let result: ExtenderFilterResult = serde_json::from_str(text).unwrap();
        assert_eq!(result.kept_names(), Some(vec!["n1", "n2"]));
        let neither: ExtenderFilterResult = serde_json::from_str("{}").unwrap();
        assert_eq!(neither.kept_names(), None);
    }

    #[test]
    fn the_arguments_are_written_under_the_go_field_names() {
        let pod = PodJson::example();
        let names = ["a", "b"];
        let args = ExtenderArgs {
            pod: &pod,
            nodes: None,
            node_names: &names,
        };
        let value = serde_json::to_value(&args).unwrap();
        assert_eq!(value["NodeNames"], serde_json::json!(["a", "b"]));
        assert!(value["Nodes"].is_null());
        assert_eq!(value["Pod"]["kind"], "Pod");
    }

    #[test]
    fn extender_scores_are_weighted_and_scaled_to_the_framework_range() {
        // kube-scheduler: score * weight * (MaxNodeScore / MaxExtenderPriority)
        assert_eq!(scaled_extender_score(10, 1), 100);
        assert_eq!(scaled_extender_score(3, 2), 60);
        assert_eq!(scaled_extender_score(0, 5), 0);
        assert_eq!(scaled_extender_score(i64::MAX, 2), i64::MAX);
    }
}
