//! What a run needs before its first pod: its namespace, a PriorityClass
//! for every nonzero priority, and its nodes (created for the emulator, or
//! the cluster's own).

use super::options::{NodeSource, RunOptions};
use super::retry::{self, RetryPolicy};
use crate::error::status_code;
use crate::{ApiClient, KubeError, labels, objects};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::ResourceExt;
use kube::api::{Api, ListParams, ObjectMeta, PostParams};
use schedlab_core::node::{NodeId, NodeSpec};
use schedlab_core::timeline::Timeline;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::sync::atomic::AtomicU64;
use std::time::Instant;

/// How many node creations are in flight at once.
const NODE_CREATES_IN_FLIGHT: usize = 8;

/// A run set up by [`super::setup`], ready for [`super::play`].
#[derive(Debug, Clone)]
pub struct Prepared {
    run: String,
    /// the node objects as the API returned them, in NodeId order
    nodes: Vec<core::Node>,
    names: Vec<String>,
    /// what the Node records say: the timeline's specs for emulated nodes,
    /// what the objects say for existing ones
    specs: Vec<NodeSpec>,
    /// keeps the run's pods on existing nodes the selector matches
    affinity: Option<core::Affinity>,
    setup_seconds: f64,
}

impl Prepared {
    /// The run id it was set up for.
    pub fn run(&self) -> &str {
        &self.run
    }
    /// The run's node names, in NodeId order.
    pub fn node_names(&self) -> &[String] {
        &self.names
    }
    /// What the run's Node records say, in NodeId order.
    pub fn node_specs(&self) -> &[NodeSpec] {
        &self.specs
    }
    /// The node objects as setup found or created them, in NodeId order.
    pub fn nodes(&self) -> &[core::Node] {
        &self.nodes
    }
    /// How long setup took (wall).
    pub fn setup_seconds(&self) -> f64 {
        self.setup_seconds
    }
    pub(crate) fn affinity(&self) -> Option<&core::Affinity> {
        self.affinity.as_ref()
    }
}

fn run_labels(run: &str) -> BTreeMap<String, String> {
    BTreeMap::from([(labels::RUN.to_string(), run.to_string())])
}

/// Creates `obj` unless it exists (409 is fine: a retried create that had
/// gone through, or setup run twice for one run id).
async fn create_or_keep<K>(
    api: &ApiClient,
    objects: &Api<K>,
    obj: &K,
    what: &str,
    retried: &AtomicU64,
) -> Result<bool, KubeError>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    let pp = PostParams::default();
    match retry::send(api, RetryPolicy::SETUP, retried, || objects.create(&pp, obj)).await {
        Ok(_) => Ok(true),
        Err(e) if status_code(&e) == Some(409) => Ok(false),
        Err(e) => Err(KubeError::api(what.to_string())(e)),
    }
}

/// Everything before the first pod; see the module doc.
pub(crate) async fn prepare(
    api: &ApiClient,
    timeline: &Timeline,
    opts: &RunOptions,
    affinity: Option<core::Affinity>,
    started: Instant,
    retried: &AtomicU64,
) -> Result<Prepared, KubeError> {
    let run = opts.run.as_str();
    let client = api.client();
    let namespace = objects::run_namespace(run, run);
    create_or_keep(
        api,
        &Api::all(client.clone()),
        &namespace,
        &format!("creating namespace {run}"),
        retried,
    )
    .await?;

    let priorities: BTreeSet<i32> = timeline
        .workloads
        .iter()
        .map(|w| w.spec.priority)
        .filter(|p| *p != 0)
        .collect();
    let classes: Api<PriorityClass> = Api::all(client.clone());
    for priority in priorities {
        let name = objects::priority_class_name(run, priority);
        let class = PriorityClass {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some(run_labels(run)),
                ..Default::default()
            },
            value: priority,
            global_default: Some(false),
            description: Some(format!("schedlab run {run}: pods of priority {priority}")),
            preemption_policy: None,
        };
        create_or_keep(
            api,
            &classes,
            &class,
            &format!("creating PriorityClass {name}"),
            retried,
        )
        .await?;
    }

    let (nodes, specs) = match &opts.nodes {
        NodeSource::Emulated => create_nodes(api, timeline, run, retried).await?,
        NodeSource::Existing { selector } => existing_nodes(api, selector, retried).await?,
    };
    Ok(Prepared {
        run: run.to_string(),
        names: nodes.iter().map(|n| n.name_any()).collect(),
        nodes,
        specs,
        affinity,
        setup_seconds: started.elapsed().as_secs_f64(),
    })
}

type Nodes = (Vec<core::Node>, Vec<NodeSpec>);

async fn create_nodes(
    api: &ApiClient,
    timeline: &Timeline,
    run: &str,
    retried: &AtomicU64,
) -> Result<Nodes, KubeError> {
    let numbered: Vec<(NodeId, NodeSpec)> = timeline
        .nodes
        .iter()
        .enumerate()
        .map(|(i, spec)| (NodeId(i as u32), spec.clone()))
        .collect();
    let nodes = create_emulated_nodes(api, run, &numbered, retried).await?;
    Ok((nodes, timeline.nodes.clone()))
}

/// Creates the nodes `nodes` of run `run` as API objects for the node
/// emulator to play (a run's own nodes, or those of a kind cluster beyond
/// its real workers), refusing two that would share a name and retrying as
/// setup does; a node left from an earlier try of this run id is used as
/// it is.
pub async fn create_emulated_nodes(
    api: &ApiClient,
    run: &str,
    nodes: &[(NodeId, NodeSpec)],
    retried: &AtomicU64,
) -> Result<Vec<core::Node>, KubeError> {
    let mut names = HashSet::new();
    for (_, spec) in nodes {
        let name = objects::node_name(run, spec);
        if !names.insert(name.clone()) {
            return Err(KubeError::Other(format!(
                "two nodes of the timeline would both be named {name} (node {:?})",
                spec.name
            )));
        }
    }
    let nodes_api: Api<core::Node> = Api::all(api.client());
    futures::stream::iter(nodes.iter())
        .map(|(id, spec)| {
            let nodes_api = nodes_api.clone();
            async move {
                let obj = objects::node_object(run, *id, spec, true);
                let name = objects::node_name(run, spec);
                let pp = PostParams::default();
                match retry::send(api, RetryPolicy::SETUP, retried, || nodes_api.create(&pp, &obj)).await {
                    Ok(created) => Ok(created),
                    // left from an earlier try of this run id: use it as it is
                    Err(e) if status_code(&e) == Some(409) => {
                        retry::send(api, RetryPolicy::SETUP, retried, || nodes_api.get(&name))
                            .await
                            .map_err(KubeError::api(format!("reading node {name}")))
                    }
                    Err(e) => Err(KubeError::api(format!("creating node {name}"))(e)),
                }
            }
        })
        .buffered(NODE_CREATES_IN_FLIGHT)
        .try_collect()
        .await
}

async fn existing_nodes(api: &ApiClient, selector: &str, retried: &AtomicU64) -> Result<Nodes, KubeError> {
    let nodes_api: Api<core::Node> = Api::all(api.client());
    let lp = ListParams::default().labels(selector);
    let list = retry::send(api, RetryPolicy::SETUP, retried, || nodes_api.list(&lp))
        .await
        .map_err(KubeError::api(format!("listing nodes matching {selector:?}")))?;
    let mut nodes = list.items;
    nodes.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    if nodes.is_empty() {
        return Err(KubeError::Other(format!("no node matches the selector {selector:?}")));
    }
    let specs = nodes.iter().map(objects::node_spec_of).collect::<Result<Vec<_>, _>>()?;
    Ok((nodes, specs))
}
