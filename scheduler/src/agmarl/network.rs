//! The AGMARL-DKS networks: a graph neural network over the fully connected
//! node graph, the per-node actor that scores each node on the three
//! objectives, and the centralised critic used in training.
//!
//! # Graph network
//!
//! Every node is an agent; the paper connects every agent to every other.
//! Each message-passing layer is GraphConv (Morris et al., 2019) with mean
//! aggregation over the other nodes:
//!
//! ```text
//! m_i  = (1 / (N-1)) Σ_{j≠i} h_j  =  (S − h_i) / (N−1),   S = Σ_j h_j
//! h'_i = relu(W_root h_i + W_rel m_i + b)
//! ```
//!
//! The sum-minus-self form makes a layer O(N·d) instead of the O(N²·d) of
//! explicit messages on a complete graph, and gives exactly the same result;
//! being affine in `h_i`, it is evaluated as one matrix product per layer
//! (`GraphLayer::forward`).
//! With a single node there is no other node and `m = 0`. The input of layer
//! 0 is the node features; the output of the last layer is the agent's
//! global embedding. Tensor names follow PyTorch Geometric's `GraphConv`
//! (`lin_rel` with the bias, `lin_root` without), so a checkpoint maps onto
//! `torch_geometric.nn.GraphConv(aggr="mean")` on a complete graph.
//!
//! # Actor
//!
//! One actor, its parameters shared by all node agents, maps
//! `[local features, pod features, global embedding]` through two ReLU layers
//! to three sigmoid scores `[fault tolerance, utilisation, cost]`. Sharing is
//! what makes the policy usable as a scheduler: it is permutation
//! equivariant (renumbering the nodes renumbers the scores and changes
//! nothing else), it generalises across cluster sizes and node mixes (every
//! agent learns from every other agent's experience, and a node never seen in
//! training is just another row), and its size does not depend on N, so one
//! checkpoint serves a 10-node and a 5,000-node cluster.
//!
//! # Critic
//!
//! The centralised critic of MADDPG sees every agent's observation and
//! action. To stay O(N) and independent of node order it embeds each agent's
//! `[observation, action]` with a shared two-layer MLP, pools the embeddings
//! by mean and max over agents, and adds the chosen agent's own embedding and
//! the pod's features before a two-layer head that outputs Q. It is used in
//! training only.
//!
//! # Parameters
//!
//! Weights are stored PyTorch-style (`weight` is `out × in`, `y = x Wᵀ + b`)
//! and initialised as `torch.nn.Linear` does, uniform in ±1/√fan_in for
//! weights and biases, but drawn from our own seeded stream
//! (`purpose::TRAINING`) because candle's initialisers are not seeded.

use crate::agmarl::error::AgmarlError;
use crate::agmarl::features::{NODE_FEATURES, Observation, POD_FEATURES};
use candle_core::{D, DType, Device, Tensor, Var};
use candle_nn::VarMap;
use clusters::rng::{SimRng, purpose, stream};
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Number of objectives each agent scores: `[fault tolerance, utilisation, cost]`.
pub const OBJECTIVES: usize = 3;

/// Largest width or depth [`Hyper`] accepts: far above anything useful here,
/// low enough that a damaged checkpoint sidecar cannot ask for gigabytes.
pub const MAX_DIM: usize = 4096;
/// Largest number of message-passing layers [`Hyper`] accepts.
pub const MAX_GNN_LAYERS: usize = 16;

/// Stream keys of the initialisers (under `purpose::TRAINING`).
const INIT_ACTOR: u64 = 0x6163_746f_7200; // "actor"
const INIT_CRITIC: u64 = 0x6372_6974_6963; // "critic"

/// Network sizes. Defaults are small on purpose: the inputs are a few dozen
/// normalised numbers, and a decision must stay within a couple of
/// milliseconds on one core at 1,000 nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Hyper {
    /// width of the hidden message-passing layers
    pub gnn_hidden: usize,
    /// width of the last message-passing layer: the global embedding
    pub embed_dim: usize,
    /// number of message-passing layers (the paper's design: 2)
    pub gnn_layers: usize,
    /// width of the actor's two hidden layers
    pub actor_hidden: usize,
    /// width of the critic's agent embedding and head
    pub critic_hidden: usize,
}

impl Default for Hyper {
    fn default() -> Hyper {
        Hyper {
            gnn_hidden: 32,
            embed_dim: 16,
            gnn_layers: 2,
            actor_hidden: 64,
            critic_hidden: 64,
        }
    }
}

impl Hyper {
    /// Rejects sizes a network cannot be built with.
    pub fn validate(&self) -> Result<(), AgmarlError> {
        let dims = [
            ("gnn_hidden", self.gnn_hidden),
            ("embed_dim", self.embed_dim),
            ("actor_hidden", self.actor_hidden),
            ("critic_hidden", self.critic_hidden),
        ];
        for (name, d) in dims {
            if d == 0 || d > MAX_DIM {
                return Err(AgmarlError::Hyper(format!("{name} = {d}, must be in 1..={MAX_DIM}")));
            }
        }
        if self.gnn_layers == 0 || self.gnn_layers > MAX_GNN_LAYERS {
            return Err(AgmarlError::Hyper(format!(
                "gnn_layers = {}, must be in 1..={MAX_GNN_LAYERS}",
                self.gnn_layers
            )));
        }
        Ok(())
    }
}

/// Where a parameter's initial values come from: its name, shape and the
/// fan-in of its layer. Lets one construction path serve random
/// initialisation, copies and checkpoints.
type Init<'a, E> = dyn FnMut(&str, &[usize], usize) -> Result<Vec<f32>, E> + 'a;

/// Creates named variables in a [`VarMap`].
struct Builder<'a, 'b, E> {
    varmap: VarMap,
    init: &'a mut Init<'b, E>,
}

impl<E: From<AgmarlError>> Builder<'_, '_, E> {
    fn param(&mut self, name: &str, shape: &[usize], fan_in: usize) -> Result<Tensor, E> {
        let values = (self.init)(name, shape, fan_in)?;
        let tensor = Tensor::from_vec(values, shape, &Device::Cpu).map_err(AgmarlError::from)?;
        let var = Var::from_tensor(&tensor).map_err(AgmarlError::from)?;
        let handle = var.as_tensor().clone();
        self.varmap
            .data()
            .lock()
            .map_err(|_| AgmarlError::Poisoned)?
            .insert(name.to_string(), var);
        Ok(handle)
    }

    fn linear(&mut self, prefix: &str, input: usize, output: usize, bias: bool) -> Result<Linear, E> {
        let weight = self.param(&format!("{prefix}.weight"), &[output, input], input)?;
        let bias = if bias {
            Some(self.param(&format!("{prefix}.bias"), &[output], input)?)
        } else {
            None
        };
        Ok(Linear { weight, bias })
    }
}

/// `y = x Wᵀ + b`. Holds the variables' tensors directly (they share storage
/// with the [`VarMap`]), so a forward pass never looks names up.
#[derive(Debug, Clone)]
pub(crate) struct Linear {
    pub(crate) weight: Tensor,
    pub(crate) bias: Option<Tensor>,
}

impl Linear {
    fn detach(&self) -> Linear {
        Linear {
            weight: self.weight.detach(),
            bias: self.bias.as_ref().map(Tensor::detach),
        }
    }

    pub(crate) fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let y = x.matmul(&self.weight.t()?)?;
        match &self.bias {
            Some(b) => y.broadcast_add(b),
            None => Ok(y),
        }
    }
}

/// One GraphConv layer with mean aggregation over the other nodes.
#[derive(Debug, Clone)]
struct GraphLayer {
    /// `W_root` (`lin_root.weight`), applied to the node itself
    root: Tensor,
    /// `W_rel` (`lin_rel.weight`), applied to the mean of the other nodes
    rel: Tensor,
    /// `b` (`lin_rel.bias`)
    bias: Tensor,
}

impl GraphLayer {
    /// `h` is `n × d_in`; O(n·d) whatever the graph's size.
    ///
    /// Since `m_i = (S − h_i)/(n−1)` is affine in `h_i`, the layer is one
    /// affine map of each row: `h'_i = relu(h_i Wᵀ + c)` with
    /// `W = W_root − W_rel/(n−1)` and `c = S W_relᵀ/(n−1) + b`. That is the
    /// same function with a single `n`-row matrix product instead of two
    /// (and no `n × d` message matrix); `W` and `c` cost O(d²).
    fn forward(&self, h: &Tensor) -> candle_core::Result<Tensor> {
        let n = h.dim(0)?;
        let (weight, shift) = if n > 1 {
            let k = 1.0 / (n - 1) as f64;
            let weight = (&self.root - (&self.rel * k)?)?;
            // S as 1ᵀh: candle's sum over the leading dimension walks the
            // matrix with two divisions per element, the product runs in gemm
            let sum = Tensor::ones((1, n), h.dtype(), h.device())?.matmul(h)?;
            let shift = (sum.matmul(&self.rel.t()?)? * k)?.broadcast_add(&self.bias)?;
            (weight, shift)
        } else {
            // a lone node has no other node: m = 0
            (self.root.clone(), self.bias.unsqueeze(0)?)
        };
        h.matmul(&weight.t()?)?.broadcast_add(&shift)?.relu()
    }

    fn detach(&self) -> GraphLayer {
        GraphLayer {
            root: self.root.detach(),
            rel: self.rel.detach(),
            bias: self.bias.detach(),
        }
    }
}

/// The network's computation, separate from its parameter store so that
/// inference can run on detached copies (no autograd bookkeeping).
#[derive(Debug, Clone)]
struct Layers {
    gnn: Vec<GraphLayer>,
    /// fc1, fc2, out
    actor: [Linear; 3],
}

/// Rows of the actor evaluated at once at inference: keeps every
/// intermediate (at most `ACTOR_CHUNK × actor_hidden` floats) in cache and
/// below the allocator's mmap threshold, so large clusters do not pay page
/// faults on every decision.
const ACTOR_CHUNK: usize = 512;

impl Layers {
    fn detach(&self) -> Layers {
        Layers {
            gnn: self.gnn.iter().map(GraphLayer::detach).collect(),
            actor: self.actor.clone().map(|l| l.detach()),
        }
    }

    fn embed(&self, nodes: &Tensor) -> candle_core::Result<Tensor> {
        let mut h = nodes.clone();
        for layer in &self.gnn {
            h = layer.forward(&h)?;
        }
        Ok(h)
    }

    /// fc1 split by input block. Its input is `[local, pod, embedding]`, and
    /// the pod block is the same for every agent, so `pod W_podᵀ + b` is
    /// computed once (`1 × hidden`) and the per-agent product only covers
    /// `[local, embedding]` (or `local` alone without the GNN). Returns that
    /// weight block and the shared shift.
    fn actor_input(&self, pod: &Tensor, embed_dim: Option<usize>) -> candle_core::Result<(Tensor, Tensor)> {
        let fc1 = &self.actor[0];
        let w_local = fc1.weight.narrow(1, 0, NODE_FEATURES)?;
        let w_pod = fc1.weight.narrow(1, NODE_FEATURES, POD_FEATURES)?;
        let w_in = match embed_dim {
            Some(e) => {
                let w_embed = fc1.weight.narrow(1, NODE_FEATURES + POD_FEATURES, e)?;
                Tensor::cat(&[&w_local, &w_embed], 1)?
            }
            None => w_local.contiguous()?,
        };
        let mut shift = pod.matmul(&w_pod.t()?)?;
        if let Some(b) = &fc1.bias {
            shift = shift.broadcast_add(b)?;
        }
        Ok((w_in, shift))
    }

    /// The actor on rows `x` (`k × (NODE_FEATURES [+ embed_dim])`) given
    /// [`Layers::actor_input`]'s weight block and shift: scores `k × 3`.
    fn act(&self, x: &Tensor, w_in: &Tensor, shift: &Tensor) -> candle_core::Result<Tensor> {
        let [_, fc2, out] = &self.actor;
        let h = x.matmul(&w_in.t()?)?.broadcast_add(shift)?.relu()?;
        let h = fc2.forward(&h)?.relu()?;
        candle_nn::ops::sigmoid(&out.forward(&h)?)
    }
}

fn init_rng(seed: u64, which: u64) -> SimRng {
    stream(seed, &[purpose::TRAINING, which])
}

/// `torch.nn.Linear`'s default initialisation from our stream.
fn uniform_init(rng: &mut SimRng) -> impl FnMut(&str, &[usize], usize) -> Result<Vec<f32>, AgmarlError> + '_ {
    move |_, shape, fan_in| {
        let bound = 1.0 / (fan_in.max(1) as f32).sqrt();
        let len = shape.iter().product();
        Ok((0..len).map(|_| rng.random_range(-bound..bound)).collect())
    }
}

/// The variables of `varmap` (handles, not copies).
fn snapshot(varmap: &VarMap) -> Result<HashMap<String, Var>, AgmarlError> {
    Ok(varmap.data().lock().map_err(|_| AgmarlError::Poisoned)?.clone())
}

/// The current values of parameter `name` of `vars`, which must have `shape`.
fn copy_values(vars: &HashMap<String, Var>, name: &str, shape: &[usize]) -> Result<Vec<f32>, AgmarlError> {
    let var = vars
        .get(name)
        .ok_or_else(|| AgmarlError::Hyper(format!("parameter {name} missing from the source network")))?;
    if var.dims() != shape {
        return Err(AgmarlError::Shape {
            what: "copied parameter",
            expected: shape.to_vec(),
            got: var.dims().to_vec(),
        });
    }
    Ok(var.as_tensor().flatten_all()?.to_vec1::<f32>()?)
}

fn expect_shape(what: &'static str, t: &Tensor, expected: &[usize]) -> Result<(), AgmarlError> {
    let ok =
        t.dims().len() == expected.len() && t.dims().iter().zip(expected).all(|(&g, &e)| e == usize::MAX || g == e);
    if ok && t.dtype() == DType::F32 {
        Ok(())
    } else {
        Err(AgmarlError::Shape {
            what,
            expected: expected.to_vec(),
            got: t.dims().to_vec(),
        })
    }
}

/// The shared GNN and the shared actor: the policy every node agent runs.
pub struct AgmarlNet {
    hyper: Hyper,
    varmap: VarMap,
    layers: Layers,
}

impl std::fmt::Debug for AgmarlNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgmarlNet")
            .field("hyper", &self.hyper)
            .field("parameters", &self.parameter_count())
            .finish_non_exhaustive()
    }
}

impl AgmarlNet {
    /// A freshly initialised network; the same `seed` gives the same weights.
    pub fn new(hyper: &Hyper, seed: u64) -> Result<AgmarlNet, AgmarlError> {
        let mut rng = init_rng(seed, INIT_ACTOR);
        AgmarlNet::build(hyper, &mut uniform_init(&mut rng))
    }

    /// Builds the network asking `init` for every parameter, in a fixed order.
    pub(crate) fn build<E: From<AgmarlError>>(hyper: &Hyper, init: &mut Init<'_, E>) -> Result<AgmarlNet, E> {
        hyper.validate()?;
        let mut b = Builder {
            varmap: VarMap::new(),
            init,
        };
        let mut gnn = Vec::with_capacity(hyper.gnn_layers);
        let mut input = NODE_FEATURES;
        for l in 0..hyper.gnn_layers {
            let output = if l + 1 == hyper.gnn_layers {
                hyper.embed_dim
            } else {
                hyper.gnn_hidden
            };
            let prefix = format!("gnn.layers.{l}");
            gnn.push(GraphLayer {
                root: b.param(&format!("{prefix}.lin_root.weight"), &[output, input], input)?,
                rel: b.param(&format!("{prefix}.lin_rel.weight"), &[output, input], input)?,
                bias: b.param(&format!("{prefix}.lin_rel.bias"), &[output], input)?,
            });
            input = output;
        }
        let h = hyper.actor_hidden;
        let actor = [
            b.linear("actor.fc1", NODE_FEATURES + POD_FEATURES + hyper.embed_dim, h, true)?,
            b.linear("actor.fc2", h, h, true)?,
            b.linear("actor.out", h, OBJECTIVES, true)?,
        ];
        Ok(AgmarlNet {
            hyper: hyper.clone(),
            varmap: b.varmap,
            layers: Layers { gnn, actor },
        })
    }

    /// The parameters, for the optimiser and checkpoints.
    pub fn varmap(&self) -> &VarMap {
        &self.varmap
    }

    pub fn hyper(&self) -> &Hyper {
        &self.hyper
    }

    /// Total number of scalar parameters.
    pub fn parameter_count(&self) -> usize {
        self.varmap.all_vars().iter().map(|v| v.elem_count()).sum()
    }

    /// An independent copy with new variables, for target networks and the
    /// frozen actors of exploration threads.
    pub fn deep_clone(&self) -> Result<AgmarlNet, AgmarlError> {
        let vars = snapshot(&self.varmap)?;
        AgmarlNet::build(&self.hyper, &mut |name: &str, shape: &[usize], _| {
            copy_values(&vars, name, shape)
        })
    }

    /// The global embedding of every node (`n × embed_dim`), from all `n`
    /// nodes' features (`n × NODE_FEATURES`).
    pub fn embed(&self, nodes: &Tensor) -> Result<Tensor, AgmarlError> {
        expect_shape("node features", nodes, &[usize::MAX, NODE_FEATURES])?;
        Ok(self.layers.embed(nodes)?)
    }

    /// Differentiable forward pass: node features (`n × NODE_FEATURES`) and
    /// the pod (`1 × POD_FEATURES`) to scores (`n × 3`) in [0, 1].
    /// `use_gnn = false` replaces every global embedding by zeros, so each
    /// node's scores depend on its own features and the pod only (the
    /// embedding's weights then get no gradient).
    pub fn forward(&self, nodes: &Tensor, pod: &Tensor, use_gnn: bool) -> Result<Tensor, AgmarlError> {
        expect_shape("node features", nodes, &[usize::MAX, NODE_FEATURES])?;
        expect_shape("pod features", pod, &[1, POD_FEATURES])?;
        let layers = &self.layers;
        let (w_in, shift) = layers.actor_input(pod, use_gnn.then_some(self.hyper.embed_dim))?;
        let x = if use_gnn {
            Tensor::cat(&[nodes, &layers.embed(nodes)?], 1)?
        } else {
            nodes.clone()
        };
        Ok(layers.act(&x, &w_in, &shift)?)
    }

    /// Inference on an observation: the scores of the nodes in `rows`, in
    /// that order. The GNN still sees all `n` nodes; the actor runs on the
    /// requested rows only, in chunks. Same function as [`AgmarlNet::forward`]
    /// (to float rounding), without building a gradient graph.
    pub fn scores(&self, obs: &Observation, rows: &[usize], use_gnn: bool) -> Result<Vec<[f32; 3]>, AgmarlError> {
        let n = obs.n;
        if obs.node_features.len() != n * NODE_FEATURES || obs.pod_features.len() != POD_FEATURES {
            return Err(AgmarlError::Shape {
                what: "observation",
                expected: vec![n * NODE_FEATURES, POD_FEATURES],
                got: vec![obs.node_features.len(), obs.pod_features.len()],
            });
        }
        if let Some(&bad) = rows.iter().find(|&&r| r >= n) {
            return Err(AgmarlError::Index {
                what: "row",
                index: bad,
                n,
            });
        }
        let mut scores = Vec::with_capacity(rows.len());
        if rows.is_empty() {
            return Ok(scores);
        }
        let dev = Device::Cpu;
        let layers = self.layers.detach();
        let nodes = Tensor::from_slice(&obs.node_features, (n, NODE_FEATURES), &dev)?;
        let pod = Tensor::from_slice(&obs.pod_features, (1, POD_FEATURES), &dev)?;
        let (w_in, shift) = layers.actor_input(&pod, use_gnn.then_some(self.hyper.embed_dim))?;
        let x = if use_gnn {
            Tensor::cat(&[&nodes, &layers.embed(&nodes)?], 1)?
        } else {
            nodes
        };
        let in_order = rows.len() == n && rows.iter().enumerate().all(|(i, &r)| i == r);
        for (c, chunk) in rows.chunks(ACTOR_CHUNK).enumerate() {
            let xc = if in_order {
                x.narrow(0, c * ACTOR_CHUNK, chunk.len())?
            } else {
                let idx: Vec<u32> = chunk.iter().map(|&r| r as u32).collect();
                x.index_select(&Tensor::from_vec(idx, chunk.len(), &dev)?, 0)?
            };
            let out = layers.act(&xc, &w_in, &shift)?.flatten_all()?.to_vec1::<f32>()?;
            scores.extend(out.chunks_exact(OBJECTIVES).map(|s| [s[0], s[1], s[2]]));
        }
        Ok(scores)
    }
}

/// The centralised critic Q(all observations, all actions, chosen agent).
pub struct Critic {
    hyper: Hyper,
    varmap: VarMap,
    /// per-agent embedding: fc1, fc2
    agent: [Linear; 2],
    /// head: fc1, out
    head: [Linear; 2],
}

impl std::fmt::Debug for Critic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Critic")
            .field("hyper", &self.hyper)
            .finish_non_exhaustive()
    }
}

impl Critic {
    /// A freshly initialised critic; the same `seed` gives the same weights.
    pub fn new(hyper: &Hyper, seed: u64) -> Result<Critic, AgmarlError> {
        let mut rng = init_rng(seed, INIT_CRITIC);
        Critic::build(hyper, &mut uniform_init(&mut rng))
    }

    fn build<E: From<AgmarlError>>(hyper: &Hyper, init: &mut Init<'_, E>) -> Result<Critic, E> {
        hyper.validate()?;
        let mut b = Builder {
            varmap: VarMap::new(),
            init,
        };
        let h = hyper.critic_hidden;
        let agent = [
            b.linear("critic.agent.fc1", NODE_FEATURES + OBJECTIVES, h, true)?,
            b.linear("critic.agent.fc2", h, h, true)?,
        ];
        let head = [
            b.linear("critic.head.fc1", 3 * h + POD_FEATURES, h, true)?,
            b.linear("critic.head.out", h, 1, true)?,
        ];
        Ok(Critic {
            hyper: hyper.clone(),
            varmap: b.varmap,
            agent,
            head,
        })
    }

    pub fn varmap(&self) -> &VarMap {
        &self.varmap
    }

    pub fn hyper(&self) -> &Hyper {
        &self.hyper
    }

    /// An independent copy with new variables (the target critic).
    pub fn deep_clone(&self) -> Result<Critic, AgmarlError> {
        let vars = snapshot(&self.varmap)?;
        Critic::build(&self.hyper, &mut |name: &str, shape: &[usize], _| {
            copy_values(&vars, name, shape)
        })
    }

    /// Q of one joint decision: every agent's observation (`n ×
    /// NODE_FEATURES`) and action (`n × 3`), the pod (`1 × POD_FEATURES`) and
    /// the agent that was chosen. O(n) through mean and max pooling; returns
    /// a tensor of shape `(1)`.
    pub fn q(&self, nodes: &Tensor, pod: &Tensor, actions: &Tensor, chosen: usize) -> Result<Tensor, AgmarlError> {
        expect_shape("node features", nodes, &[usize::MAX, NODE_FEATURES])?;
        let n = nodes.dim(0)?;
        expect_shape("actions", actions, &[n, OBJECTIVES])?;
        expect_shape("pod features", pod, &[1, POD_FEATURES])?;
        if chosen >= n {
            return Err(AgmarlError::Index {
                what: "chosen agent",
                index: chosen,
                n,
            });
        }
        let x = Tensor::cat(&[nodes, actions], 1)?;
        let [a1, a2] = &self.agent;
        let e = a2.forward(&a1.forward(&x)?.relu()?)?.relu()?;
        let pooled = Tensor::cat(
            &[&e.mean_keepdim(0)?, &e.max_keepdim(0)?, &e.narrow(0, chosen, 1)?, pod],
            D::Minus1,
        )?;
        let [h1, out] = &self.head;
        let q = out.forward(&h1.forward(&pooled)?.relu()?)?;
        Ok(q.reshape(1)?)
    }
}

/// Soft target update, `target ← τ·source + (1−τ)·target`, for every
/// parameter of `target` (both maps must hold the same names and shapes).
pub fn soft_update(target: &VarMap, source: &VarMap, tau: f64) -> Result<(), AgmarlError> {
    // copy the source handles out first: target and source may be one map
    let source = snapshot(source)?;
    let target = target.data().lock().map_err(|_| AgmarlError::Poisoned)?;
    for (name, t) in target.iter() {
        let s = source
            .get(name)
            .ok_or_else(|| AgmarlError::Hyper(format!("soft update: parameter {name} missing from the source")))?;
        if s.dims() != t.dims() {
            return Err(AgmarlError::Shape {
                what: "soft update parameter",
                expected: t.dims().to_vec(),
                got: s.dims().to_vec(),
            });
        }
        let mixed = ((s.as_tensor().detach() * tau)? + (t.as_tensor().detach() * (1.0 - tau))?)?;
        t.set(&mixed)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_obs(n: usize, seed: u64) -> Observation {
        let mut rng = stream(seed, &[99]);
        Observation {
            n,
            node_features: (0..n * NODE_FEATURES).map(|_| rng.random::<f32>()).collect(),
            pod_features: (0..POD_FEATURES).map(|_| rng.random::<f32>()).collect(),
        }
    }

    fn tensors(obs: &Observation) -> (Tensor, Tensor) {
        (
            Tensor::from_slice(&obs.node_features, (obs.n, NODE_FEATURES), &Device::Cpu).unwrap(),
            Tensor::from_slice(&obs.pod_features, (1, POD_FEATURES), &Device::Cpu).unwrap(),
        )
    }

    /// Explicit messages over every ordered pair: the O(N²) definition.
    fn naive_layer(layer: &GraphLayer, h: &[Vec<f32>]) -> Vec<Vec<f32>> {
        let w_root = layer.root.to_vec2::<f32>().unwrap();
        let w_rel = layer.rel.to_vec2::<f32>().unwrap();
        let bias = layer.bias.to_vec1::<f32>().unwrap();
        let n = h.len();
        let din = h[0].len();
        (0..n)
            .map(|i| {
                let mut m = vec![0.0f32; din];
                for (j, hj) in h.iter().enumerate() {
                    if j != i {
                        for (mk, x) in m.iter_mut().zip(hj) {
                            *mk += x / (n - 1) as f32;
                        }
                    }
                }
                (0..bias.len())
                    .map(|o| {
                        let root: f32 = (0..din).map(|k| w_root[o][k] * h[i][k]).sum();
                        let rel: f32 = (0..din).map(|k| w_rel[o][k] * m[k]).sum();
                        (root + rel + bias[o]).max(0.0)
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn linear_time_layers_equal_naive_mean_aggregation() {
        let net = AgmarlNet::new(&Hyper::default(), 3).unwrap();
        for n in [1, 2, 7] {
            let obs = random_obs(n, n as u64);
            let (nodes, _) = tensors(&obs);
            let mut naive: Vec<Vec<f32>> = obs.node_features.chunks(NODE_FEATURES).map(<[f32]>::to_vec).collect();
            let mut fast = nodes.clone();
            for layer in &net.layers.gnn {
                naive = naive_layer(layer, &naive);
                fast = layer.forward(&fast).unwrap();
                let fast_rows = fast.to_vec2::<f32>().unwrap();
                for (a, b) in fast_rows.iter().flatten().zip(naive.iter().flatten()) {
                    assert!((a - b).abs() < 1e-5, "n={n}: {a} vs {b}");
                }
            }
            assert_eq!(
                net.embed(&nodes).unwrap().to_vec2::<f32>().unwrap(),
                fast.to_vec2::<f32>().unwrap()
            );
        }
    }

    #[test]
    fn same_seed_same_weights_other_seed_other_weights() {
        let h = Hyper::default();
        let obs = random_obs(5, 1);
        let rows: Vec<usize> = (0..5).collect();
        let a = AgmarlNet::new(&h, 7).unwrap().scores(&obs, &rows, true).unwrap();
        let b = AgmarlNet::new(&h, 7).unwrap().scores(&obs, &rows, true).unwrap();
        let c = AgmarlNet::new(&h, 8).unwrap().scores(&obs, &rows, true).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn scores_match_forward_on_selected_rows() {
        let net = AgmarlNet::new(&Hyper::default(), 1).unwrap();
        let obs = random_obs(6, 2);
        let (nodes, pod) = tensors(&obs);
        for use_gnn in [true, false] {
            let full = net.forward(&nodes, &pod, use_gnn).unwrap().to_vec2::<f32>().unwrap();
            let rows = [4, 0, 5];
            let some = net.scores(&obs, &rows, use_gnn).unwrap();
            for (s, &r) in some.iter().zip(&rows) {
                for k in 0..3 {
                    assert!((s[k] - full[r][k]).abs() < 1e-6);
                    assert!((0.0..=1.0).contains(&s[k]));
                }
            }
        }
        assert!(net.scores(&obs, &[], true).unwrap().is_empty());
        assert!(matches!(
            net.scores(&obs, &[6], true),
            Err(AgmarlError::Index { index: 6, n: 6, .. })
        ));
        let mut bad = obs.clone();
        bad.pod_features.pop();
        assert!(matches!(net.scores(&bad, &[0], true), Err(AgmarlError::Shape { .. })));
    }

    #[test]
    fn chunked_inference_matches_forward_on_large_clusters() {
        let net = AgmarlNet::new(&Hyper::default(), 9).unwrap();
        let n = 2 * ACTOR_CHUNK + 77;
        let obs = random_obs(n, 8);
        let (nodes, pod) = tensors(&obs);
        for use_gnn in [true, false] {
            let full = net.forward(&nodes, &pod, use_gnn).unwrap().to_vec2::<f32>().unwrap();
            let in_order: Vec<usize> = (0..n).collect();
            let shuffled: Vec<usize> = (0..n).rev().filter(|i| i % 3 != 1).collect();
            for rows in [in_order, shuffled] {
                let got = net.scores(&obs, &rows, use_gnn).unwrap();
                assert_eq!(got.len(), rows.len());
                for (s, &r) in got.iter().zip(&rows) {
                    for k in 0..3 {
                        assert!((s[k] - full[r][k]).abs() < 1e-5, "row {r}: {s:?} vs {:?}", full[r]);
                    }
                }
            }
        }
    }

    #[test]
    fn shapes_are_checked() {
        let net = AgmarlNet::new(&Hyper::default(), 1).unwrap();
        let dev = Device::Cpu;
        let nodes = Tensor::zeros((3, NODE_FEATURES + 1), DType::F32, &dev).unwrap();
        let pod = Tensor::zeros((1, POD_FEATURES), DType::F32, &dev).unwrap();
        assert!(matches!(
            net.forward(&nodes, &pod, true),
            Err(AgmarlError::Shape { .. })
        ));
        let critic = Critic::new(&Hyper::default(), 1).unwrap();
        let nodes = Tensor::zeros((3, NODE_FEATURES), DType::F32, &dev).unwrap();
        let actions = Tensor::zeros((2, 3), DType::F32, &dev).unwrap();
        assert!(critic.q(&nodes, &pod, &actions, 0).is_err());
        let actions = Tensor::zeros((3, 3), DType::F32, &dev).unwrap();
        assert!(matches!(
            critic.q(&nodes, &pod, &actions, 3),
            Err(AgmarlError::Index { .. })
        ));
        assert_eq!(critic.q(&nodes, &pod, &actions, 2).unwrap().dims(), &[1]);
    }

    #[test]
    fn invalid_hyperparameters_are_errors() {
        for h in [
            Hyper {
                gnn_layers: 0,
                ..Hyper::default()
            },
            Hyper {
                embed_dim: 0,
                ..Hyper::default()
            },
            Hyper {
                actor_hidden: MAX_DIM + 1,
                ..Hyper::default()
            },
        ] {
            assert!(matches!(AgmarlNet::new(&h, 0), Err(AgmarlError::Hyper(_))), "{h:?}");
        }
    }

    #[test]
    fn critic_is_invariant_to_the_order_of_the_other_agents() {
        let critic = Critic::new(&Hyper::default(), 4).unwrap();
        let obs = random_obs(5, 3);
        let (nodes, pod) = tensors(&obs);
        let actions = Tensor::from_vec((0..15).map(|i| i as f32 / 15.0).collect(), (5, 3), &Device::Cpu).unwrap();
        let q = critic.q(&nodes, &pod, &actions, 1).unwrap().to_vec1::<f32>().unwrap()[0];
        let perm = Tensor::from_vec(vec![4u32, 1, 3, 0, 2], 5, &Device::Cpu).unwrap();
        let (pn, pa) = (
            nodes.index_select(&perm, 0).unwrap(),
            actions.index_select(&perm, 0).unwrap(),
        );
        // agent 1 stays at row 1 under this permutation
        let qp = critic.q(&pn, &pod, &pa, 1).unwrap().to_vec1::<f32>().unwrap()[0];
        assert!((q - qp).abs() < 1e-5, "{q} vs {qp}");
        let other = critic.q(&nodes, &pod, &actions, 0).unwrap().to_vec1::<f32>().unwrap()[0];
        assert_ne!(q, other);
    }

    #[test]
    fn deep_clone_is_independent_and_soft_update_mixes() {
        let net = AgmarlNet::new(&Hyper::default(), 1).unwrap();
        let target = net.deep_clone().unwrap();
        let obs = random_obs(4, 5);
        let rows = [0, 1, 2, 3];
        let before = net.scores(&obs, &rows, true).unwrap();
        assert_eq!(target.scores(&obs, &rows, true).unwrap(), before);
        // move the source: the copy must not follow
        let other = AgmarlNet::new(&Hyper::default(), 2).unwrap();
        soft_update(net.varmap(), other.varmap(), 1.0).unwrap();
        assert_eq!(
            net.scores(&obs, &rows, true).unwrap(),
            other.scores(&obs, &rows, true).unwrap()
        );
        assert_eq!(target.scores(&obs, &rows, true).unwrap(), before);
        // tau = 0 leaves the target alone; tau = 0.5 lands halfway per weight
        soft_update(target.varmap(), net.varmap(), 0.0).unwrap();
        assert_eq!(target.scores(&obs, &rows, true).unwrap(), before);
        let w = |m: &VarMap| {
            m.data().lock().unwrap()["actor.fc1.weight"]
                .as_tensor()
                .flatten_all()
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        };
        let (t0, s0) = (w(target.varmap()), w(net.varmap()));
        soft_update(target.varmap(), net.varmap(), 0.5).unwrap();
        for ((t1, t0), s0) in w(target.varmap()).iter().zip(&t0).zip(&s0) {
            assert!((t1 - (t0 + s0) / 2.0).abs() < 1e-6);
        }
        // a map updated from itself stays put (and does not deadlock)
        soft_update(net.varmap(), net.varmap(), 0.3).unwrap();
        assert_eq!(
            net.scores(&obs, &rows, true).unwrap(),
            other.scores(&obs, &rows, true).unwrap()
        );
        // critics clone too
        let critic = Critic::new(&Hyper::default(), 1).unwrap();
        let copy = critic.deep_clone().unwrap();
        let (nodes, pod) = tensors(&obs);
        let actions = Tensor::zeros((4, 3), DType::F32, &Device::Cpu).unwrap();
        let q = |c: &Critic| c.q(&nodes, &pod, &actions, 0).unwrap().to_vec1::<f32>().unwrap();
        assert_eq!(q(&critic), q(&copy));
    }

    #[test]
    fn gradients_reach_every_parameter() {
        let net = AgmarlNet::new(&Hyper::default(), 1).unwrap();
        let obs = random_obs(4, 6);
        let (nodes, pod) = tensors(&obs);
        let loss = net.forward(&nodes, &pod, true).unwrap().sum_all().unwrap();
        let grads = loss.backward().unwrap();
        for var in net.varmap().all_vars() {
            assert!(grads.get(var.as_tensor()).is_some());
        }
        let critic = Critic::new(&Hyper::default(), 1).unwrap();
        let actions = net.forward(&nodes, &pod, true).unwrap();
        let q = critic.q(&nodes, &pod, &actions, 2).unwrap().sum_all().unwrap();
        let grads = q.backward().unwrap();
        for var in critic.varmap().all_vars().iter().chain(&net.varmap().all_vars()) {
            assert!(grads.get(var.as_tensor()).is_some());
        }
    }
}
