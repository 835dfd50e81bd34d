//! Minibatch forward passes of the actor and the critic.
//!
//! [`AgmarlNet::forward`] and [`Critic::q`] take one decision at a time: on
//! graphs of a few dozen nodes every tensor operation costs far more in
//! dispatch than in arithmetic, so a 64-decision minibatch run one decision
//! at a time spends nearly all its time there. Here a minibatch is one set
//! of tensors: the node rows of all its graphs stacked (`N = Σ n_b` rows),
//! each row knowing its graph `g(i)`; per-graph sums are an `index_add` over
//! `g` and their broadcast back an `index_select` (both O(N·d)). The same
//! parameters (the networks' own variables, looked up by their checkpoint
//! names) and the same formulas as in [`crate::agmarl::network`]:
//!
//! - the node encoder on every row, then the mean over the other nodes of
//!   the same graph, `m_i = (S_g(i) − z_i) / (n_g(i) − 1)` (0 for a single
//!   node) with `S_g` the sum of graph `g`'s encodings;
//! - the mean over the other nodes of the same failure domain of the same
//!   graph, `d_i = (S_D(i) − z_i) / (n_D(i) − 1)` (0 alone), each graph's
//!   domains numbered after the previous graph's so one `index_add` serves;
//! - the actor's head on `[z_i, m_i, d_i, f of its domain, pod of its graph,
//!   placement columns]`,
//!   on every row or on chosen rows only (the actor's update needs just the
//!   chosen agents' scores, while the embedding still needs every node);
//! - the critic's pooled input `[mean, max, chosen agent's embedding, pod]`:
//!   the mean is `S_g / n_g`; the max gathers each graph's rows into a
//!   `B × n_max × d` block padded with zero rows, which never win because
//!   the embeddings are ReLU outputs (≥ 0).
//!
//! The unit tests check both passes against the one-decision versions, so
//! a change of the architecture there cannot go unnoticed here.
//!
//! [`AgmarlNet::forward`]: crate::agmarl::network::AgmarlNet::forward
//! [`Critic::q`]: crate::agmarl::network::Critic::q

use crate::agmarl::features::{DOMAIN_FEATURES, NODE_FEATURES, POD_FEATURES};
use crate::agmarl::network::{ActorLayers, CRITIC_CONTEXT, Linear, Messages, critic_context};
use crate::agmarl::train::error::TrainError;
use crate::agmarl::train::transition::State;
use candle_core::{DType, Device, Tensor};
use candle_nn::VarMap;

/// A variable of `varmap` by name, as a tensor sharing its storage.
fn param(varmap: &VarMap, name: &str) -> Result<Tensor, TrainError> {
    let data = varmap
        .data()
        .lock()
        .map_err(|_| TrainError::Config("parameter map lock poisoned".into()))?;
    data.get(name)
        .map(|v| v.as_tensor().clone())
        .ok_or_else(|| TrainError::Config(format!("the network has no parameter {name}")))
}

/// The linear layer `prefix` of `varmap` (`{prefix}.weight`, and
/// `{prefix}.bias` when `bias`), as the network's own [`Linear`].
fn linear(varmap: &VarMap, prefix: &str, bias: bool) -> Result<Linear, TrainError> {
    Ok(Linear {
        weight: param(varmap, &format!("{prefix}.weight"))?,
        bias: if bias {
            Some(param(varmap, &format!("{prefix}.bias"))?)
        } else {
            None
        },
    })
}

/// The actor's parameters, the network's own layers looked up by name.
#[derive(Debug, Clone)]
pub(crate) struct ActorParams {
    layers: ActorLayers,
}

/// Every row's node encoding and, with the GNN, its global and domain
/// embeddings and its domain's features.
#[derive(Debug, Clone)]
pub(crate) struct Encoded {
    z: Tensor,
    messages: Option<[Tensor; 3]>,
}

fn as_messages(m: &[Tensor; 3]) -> Messages<'_> {
    Messages {
        global: &m[0],
        domain: &m[1],
        domain_rows: &m[2],
    }
}

impl ActorParams {
    pub(crate) fn load(varmap: &VarMap) -> Result<ActorParams, TrainError> {
        Ok(ActorParams {
            layers: ActorLayers {
                encoder: [
                    linear(varmap, "encoder.fc1", true)?,
                    linear(varmap, "encoder.fc2", true)?,
                ],
                root: param(varmap, "gnn.lin_root.weight")?,
                rel: linear(varmap, "gnn.lin_rel", true)?,
                domain: param(varmap, "gnn.lin_domain.weight")?,
                domain_input: param(varmap, "gnn.lin_domain_input.weight")?,
                pod: param(varmap, "actor.pod.weight")?,
                place: param(varmap, "actor.place.weight")?,
                out: linear(varmap, "actor.out", true)?,
                wait: linear(varmap, "actor.wait", true)?,
            },
        })
    }

    /// Every node's encoding and global embedding (none without the GNN).
    pub(crate) fn embed(&self, b: &Batch, use_gnn: bool) -> Result<Encoded, TrainError> {
        let z = self.layers.encode(&b.nodes)?;
        let messages = if use_gnn {
            let sums = b.graph_sums(&z)?.index_select(&b.graph_of, 0)?;
            let global = (sums - &z)?.broadcast_mul(&b.inv_others)?;
            let zeros = Tensor::zeros((b.domains, z.dim(1)?), DType::F32, &Device::Cpu)?;
            let domain_sums = zeros.index_add(&b.domain_of, &z, 0)?.index_select(&b.domain_of, 0)?;
            let domain = (domain_sums - &z)?.broadcast_mul(&b.inv_domain_others)?;
            let domain_rows = b.domain_features.index_select(&b.domain_of, 0)?;
            Some([global, domain, domain_rows])
        } else {
            None
        };
        Ok(Encoded { z, messages })
    }

    /// Scores of the batch rows `rows` (`len × 3`) given the encodings.
    pub(crate) fn act(&self, b: &Batch, encoded: &Encoded, rows: &Tensor) -> Result<Tensor, TrainError> {
        let graphs = b.graph_of.index_select(rows, 0)?;
        let messages = match &encoded.messages {
            Some([m, d, f]) => Some([
                m.index_select(rows, 0)?,
                d.index_select(rows, 0)?,
                f.index_select(rows, 0)?,
            ]),
            None => None,
        };
        Ok(self.layers.head(
            &encoded.z.index_select(rows, 0)?,
            messages.as_ref().map(as_messages),
            &b.nodes.index_select(rows, 0)?,
            &b.pods.index_select(&graphs, 0)?,
        )?)
    }

    /// The wait head of every graph (`B × 1`): over its mean encoding
    /// (zeros without the GNN) and its pod.
    pub(crate) fn wait(&self, b: &Batch, encoded: &Encoded, use_gnn: bool) -> Result<Tensor, TrainError> {
        let means = if use_gnn {
            b.graph_sums(&encoded.z)?.broadcast_mul(&b.inv_n)?
        } else {
            Tensor::zeros((b.graphs(), encoded.z.dim(1)?), DType::F32, &Device::Cpu)?
        };
        Ok(self.layers.wait(&means, &b.pods)?)
    }

    /// Scores of every node of every graph of the batch (`N × 3`).
    pub(crate) fn forward(&self, b: &Batch, use_gnn: bool) -> Result<Tensor, TrainError> {
        let encoded = self.embed(b, use_gnn)?;
        Ok(self.layers.head(
            &encoded.z,
            encoded.messages.as_ref().map(as_messages),
            &b.nodes,
            &b.pods.index_select(&b.graph_of, 0)?,
        )?)
    }
}

/// The critic's parameters (agent fc1, fc2; head fc1, out).
#[derive(Debug, Clone)]
pub(crate) struct CriticParams {
    agent: [Linear; 2],
    head: [Linear; 2],
}

impl CriticParams {
    pub(crate) fn load(varmap: &VarMap) -> Result<CriticParams, TrainError> {
        Ok(CriticParams {
            agent: [
                linear(varmap, "critic.agent.fc1", true)?,
                linear(varmap, "critic.agent.fc2", true)?,
            ],
            head: [
                linear(varmap, "critic.head.fc1", true)?,
                linear(varmap, "critic.head.out", true)?,
            ],
        })
    }

    /// Q of each graph (`B`) for the joint actions `actions` (`N × 3`) and
    /// the chosen agents `chosen` (their rows in the batch, `B` u32).
    pub(crate) fn q(&self, b: &Batch, actions: &Tensor, chosen: &Tensor) -> Result<Tensor, TrainError> {
        let x = Tensor::cat(&[&b.nodes, actions], 1)?;
        let [a1, a2] = &self.agent;
        let e = a2.forward(&a1.forward(&x)?.relu()?)?.relu()?;
        let d = e.dim(1)?;
        let mean = b.graph_sums(&e)?.broadcast_mul(&b.inv_n)?;
        let padded = Tensor::cat(&[&e, &Tensor::zeros((1, d), DType::F32, &Device::Cpu)?], 0)?;
        let max = padded
            .index_select(&b.pad_index, 0)?
            .reshape((b.graphs(), b.n_max, d))?
            .max(1)?;
        let own = e.index_select(chosen, 0)?;
        let pooled = Tensor::cat(&[&mean, &max, &own, &b.pods, &b.contexts], 1)?;
        let [h1, out] = &self.head;
        let q = out.forward(&h1.forward(&pooled)?.relu()?)?;
        Ok(q.reshape(b.graphs())?)
    }
}

/// The states of a minibatch as stacked tensors.
#[derive(Debug, Clone)]
pub(crate) struct Batch {
    /// node features of every graph, stacked (`N × NODE_FEATURES`)
    nodes: Tensor,
    /// pod features, one row per graph (`B × POD_FEATURES`)
    pods: Tensor,
    /// the critic's context of each graph (`B × CRITIC_CONTEXT`)
    contexts: Tensor,
    /// the graph of every row (`N` u32)
    graph_of: Tensor,
    /// per row, `1 / (n_b − 1)` of its graph (0 for a single node) (`N × 1`)
    inv_others: Tensor,
    /// the failure domain of every row, numbered across the batch (`N` u32)
    domain_of: Tensor,
    /// per row, `1 / (n_D − 1)` of its domain (0 alone in it) (`N × 1`)
    inv_domain_others: Tensor,
    /// domains in the batch
    domains: usize,
    /// every domain's features, in the numbering of `domain_of` (`domains × DOMAIN_FEATURES`)
    domain_features: Tensor,
    /// per graph, `1 / n_b` (`B × 1`)
    inv_n: Tensor,
    /// rows of each graph padded to `n_max`; padding points at row `N` (`B·n_max`)
    pad_index: Tensor,
    n_max: usize,
    /// first row of each graph
    offsets: Vec<usize>,
    rows: usize,
}

impl Batch {
    pub(crate) fn new(states: &[&State]) -> Result<Batch, TrainError> {
        if states.is_empty() {
            return Err(TrainError::Config("an empty minibatch".into()));
        }
        let dev = Device::Cpu;
        let b = states.len();
        let rows: usize = states.iter().map(|s| s.obs.n).sum();
        let n_max = states.iter().map(|s| s.obs.n).max().unwrap_or(0);
        if n_max == 0 {
            return Err(TrainError::Transition("a state without nodes".into()));
        }
        let mut nodes = Vec::with_capacity(rows * NODE_FEATURES);
        let mut pods = Vec::with_capacity(b * POD_FEATURES);
        let mut contexts = Vec::with_capacity(b * CRITIC_CONTEXT);
        let mut graph_of = Vec::with_capacity(rows);
        let mut inv_others = Vec::with_capacity(rows);
        let mut domain_of = Vec::with_capacity(rows);
        let mut inv_domain_others = Vec::with_capacity(rows);
        let mut domains = 0usize;
        let mut domain_features = Vec::new();
        let mut inv_n = Vec::with_capacity(b);
        let mut pad_index = Vec::with_capacity(b * n_max);
        let mut offsets = Vec::with_capacity(b);
        let mut offset = 0;
        for (g, s) in states.iter().enumerate() {
            let n = s.obs.n;
            if n == 0 {
                return Err(TrainError::Transition("a state without nodes".into()));
            }
            if s.obs.domains.len() != n
                || s.obs.domains.iter().any(|&d| d as usize >= s.obs.domain_count)
                || s.obs.domain_features.len() != s.obs.domain_count * DOMAIN_FEATURES
            {
                return Err(TrainError::Transition(format!(
                    "a state's domains ({} for {n} nodes, {} distinct, {} features) do not fit its nodes",
                    s.obs.domains.len(),
                    s.obs.domain_count,
                    s.obs.domain_features.len()
                )));
            }
            domain_features.extend_from_slice(&s.obs.domain_features);
            let mut members = vec![0u32; s.obs.domain_count];
            for &d in &s.obs.domains {
                members[d as usize] += 1;
            }
            for &d in &s.obs.domains {
                domain_of.push((domains + d as usize) as u32);
                let k = members[d as usize];
                inv_domain_others.push(if k > 1 { 1.0 / (k - 1) as f32 } else { 0.0 });
            }
            domains += s.obs.domain_count;
            nodes.extend_from_slice(&s.obs.node_features);
            pods.extend_from_slice(&s.obs.pod_features);
            contexts.extend_from_slice(&critic_context(&s.obs, s.level, s.declined));
            graph_of.extend(std::iter::repeat_n(g as u32, n));
            let others = if n > 1 { 1.0 / (n - 1) as f32 } else { 0.0 };
            inv_others.extend(std::iter::repeat_n(others, n));
            inv_n.push(1.0 / n as f32);
            pad_index.extend((offset..offset + n).map(|r| r as u32));
            pad_index.extend(std::iter::repeat_n(rows as u32, n_max - n));
            offsets.push(offset);
            offset += n;
        }
        Ok(Batch {
            nodes: Tensor::from_vec(nodes, (rows, NODE_FEATURES), &dev)?,
            pods: Tensor::from_vec(pods, (b, POD_FEATURES), &dev)?,
            contexts: Tensor::from_vec(contexts, (b, CRITIC_CONTEXT), &dev)?,
            graph_of: Tensor::from_vec(graph_of, rows, &dev)?,
            inv_others: Tensor::from_vec(inv_others, (rows, 1), &dev)?,
            domain_of: Tensor::from_vec(domain_of, rows, &dev)?,
            inv_domain_others: Tensor::from_vec(inv_domain_others, (rows, 1), &dev)?,
            domains,
            domain_features: Tensor::from_vec(domain_features, (domains, DOMAIN_FEATURES), &dev)?,
            inv_n: Tensor::from_vec(inv_n, (b, 1), &dev)?,
            pad_index: Tensor::from_vec(pad_index, b * n_max, &dev)?,
            n_max,
            offsets,
            rows,
        })
    }

    /// Per-graph sums of the rows of `x` (`B × d`).
    fn graph_sums(&self, x: &Tensor) -> Result<Tensor, TrainError> {
        let zeros = Tensor::zeros((self.graphs(), x.dim(1)?), DType::F32, &Device::Cpu)?;
        Ok(zeros.index_add(&self.graph_of, x, 0)?)
    }

    /// Node rows in all (`N`).
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// Graphs in the batch (`B`).
    pub(crate) fn graphs(&self) -> usize {
        self.offsets.len()
    }

    /// The batch row of node `row` of graph `g`.
    pub(crate) fn row(&self, g: usize, row: usize) -> usize {
        self.offsets.get(g).map_or(row, |o| o + row)
    }

    /// Rows as an index tensor.
    pub(crate) fn index(rows: &[usize]) -> Result<Tensor, TrainError> {
        let idx: Vec<u32> = rows.iter().map(|&r| r as u32).collect();
        Ok(Tensor::from_vec(idx, rows.len(), &Device::Cpu)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::features::Observation;
    use crate::agmarl::network::{AgmarlNet, Critic, Hyper};
    use crate::agmarl::stress::StressLevel;
    use rand::Rng;
    use schedlab_core::rng::stream;

    fn states(sizes: &[usize]) -> Vec<State> {
        let mut rng = stream(3, &[17]);
        sizes
            .iter()
            .map(|&n| {
                let obs = Observation {
                    n,
                    node_features: (0..n * NODE_FEATURES).map(|_| rng.random::<f32>()).collect(),
                    pod_features: (0..POD_FEATURES).map(|_| rng.random::<f32>()).collect(),
                    queue: [0.25, 0.5],
                    domains: (0..n).map(|i| (i % 3) as u32).collect(),
                    domain_count: n.min(3),
                    domain_features: (0..n.min(3) * DOMAIN_FEATURES).map(|d| d as f32 / 4.0).collect(),
                };
                let level = [StressLevel::Calm, StressLevel::Elevated, StressLevel::Stressed][n % 3];
                State::new(obs, (0..n).collect(), level).unwrap()
            })
            .collect()
    }

    fn tensors(s: &State) -> (Tensor, Tensor) {
        (
            Tensor::from_slice(&s.obs.node_features, (s.obs.n, NODE_FEATURES), &Device::Cpu).unwrap(),
            Tensor::from_slice(&s.obs.pod_features, (1, POD_FEATURES), &Device::Cpu).unwrap(),
        )
    }

    fn close(a: &[f32], b: &[f32]) {
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(b) {
            assert!((x - y).abs() < 1e-5, "{x} vs {y}");
        }
    }

    #[test]
    fn batched_actor_equals_the_network_one_graph_at_a_time() {
        let h = Hyper::default();
        let net = AgmarlNet::new(&h, 5).unwrap();
        let params = ActorParams::load(net.varmap()).unwrap();
        let all = states(&[4, 1, 7, 2]);
        let refs: Vec<&State> = all.iter().collect();
        let batch = Batch::new(&refs).unwrap();
        for use_gnn in [true, false] {
            let batched = params.forward(&batch, use_gnn).unwrap().to_vec2::<f32>().unwrap();
            for (g, s) in all.iter().enumerate() {
                let (nodes, pod) = tensors(s);
                let one = net
                    .forward(&nodes, &s.obs.domains, &s.obs.domain_features, &pod, use_gnn)
                    .unwrap()
                    .to_vec2::<f32>()
                    .unwrap();
                for (r, row) in one.iter().enumerate() {
                    close(&batched[batch.row(g, r)], row);
                }
            }
            let rows = [batch.row(2, 6), batch.row(0, 1), batch.row(1, 0)];
            let embedding = params.embed(&batch, use_gnn).unwrap();
            let some = params
                .act(&batch, &embedding, &Batch::index(&rows).unwrap())
                .unwrap()
                .to_vec2::<f32>()
                .unwrap();
            for (got, &r) in some.iter().zip(&rows) {
                close(got, &batched[r]);
            }
            // the wait head, per graph
            let waits = params
                .wait(&batch, &embedding, use_gnn)
                .unwrap()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap();
            for (g, s) in all.iter().enumerate() {
                let (nodes, pod) = tensors(s);
                let one = net.wait(&nodes, &pod, use_gnn).unwrap().flatten_all().unwrap();
                close(&waits[g..g + 1], &one.to_vec1::<f32>().unwrap());
            }
        }
    }

    #[test]
    fn batched_critic_equals_the_network_one_graph_at_a_time() {
        let h = Hyper::default();
        let critic = Critic::new(&h, 6).unwrap();
        let params = CriticParams::load(critic.varmap()).unwrap();
        let all = states(&[3, 6, 1, 5]);
        let refs: Vec<&State> = all.iter().collect();
        let batch = Batch::new(&refs).unwrap();
        let mut rng = stream(4, &[18]);
        let actions: Vec<f32> = (0..batch.rows() * 3).map(|_| rng.random::<f32>()).collect();
        let chosen_local = [2usize, 0, 0, 4];
        let chosen: Vec<usize> = chosen_local.iter().enumerate().map(|(g, &r)| batch.row(g, r)).collect();
        let q = params
            .q(
                &batch,
                &Tensor::from_vec(actions.clone(), (batch.rows(), 3), &Device::Cpu).unwrap(),
                &Batch::index(&chosen).unwrap(),
            )
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        for (g, s) in all.iter().enumerate() {
            let (nodes, pod) = tensors(s);
            let start = batch.row(g, 0) * 3;
            let a = Tensor::from_slice(&actions[start..start + s.obs.n * 3], (s.obs.n, 3), &Device::Cpu).unwrap();
            let context = critic_context(&s.obs, s.level, s.declined);
            let context = Tensor::from_slice(&context, (1, CRITIC_CONTEXT), &Device::Cpu).unwrap();
            let one = critic
                .q(&nodes, &pod, &context, &a, chosen_local[g])
                .unwrap()
                .to_vec1::<f32>()
                .unwrap();
            close(&q[g..g + 1], &one);
        }
    }

    #[test]
    fn missing_parameters_are_errors() {
        let empty = VarMap::new();
        assert!(matches!(ActorParams::load(&empty), Err(TrainError::Config(_))));
        assert!(matches!(CriticParams::load(&empty), Err(TrainError::Config(_))));
        assert!(Batch::new(&[]).is_err());
    }
}
