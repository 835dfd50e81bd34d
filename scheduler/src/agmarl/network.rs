//! The AGMARL-DKS networks: a graph neural network over the fully connected
//! node graph, the per-node actor that scores each node on the three
//! objectives, and the centralised critic used in training.
//!
//! # Actor and graph network
//!
//! Every node is an agent; the paper connects every agent to every other.
//! Each agent's observation has two parts: its node's state `s_i` (the
//! first [`STATE_FEATURES`] columns, which do not depend on the pod being
//! placed) and the placement columns `a_i` (the node's allocation if the pod
//! went there). The pod's own features `p` are shared by all agents.
//!
//! ```text
//! z_i  = relu(W₂ relu(W₁ s_i + b₁) + b₂)                 node encoder
//! m_i  = (1 / (N-1)) Σ_{j≠i} z_j  =  (S − z_i) / (N−1),   S = Σ_j z_j
//! d_i  = (S_g − z_i) / (n_g − 1),  S_g = Σ_{j in i's domain g} z_j
//! h_i  = relu(W_root z_i + W_rel m_i + W_dom d_i + W_din f_g + b + W_pod p + W_place a_i)
//! y_i  = sigmoid(W_out h_i + b_out)   = [fault tolerance, utilisation, cost]
//! ```
//!
//! One more output is the pod's, not a node's: the wait head
//!
//! ```text
//! w = sigmoid(W_wait [S/N; p] + b_wait)                  (`actor.wait`)
//! ```
//!
//! predicts the fault tolerance the pod would realise if declined now (where
//! it is bound later, 0 if it never is), from the mean node encoding and the
//! pod; strategic restraint compares it with the chosen node's fault
//! tolerance ([`crate::agmarl::restraint`]). Without the GNN the mean is
//! left out (`S/N = 0`): the wait head sees the pod only.
//!
//! `m_i` is the agent's global embedding: the mean of every other agent's
//! encoding, one GraphConv layer (Morris et al., 2019) with mean aggregation
//! on the complete graph, evaluated in O(N·d) through the sum-minus-self
//! form instead of O(N²·d) explicit messages. With a single node there is
//! no other node and `m = 0`. Tensor names follow PyTorch Geometric's
//! `GraphConv` for the graph layer (`gnn.lin_rel` with the bias,
//! `gnn.lin_root` without).
//!
//! On the complete graph alone `m_i` is one global mean plus a self term of
//! order 1/N: it cannot tell one part of the cluster from another. `d_i`
//! is a second relation, the mean over the other nodes of the agent's
//! failure domain (same pool and zone, [`Observation::domains`]), with its
//! own weights `W_dom` (`gnn.lin_domain`): a relational graph layer with
//! two edge types, complete and same-domain, so a hot-spot, a failing zone
//! or a reclaimed spot pool reaches exactly the agents it concerns. It is
//! O(N·d) too (per-domain sums, minus self), and 0 for a node alone in its
//! domain. What a domain's nodes share (its recent failures per node,
//! [`Observation::domain_features`]) enters beside it once per domain as
//! `W_din f_g` (`gnn.lin_domain_input`), not in each node's state row: a
//! failure then changes one vector of the domain, not every node's
//! encoding in it.
//!
//! The layout is chosen for decision time: `z_i`, `W_root z_i` and
//! `W_rel z_i` depend on the node's state alone, so a scheduler keeps them
//! from one decision to the next and recomputes them only for nodes whose
//! state changed; what the pod changes (`W_pod p`, `W_place a_i`, the
//! output layer) costs O(d) per candidate, and `S` an O(N·d) sum
//! ([`crate::agmarl::scoring`]).
//!
//! One actor, its parameters shared by all node agents: it is permutation
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
//! by mean and max over agents, and adds the chosen agent's own embedding,
//! the pod's features and the decision's context ([`critic_context`]: the
//! stress level in force, which the reward's stress term depends on, the
//! pending queue's summary, and whether the pod was declined) before a
//! two-layer head that outputs Q. It is used in training only.
//!
//! # Parameters
//!
//! Weights are stored PyTorch-style (`weight` is `out × in`, `y = x Wᵀ + b`)
//! and initialised as `torch.nn.Linear` does, uniform in ±1/√fan_in for
//! weights and biases (the four blocks feeding `h_i` share the fan-in of
//! their sum), but drawn from our own seeded stream (`purpose::TRAINING`)
//! because candle's initialisers are not seeded.

use crate::agmarl::error::AgmarlError;
use crate::agmarl::features::{
    DOMAIN_FEATURES, NODE_FEATURES, Observation, PLACEMENT_FEATURES, POD_FEATURES, QUEUE_FEATURES, STATE_FEATURES,
};
use crate::agmarl::scoring::{Scorer, Weights};
use crate::agmarl::stress::StressLevel;
use candle_core::{D, DType, Device, Tensor, Var};
use candle_nn::VarMap;
use rand::Rng;
use schedlab_core::rng::{SimRng, purpose, stream};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Number of objectives each agent scores: `[fault tolerance, utilisation, cost]`.
pub const OBJECTIVES: usize = 3;

/// Largest width [`Hyper`] accepts: far above anything useful here, low
/// enough that a damaged checkpoint sidecar cannot ask for gigabytes.
pub const MAX_DIM: usize = 4096;

/// Stream keys of the initialisers (under `purpose::TRAINING`).
const INIT_ACTOR: u64 = 0x6163_746f_7200; // "actor"
const INIT_CRITIC: u64 = 0x6372_6974_6963; // "critic"

/// Network sizes. Defaults are small on purpose: the inputs are a few dozen
/// normalised numbers, and a decision must stay well under a millisecond on
/// one core at 1,000 nodes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Hyper {
    /// width of the node encoder's hidden layer
    pub encoder_hidden: usize,
    /// width of a node's encoding `z_i`, which the graph layer aggregates
    pub embed_dim: usize,
    /// width of the actor's hidden layer `h_i`
    pub actor_hidden: usize,
    /// width of the critic's agent embedding and head
    pub critic_hidden: usize,
}

impl Default for Hyper {
    fn default() -> Hyper {
        Hyper {
            encoder_hidden: 32,
            embed_dim: 32,
            actor_hidden: 64,
            critic_hidden: 64,
        }
    }
}

impl Hyper {
    /// Rejects sizes a network cannot be built with.
    pub fn validate(&self) -> Result<(), AgmarlError> {
        let dims = [
            ("encoder_hidden", self.encoder_hidden),
            ("embed_dim", self.embed_dim),
            ("actor_hidden", self.actor_hidden),
            ("critic_hidden", self.critic_hidden),
        ];
        for (name, d) in dims {
            if d == 0 || d > MAX_DIM {
                return Err(AgmarlError::Hyper(format!("{name} = {d}: must be in 1..={MAX_DIM}")));
            }
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
    pub(crate) fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let y = x.matmul(&self.weight.t()?)?;
        match &self.bias {
            Some(b) => y.broadcast_add(b),
            None => Ok(y),
        }
    }
}

/// The actor's parameters, as tensors sharing the [`VarMap`]'s storage.
#[derive(Debug, Clone)]
pub(crate) struct ActorLayers {
    /// `encoder.fc1`, `encoder.fc2`
    pub(crate) encoder: [Linear; 2],
    /// `W_root` (`gnn.lin_root.weight`, `actor_hidden × embed_dim`)
    pub(crate) root: Tensor,
    /// `W_rel` with `b` (`gnn.lin_rel`)
    pub(crate) rel: Linear,
    /// `W_dom` (`gnn.lin_domain.weight`, `actor_hidden × embed_dim`)
    pub(crate) domain: Tensor,
    /// `W_din` (`gnn.lin_domain_input.weight`, `actor_hidden × DOMAIN_FEATURES`)
    pub(crate) domain_input: Tensor,
    /// `W_pod` (`actor.pod.weight`, `actor_hidden × POD_FEATURES`)
    pub(crate) pod: Tensor,
    /// `W_place` (`actor.place.weight`, `actor_hidden × PLACEMENT_FEATURES`)
    pub(crate) place: Tensor,
    /// `actor.out`
    pub(crate) out: Linear,
    /// `actor.wait` (`1 × (embed_dim + POD_FEATURES)`, with a bias)
    pub(crate) wait: Linear,
}

impl ActorLayers {
    /// The encodings `z` of node rows `nodes` (`k × NODE_FEATURES`; the
    /// placement columns are ignored).
    pub(crate) fn encode(&self, nodes: &Tensor) -> candle_core::Result<Tensor> {
        let state = nodes.narrow(1, 0, STATE_FEATURES)?;
        let [fc1, fc2] = &self.encoder;
        fc2.forward(&fc1.forward(&state)?.relu()?)?.relu()
    }

    /// The scores of rows whose encodings are `z`, the graph's share
    /// `messages` (None without the GNN: global and domain embeddings, and
    /// each row's domain features), node rows `nodes` (for their placement
    /// columns) and pod rows `pods` (one per row, or one for all).
    pub(crate) fn head(
        &self,
        z: &Tensor,
        messages: Option<Messages<'_>>,
        nodes: &Tensor,
        pods: &Tensor,
    ) -> candle_core::Result<Tensor> {
        let place = nodes.narrow(1, STATE_FEATURES, PLACEMENT_FEATURES)?;
        let mut pre = z.matmul(&self.root.t()?)?;
        pre = match messages {
            Some(Messages {
                global,
                domain,
                domain_rows,
            }) => {
                (((pre + self.rel.forward(global)?)? + domain.matmul(&self.domain.t()?)?)?
                    + domain_rows.matmul(&self.domain_input.t()?)?)?
            }
            None => match &self.rel.bias {
                Some(b) => pre.broadcast_add(b)?,
                None => pre,
            },
        };
        let pre = pre
            .broadcast_add(&pods.matmul(&self.pod.t()?)?)?
            .add(&place.matmul(&self.place.t()?)?)?;
        candle_nn::ops::sigmoid(&self.out.forward(&pre.relu()?)?)
    }

    /// The wait head of graphs whose mean encodings are `means` (`B ×
    /// embed_dim`, zeros without the GNN) and pods `pods` (`B ×
    /// POD_FEATURES`): `B × 1` in [0, 1].
    pub(crate) fn wait(&self, means: &Tensor, pods: &Tensor) -> candle_core::Result<Tensor> {
        candle_nn::ops::sigmoid(&self.wait.forward(&Tensor::cat(&[means, pods], 1)?)?)
    }
}

/// What the graph adds to every row's hidden layer: the global embedding
/// `m_i`, the domain embedding `d_i` (both `n × embed_dim`) and the
/// features `f_g` of each row's domain (`n × DOMAIN_FEATURES`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Messages<'a> {
    pub(crate) global: &'a Tensor,
    pub(crate) domain: &'a Tensor,
    pub(crate) domain_rows: &'a Tensor,
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

/// The values of `t` as a flat row-major vector.
fn values(t: &Tensor) -> Result<Vec<f32>, AgmarlError> {
    Ok(t.flatten_all()?.to_vec1::<f32>()?)
}

/// The shared GNN and the shared actor: the policy every node agent runs.
pub struct AgmarlNet {
    hyper: Hyper,
    varmap: VarMap,
    layers: ActorLayers,
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
        let (e, h) = (hyper.embed_dim, hyper.actor_hidden);
        let encoder = [
            b.linear("encoder.fc1", STATE_FEATURES, hyper.encoder_hidden, true)?,
            b.linear("encoder.fc2", hyper.encoder_hidden, e, true)?,
        ];
        // the six blocks are one layer over [z, m, d, f, p, a]: one fan-in
        let fan_in = 3 * e + DOMAIN_FEATURES + POD_FEATURES + PLACEMENT_FEATURES;
        let root = b.param("gnn.lin_root.weight", &[h, e], fan_in)?;
        let rel = Linear {
            weight: b.param("gnn.lin_rel.weight", &[h, e], fan_in)?,
            bias: Some(b.param("gnn.lin_rel.bias", &[h], fan_in)?),
        };
        let domain = b.param("gnn.lin_domain.weight", &[h, e], fan_in)?;
        let domain_input = b.param("gnn.lin_domain_input.weight", &[h, DOMAIN_FEATURES], fan_in)?;
        let pod = b.param("actor.pod.weight", &[h, POD_FEATURES], fan_in)?;
        let place = b.param("actor.place.weight", &[h, PLACEMENT_FEATURES], fan_in)?;
        let out = b.linear("actor.out", h, OBJECTIVES, true)?;
        let wait = b.linear("actor.wait", e + POD_FEATURES, 1, true)?;
        Ok(AgmarlNet {
            hyper: hyper.clone(),
            varmap: b.varmap,
            layers: ActorLayers {
                encoder,
                root,
                rel,
                domain,
                domain_input,
                pod,
                place,
                out,
                wait,
            },
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

    /// The current weights as plain arrays, for [`Scorer`] (a copy: later
    /// training steps do not reach it).
    pub fn weights(&self) -> Result<Weights, AgmarlError> {
        let l = &self.layers;
        let bias = |lin: &Linear| match &lin.bias {
            Some(b) => values(b),
            None => Ok(Vec::new()),
        };
        Weights::new(
            &self.hyper,
            [values(&l.encoder[0].weight)?, bias(&l.encoder[0])?],
            [values(&l.encoder[1].weight)?, bias(&l.encoder[1])?],
            values(&l.root)?,
            [values(&l.rel.weight)?, bias(&l.rel)?],
            values(&l.domain)?,
            values(&l.domain_input)?,
            values(&l.pod)?,
            values(&l.place)?,
            [values(&l.out.weight)?, bias(&l.out)?],
            [values(&l.wait.weight)?, bias(&l.wait)?],
        )
    }

    /// The global embedding `m_i` and the domain embedding `d_i` of every
    /// node (each `n × embed_dim`), from all `n` nodes' rows (`n ×
    /// NODE_FEATURES`) and their domains (`n` numbers below `n`).
    pub fn embed(&self, nodes: &Tensor, domains: &[u32]) -> Result<(Tensor, Tensor), AgmarlError> {
        expect_shape("node features", nodes, &[usize::MAX, NODE_FEATURES])?;
        let z = self.layers.encode(nodes)?;
        Ok((messages(&z)?, domain_messages(&z, domains)?))
    }

    /// Differentiable forward pass: node features (`n × NODE_FEATURES`),
    /// their domains ([`Observation::domains`]), the domains' features
    /// ([`Observation::domain_features`]) and the pod (`1 × POD_FEATURES`)
    /// to scores (`n × 3`) in [0, 1]. `use_gnn = false` drops the graph's
    /// whole share (`m_i = d_i = 0`, no domain features), so each node's
    /// scores depend on its own features and the pod only (`W_rel`, `W_dom`
    /// and `W_din` then get no gradient).
    pub fn forward(
        &self,
        nodes: &Tensor,
        domains: &[u32],
        domain_features: &[f32],
        pod: &Tensor,
        use_gnn: bool,
    ) -> Result<Tensor, AgmarlError> {
        expect_shape("node features", nodes, &[usize::MAX, NODE_FEATURES])?;
        expect_shape("pod features", pod, &[1, POD_FEATURES])?;
        let z = self.layers.encode(nodes)?;
        if !use_gnn {
            return Ok(self.layers.head(&z, None, nodes, pod)?);
        }
        let (global, domain) = (messages(&z)?, domain_messages(&z, domains)?);
        let domain_rows = domain_rows(domains, domain_features, z.device())?;
        let m = Messages {
            global: &global,
            domain: &domain,
            domain_rows: &domain_rows,
        };
        Ok(self.layers.head(&z, Some(m), nodes, pod)?)
    }

    /// Differentiable wait head ([module docs](self)) of all `n` nodes' rows
    /// (`n × NODE_FEATURES`) and the pod (`1 × POD_FEATURES`): `1 × 1`.
    pub fn wait(&self, nodes: &Tensor, pod: &Tensor, use_gnn: bool) -> Result<Tensor, AgmarlError> {
        expect_shape("node features", nodes, &[usize::MAX, NODE_FEATURES])?;
        expect_shape("pod features", pod, &[1, POD_FEATURES])?;
        let z = self.layers.encode(nodes)?;
        let mean = if use_gnn {
            z.mean_keepdim(0)?
        } else {
            z.narrow(0, 0, 1)?.zeros_like()?
        };
        Ok(self.layers.wait(&mean, pod)?)
    }

    /// Inference on an observation: the scores of the nodes in `rows`, in
    /// that order, computed from scratch by a fresh [`Scorer`] (the path
    /// the scheduler runs, without its memory of earlier decisions). Same
    /// function as [`AgmarlNet::forward`], to float rounding.
    pub fn scores(&self, obs: &Observation, rows: &[usize], use_gnn: bool) -> Result<Vec<[f32; 3]>, AgmarlError> {
        let mut scorer = Scorer::new(self.weights()?);
        let mut out = Vec::with_capacity(rows.len());
        scorer.scores_into(obs, rows, use_gnn, &mut out)?;
        Ok(out)
    }
}

/// `m_i = (S − z_i)/(n−1)` for every row of `z` (zeros for a single row).
fn messages(z: &Tensor) -> candle_core::Result<Tensor> {
    let n = z.dim(0)?;
    if n <= 1 {
        return z.zeros_like();
    }
    // S as 1ᵀz: candle's sum over the leading dimension walks the matrix with
    // two divisions per element, the product runs in gemm
    let sum = Tensor::ones((1, n), z.dtype(), z.device())?.matmul(z)?;
    sum.broadcast_sub(z)? * (1.0 / (n - 1) as f64)
}

/// `d_i = (S_g − z_i)/(n_g − 1)` for every row of `z`, `g` its entry of
/// `domains` (zeros for a row alone in its domain).
fn domain_messages(z: &Tensor, domains: &[u32]) -> Result<Tensor, AgmarlError> {
    let n = z.dim(0)?;
    if domains.len() != n {
        return Err(AgmarlError::Shape {
            what: "domains",
            expected: vec![n],
            got: vec![domains.len()],
        });
    }
    let count = domains.iter().map(|&d| d as usize + 1).max().unwrap_or(0);
    let mut nodes = vec![0u32; count];
    for &d in domains {
        nodes[d as usize] += 1;
    }
    let inv: Vec<f32> = domains
        .iter()
        .map(|&d| match nodes[d as usize] {
            0 | 1 => 0.0,
            k => 1.0 / (k - 1) as f32,
        })
        .collect();
    let of = Tensor::from_vec(domains.to_vec(), n, z.device())?;
    let sums = Tensor::zeros((count, z.dim(1)?), z.dtype(), z.device())?.index_add(&of, z, 0)?;
    let inv = Tensor::from_vec(inv, (n, 1), z.device())?;
    Ok((sums.index_select(&of, 0)? - z)?.broadcast_mul(&inv)?)
}

/// Every row's domain features (`n × DOMAIN_FEATURES`), from the domains'
/// (`domains × DOMAIN_FEATURES`, row-major).
fn domain_rows(domains: &[u32], domain_features: &[f32], device: &Device) -> Result<Tensor, AgmarlError> {
    let count = domain_features.len() / DOMAIN_FEATURES;
    if count * DOMAIN_FEATURES != domain_features.len() || domains.iter().any(|&d| d as usize >= count) {
        return Err(AgmarlError::Shape {
            what: "domain features",
            expected: vec![
                domains.iter().map(|&d| d as usize + 1).max().unwrap_or(0),
                DOMAIN_FEATURES,
            ],
            got: vec![domain_features.len()],
        });
    }
    let rows: Vec<f32> = domains
        .iter()
        .flat_map(|&d| {
            let at = d as usize * DOMAIN_FEATURES;
            domain_features[at..at + DOMAIN_FEATURES].iter().copied()
        })
        .collect();
    Ok(Tensor::from_vec(rows, (domains.len(), DOMAIN_FEATURES), device)?)
}

/// Width of [`critic_context`].
pub const CRITIC_CONTEXT: usize = QUEUE_FEATURES + 4;

/// What the critic sees of a decision beside the agents: the pending
/// queue's summary ([`Observation::queue`]), the stress level in force,
/// one-hot (Calm, Elevated, Stressed), and 1 when the controller declined
/// the pod (strategic restraint: the chosen agent is then the node refused).
pub fn critic_context(obs: &Observation, level: StressLevel, declined: bool) -> [f32; CRITIC_CONTEXT] {
    let mut c = [0.0; CRITIC_CONTEXT];
    c[..QUEUE_FEATURES].copy_from_slice(&obs.queue);
    let hot = match level {
        StressLevel::Calm => 0,
        StressLevel::Elevated => 1,
        StressLevel::Stressed => 2,
    };
    c[QUEUE_FEATURES + hot] = 1.0;
    c[QUEUE_FEATURES + 3] = f32::from(u8::from(declined));
    c
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
            b.linear("critic.head.fc1", 3 * h + POD_FEATURES + CRITIC_CONTEXT, h, true)?,
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
    /// NODE_FEATURES`) and action (`n × 3`), the pod (`1 × POD_FEATURES`),
    /// the decision's context (`1 × CRITIC_CONTEXT`, [`critic_context`]) and
    /// the agent that was chosen. O(n) through mean and max pooling; returns
    /// a tensor of shape `(1)`.
    pub fn q(
        &self,
        nodes: &Tensor,
        pod: &Tensor,
        context: &Tensor,
        actions: &Tensor,
        chosen: usize,
    ) -> Result<Tensor, AgmarlError> {
        expect_shape("node features", nodes, &[usize::MAX, NODE_FEATURES])?;
        let n = nodes.dim(0)?;
        expect_shape("actions", actions, &[n, OBJECTIVES])?;
        expect_shape("pod features", pod, &[1, POD_FEATURES])?;
        expect_shape("critic context", context, &[1, CRITIC_CONTEXT])?;
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
            &[
                &e.mean_keepdim(0)?,
                &e.max_keepdim(0)?,
                &e.narrow(0, chosen, 1)?,
                pod,
                context,
            ],
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
            queue: [0.25, 0.5],
            domains: (0..n).map(|i| (i % 3) as u32).collect(),
            domain_count: n.min(3),
            domain_features: (0..n.min(3) * DOMAIN_FEATURES).map(|_| rng.random::<f32>()).collect(),
        }
    }

    fn ctx() -> Tensor {
        Tensor::from_slice(&[0.5f32, 0.25, 0.0, 1.0, 0.0, 0.0], (1, CRITIC_CONTEXT), &Device::Cpu).unwrap()
    }

    fn tensors(obs: &Observation) -> (Tensor, Tensor) {
        (
            Tensor::from_slice(&obs.node_features, (obs.n, NODE_FEATURES), &Device::Cpu).unwrap(),
            Tensor::from_slice(&obs.pod_features, (1, POD_FEATURES), &Device::Cpu).unwrap(),
        )
    }

    fn relu_layer(w: &[Vec<f32>], b: Option<&[f32]>, x: &[f32], relu: bool) -> Vec<f32> {
        w.iter()
            .enumerate()
            .map(|(o, row)| {
                let v: f32 = row.iter().zip(x).map(|(a, b)| a * b).sum::<f32>() + b.map_or(0.0, |b| b[o]);
                if relu { v.max(0.0) } else { v }
            })
            .collect()
    }

    /// The module docs' formulas with explicit messages over every ordered
    /// pair: the O(N²) definition.
    fn naive_scores(net: &AgmarlNet, obs: &Observation, use_gnn: bool) -> Vec<[f32; 3]> {
        let l = &net.layers;
        let m2 = |t: &Tensor| t.to_vec2::<f32>().unwrap();
        let v1 = |t: &Option<Tensor>| t.as_ref().unwrap().to_vec1::<f32>().unwrap();
        let n = obs.n;
        let rows: Vec<&[f32]> = obs.node_features.chunks(NODE_FEATURES).collect();
        let z: Vec<Vec<f32>> = rows
            .iter()
            .map(|r| {
                let h1 = relu_layer(
                    &m2(&l.encoder[0].weight),
                    Some(&v1(&l.encoder[0].bias)),
                    &r[..STATE_FEATURES],
                    true,
                );
                relu_layer(&m2(&l.encoder[1].weight), Some(&v1(&l.encoder[1].bias)), &h1, true)
            })
            .collect();
        (0..n)
            .map(|i| {
                let mut m = vec![0.0f32; z[i].len()];
                let mut d = vec![0.0f32; z[i].len()];
                if use_gnn {
                    let mates = (0..n).filter(|&j| j != i && obs.domains[j] == obs.domains[i]).count();
                    for (j, zj) in z.iter().enumerate() {
                        if j != i {
                            for (mk, x) in m.iter_mut().zip(zj) {
                                *mk += x / (n - 1) as f32;
                            }
                            if obs.domains[j] == obs.domains[i] {
                                for (dk, x) in d.iter_mut().zip(zj) {
                                    *dk += x / mates as f32;
                                }
                            }
                        }
                    }
                }
                let root = relu_layer(&m2(&l.root), None, &z[i], false);
                let rel = relu_layer(&m2(&l.rel.weight), Some(&v1(&l.rel.bias)), &m, false);
                let dom = relu_layer(&m2(&l.domain), None, &d, false);
                let g = obs.domains[i] as usize * DOMAIN_FEATURES;
                let f = if use_gnn {
                    obs.domain_features[g..g + DOMAIN_FEATURES].to_vec()
                } else {
                    vec![0.0; DOMAIN_FEATURES]
                };
                let din = relu_layer(&m2(&l.domain_input), None, &f, false);
                let pod = relu_layer(&m2(&l.pod), None, &obs.pod_features, false);
                let place = relu_layer(&m2(&l.place), None, &rows[i][STATE_FEATURES..], false);
                let h: Vec<f32> = (0..root.len())
                    .map(|j| (root[j] + rel[j] + dom[j] + din[j] + pod[j] + place[j]).max(0.0))
                    .collect();
                let y = relu_layer(&m2(&l.out.weight), Some(&v1(&l.out.bias)), &h, false);
                [y[0], y[1], y[2]].map(|x| 1.0 / (1.0 + (-x).exp()))
            })
            .collect()
    }

    #[test]
    fn forward_and_scores_equal_the_naive_definition() {
        let net = AgmarlNet::new(&Hyper::default(), 3).unwrap();
        for n in [1, 2, 7, 300] {
            let obs = random_obs(n, n as u64);
            let (nodes, pod) = tensors(&obs);
            let all: Vec<usize> = (0..n).collect();
            for use_gnn in [true, false] {
                let naive = naive_scores(&net, &obs, use_gnn);
                let forward = net
                    .forward(&nodes, &obs.domains, &obs.domain_features, &pod, use_gnn)
                    .unwrap()
                    .to_vec2::<f32>()
                    .unwrap();
                let scores = net.scores(&obs, &all, use_gnn).unwrap();
                for i in 0..n {
                    for k in 0..3 {
                        assert!((forward[i][k] - naive[i][k]).abs() < 1e-5, "n={n} forward {i}");
                        assert!((scores[i][k] - naive[i][k]).abs() < 1e-5, "n={n} scores {i}");
                    }
                }
            }
            // the embeddings are means of the other nodes' encodings
            let (m, d) = net.embed(&nodes, &obs.domains).unwrap();
            let (m, d) = (m.to_vec2::<f32>().unwrap(), d.to_vec2::<f32>().unwrap());
            assert_eq!((m.len(), d.len()), (n, n));
            if n == 1 {
                assert!(m[0].iter().chain(&d[0]).all(|&x| x == 0.0));
            }
        }
    }

    #[test]
    fn the_wait_head_reads_the_mean_encoding_and_the_pod() {
        let net = AgmarlNet::new(&Hyper::default(), 3).unwrap();
        for n in [1, 4, 50] {
            let obs = random_obs(n, 40 + n as u64);
            let (nodes, pod) = tensors(&obs);
            for use_gnn in [true, false] {
                let tensor = net.wait(&nodes, &pod, use_gnn).unwrap().flatten_all().unwrap();
                let tensor = tensor.to_vec1::<f32>().unwrap()[0];
                let mut scorer = Scorer::new(net.weights().unwrap());
                // with and without the sum of a scoring just made
                let fresh = scorer.wait(&obs, use_gnn).unwrap();
                scorer.scores_into(&obs, &[0], use_gnn, &mut Vec::new()).unwrap();
                let after = scorer.wait(&obs, use_gnn).unwrap();
                assert!((fresh - tensor).abs() < 1e-5 && (after - tensor).abs() < 1e-5, "n={n}");
                assert!((0.0..=1.0).contains(&fresh));
            }
        }
        // another pod, another answer; without the GNN the nodes do not matter
        let obs = random_obs(6, 1);
        let mut other_pod = obs.clone();
        other_pod.pod_features[0] = 1.0 - other_pod.pod_features[0];
        let mut other_nodes = obs.clone();
        for x in &mut other_nodes.node_features[..STATE_FEATURES] {
            *x = 1.0 - *x;
        }
        let wait = |o: &Observation, g: bool| Scorer::new(net.weights().unwrap()).wait(o, g).unwrap();
        assert_ne!(wait(&obs, true), wait(&other_pod, true));
        assert_ne!(wait(&obs, true), wait(&other_nodes, true));
        assert_eq!(wait(&obs, false), wait(&other_nodes, false));
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
            let full = net
                .forward(&nodes, &obs.domains, &obs.domain_features, &pod, use_gnn)
                .unwrap()
                .to_vec2::<f32>()
                .unwrap();
            let rows = [4, 0, 5];
            let some = net.scores(&obs, &rows, use_gnn).unwrap();
            for (s, &r) in some.iter().zip(&rows) {
                for k in 0..3 {
                    assert!((s[k] - full[r][k]).abs() < 1e-5);
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
    fn the_embedding_changes_the_scores_and_nognn_ignores_the_other_nodes() {
        let net = AgmarlNet::new(&Hyper::default(), 4).unwrap();
        let obs = random_obs(5, 9);
        let mut other = obs.clone();
        // change node 4 only: node 0's score moves with the GNN, not without
        for x in &mut other.node_features[4 * NODE_FEATURES..4 * NODE_FEATURES + STATE_FEATURES] {
            *x = 1.0 - *x;
        }
        let with = |o: &Observation, g: bool| net.scores(o, &[0], g).unwrap()[0];
        assert_ne!(with(&obs, true), with(&other, true));
        assert_eq!(with(&obs, false), with(&other, false));
        // so does a change of node 0's domain's features
        let mut failing = obs.clone();
        failing.domain_features[obs.domains[0] as usize * DOMAIN_FEATURES] += 0.5;
        assert_ne!(with(&obs, true), with(&failing, true));
        assert_eq!(with(&obs, false), with(&failing, false));
    }

    #[test]
    fn shapes_are_checked() {
        let net = AgmarlNet::new(&Hyper::default(), 1).unwrap();
        let dev = Device::Cpu;
        let nodes = Tensor::zeros((3, NODE_FEATURES + 1), DType::F32, &dev).unwrap();
        let pod = Tensor::zeros((1, POD_FEATURES), DType::F32, &dev).unwrap();
        assert!(matches!(
            net.forward(&nodes, &[0, 0, 0], &[0.0], &pod, true),
            Err(AgmarlError::Shape { .. })
        ));
        let right = Tensor::zeros((3, NODE_FEATURES), DType::F32, &dev).unwrap();
        assert!(matches!(
            net.forward(&right, &[0, 0], &[0.0], &pod, true),
            Err(AgmarlError::Shape { what: "domains", .. })
        ));
        assert!(matches!(
            net.forward(&right, &[0, 1, 0], &[0.0], &pod, true),
            Err(AgmarlError::Shape {
                what: "domain features",
                ..
            })
        ));
        let critic = Critic::new(&Hyper::default(), 1).unwrap();
        let nodes = Tensor::zeros((3, NODE_FEATURES), DType::F32, &dev).unwrap();
        let actions = Tensor::zeros((2, 3), DType::F32, &dev).unwrap();
        assert!(critic.q(&nodes, &pod, &ctx(), &actions, 0).is_err());
        let actions = Tensor::zeros((3, 3), DType::F32, &dev).unwrap();
        assert!(matches!(
            critic.q(&nodes, &pod, &ctx(), &actions, 3),
            Err(AgmarlError::Index { .. })
        ));
        assert_eq!(critic.q(&nodes, &pod, &ctx(), &actions, 2).unwrap().dims(), &[1]);
    }

    #[test]
    fn invalid_hyperparameters_are_errors() {
        for h in [
            Hyper {
                encoder_hidden: 0,
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
        let q = critic
            .q(&nodes, &pod, &ctx(), &actions, 1)
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()[0];
        let perm = Tensor::from_vec(vec![4u32, 1, 3, 0, 2], 5, &Device::Cpu).unwrap();
        let (pn, pa) = (
            nodes.index_select(&perm, 0).unwrap(),
            actions.index_select(&perm, 0).unwrap(),
        );
        // agent 1 stays at row 1 under this permutation
        let qp = critic.q(&pn, &pod, &ctx(), &pa, 1).unwrap().to_vec1::<f32>().unwrap()[0];
        assert!((q - qp).abs() < 1e-5, "{q} vs {qp}");
        let other = critic
            .q(&nodes, &pod, &ctx(), &actions, 0)
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()[0];
        assert_ne!(q, other);
        // the critic sees the stress level and the queue
        let calm = critic_context(&obs, StressLevel::Calm, false);
        let stressed = critic_context(&obs, StressLevel::Stressed, false);
        let declined = critic_context(&obs, StressLevel::Stressed, true);
        assert_eq!(&calm[..QUEUE_FEATURES], &obs.queue);
        assert_eq!((calm[QUEUE_FEATURES], stressed[QUEUE_FEATURES + 2]), (1.0, 1.0));
        assert_eq!((stressed[QUEUE_FEATURES + 3], declined[QUEUE_FEATURES + 3]), (0.0, 1.0));
        let with = |c: [f32; CRITIC_CONTEXT]| {
            let c = Tensor::from_slice(&c, (1, CRITIC_CONTEXT), &Device::Cpu).unwrap();
            critic
                .q(&nodes, &pod, &c, &actions, 1)
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()[0]
        };
        assert_ne!(with(calm), with(stressed));
        assert_ne!(with(stressed), with(declined));
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
            m.data().lock().unwrap()["gnn.lin_root.weight"]
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
        let q = |c: &Critic| {
            c.q(&nodes, &pod, &ctx(), &actions, 0)
                .unwrap()
                .to_vec1::<f32>()
                .unwrap()
        };
        assert_eq!(q(&critic), q(&copy));
    }

    #[test]
    fn gradients_reach_every_parameter() {
        let net = AgmarlNet::new(&Hyper::default(), 1).unwrap();
        let obs = random_obs(4, 6);
        let (nodes, pod) = tensors(&obs);
        let scores = net.forward(&nodes, &obs.domains, &obs.domain_features, &pod, true);
        let wait = net.wait(&nodes, &pod, true).unwrap();
        let loss = (scores.unwrap().sum_all().unwrap() + wait.sum_all().unwrap()).unwrap();
        let grads = loss.backward().unwrap();
        for var in net.varmap().all_vars() {
            assert!(grads.get(var.as_tensor()).is_some());
        }
        let critic = Critic::new(&Hyper::default(), 1).unwrap();
        let actions = net
            .forward(&nodes, &obs.domains, &obs.domain_features, &pod, true)
            .unwrap();
        let q = critic.q(&nodes, &pod, &ctx(), &actions, 2).unwrap().sum_all().unwrap();
        let grads = q.backward().unwrap();
        for var in critic.varmap().all_vars() {
            assert!(grads.get(var.as_tensor()).is_some());
        }
        // through the scores Q reaches every actor parameter but the wait head's
        for (name, var) in net.varmap().data().lock().unwrap().iter() {
            assert_eq!(
                grads.get(var.as_tensor()).is_some(),
                !name.starts_with("actor.wait"),
                "{name}"
            );
        }
    }
}
