//! The DRS Q-network: one hidden layer over the concatenated state of every
//! node and the pending pod, one Q-value per node,
//! `q = W₂ relu(W₁ x + b₁) + b₂`, as DRS (arXiv 2309.12592) builds it (for
//! its 4 nodes, 30 → 50 → 4). The input is [`input_dim`]`(N)` numbers and the
//! output N, so the network exists for one cluster size only.
//!
//! Weights are stored PyTorch-style (`weight` is `out × in`) and initialised
//! as `torch.nn.Linear` does, uniform in ±1/√fan_in, from our own seeded
//! stream. Training runs on candle's variables ([`QNet`]); a decision runs
//! on a plain copy of them ([`QWeights`]), which is a few loops over
//! contiguous rows and needs no tensor allocation per pod.

use crate::agmarl::features::{NODE_FEATURES, POD_FEATURES};
use crate::drs::error::DrsError;
use candle_core::{Device, Tensor, Var};
use rand::Rng;
use schedlab_core::rng::{purpose, stream};

/// DRS's hidden width.
pub const DEFAULT_HIDDEN: usize = 50;

/// Largest cluster a network is built for: far above what trains on this
/// machine, low enough that a damaged sidecar cannot ask for gigabytes.
pub const MAX_NODES: usize = 20_000;

/// Largest hidden width.
pub const MAX_HIDDEN: usize = 4096;

/// Stream key of the initialiser (under `purpose::TRAINING`).
const INIT_STREAM: u64 = 0x0064_7273_5f71; // "drs_q"

/// The tensors, in the order they are built and stored.
pub const TENSOR_NAMES: [&str; 4] = ["q.fc1.weight", "q.fc1.bias", "q.fc2.weight", "q.fc2.bias"];

/// The input width for `nodes` nodes: every node's feature row, in slot
/// order, then the pod's features.
pub fn input_dim(nodes: usize) -> usize {
    nodes * NODE_FEATURES + POD_FEATURES
}

/// The shapes of [`TENSOR_NAMES`] for `nodes` and `hidden`.
pub fn shapes(nodes: usize, hidden: usize) -> [Vec<usize>; 4] {
    [
        vec![hidden, input_dim(nodes)],
        vec![hidden],
        vec![nodes, hidden],
        vec![nodes],
    ]
}

/// Rejects sizes a network cannot be built with.
pub fn check_sizes(nodes: usize, hidden: usize) -> Result<(), DrsError> {
    if nodes == 0 || nodes > MAX_NODES {
        return Err(DrsError::Size(format!("nodes = {nodes}: must be in 1..={MAX_NODES}")));
    }
    if hidden == 0 || hidden > MAX_HIDDEN {
        return Err(DrsError::Size(format!(
            "hidden = {hidden}: must be in 1..={MAX_HIDDEN}"
        )));
    }
    Ok(())
}

/// The Q-network as candle variables, for training.
#[derive(Debug)]
pub struct QNet {
    nodes: usize,
    hidden: usize,
    /// the variables of [`TENSOR_NAMES`], in that order
    vars: Vec<Var>,
}

impl QNet {
    /// A network for `nodes` nodes with `hidden` units, initialised from `seed`.
    pub fn new(nodes: usize, hidden: usize, seed: u64) -> Result<QNet, DrsError> {
        check_sizes(nodes, hidden)?;
        let mut rng = stream(seed, &[purpose::TRAINING, INIT_STREAM]);
        let fan_ins = [input_dim(nodes), input_dim(nodes), hidden, hidden];
        let values: Vec<Vec<f32>> = shapes(nodes, hidden)
            .iter()
            .zip(fan_ins)
            .map(|(shape, fan_in)| {
                let bound = 1.0 / (fan_in as f32).sqrt();
                (0..shape.iter().product::<usize>())
                    .map(|_| rng.random_range(-bound..=bound))
                    .collect()
            })
            .collect();
        QNet::from_values(nodes, hidden, values)
    }

    /// A network from the values of [`TENSOR_NAMES`], each of its shape.
    pub fn from_values(nodes: usize, hidden: usize, values: Vec<Vec<f32>>) -> Result<QNet, DrsError> {
        check_sizes(nodes, hidden)?;
        let mut vars = Vec::with_capacity(TENSOR_NAMES.len());
        for ((name, shape), v) in TENSOR_NAMES.iter().zip(shapes(nodes, hidden)).zip(values) {
            if v.len() != shape.iter().product::<usize>() {
                return Err(DrsError::Size(format!(
                    "{name}: {} values for shape {shape:?}",
                    v.len()
                )));
            }
            vars.push(Var::from_tensor(&Tensor::from_vec(v, shape, &Device::Cpu)?)?);
        }
        Ok(QNet { nodes, hidden, vars })
    }

    pub fn nodes(&self) -> usize {
        self.nodes
    }

    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The number of trained parameters.
    pub fn parameters(&self) -> usize {
        shapes(self.nodes, self.hidden)
            .iter()
            .map(|s| s.iter().product::<usize>())
            .sum()
    }

    /// The variables, for an optimiser.
    pub fn vars(&self) -> Vec<Var> {
        self.vars.clone()
    }

    /// Q-values of a batch of states (`b × input_dim` → `b × nodes`).
    pub fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let [w1, b1, w2, b2] = [0, 1, 2, 3].map(|i| self.vars[i].as_tensor());
        let h = x.matmul(&w1.t()?)?.broadcast_add(b1)?.relu()?;
        h.matmul(&w2.t()?)?.broadcast_add(b2)
    }

    /// Every tensor's values, in [`TENSOR_NAMES`] order.
    pub fn values(&self) -> Result<Vec<Vec<f32>>, DrsError> {
        self.vars
            .iter()
            .map(|v| Ok(v.as_tensor().flatten_all()?.to_vec1::<f32>()?))
            .collect()
    }

    /// Sets this network's weights to `other`'s (DQN's target update).
    pub fn copy_from(&self, other: &QNet) -> Result<(), DrsError> {
        if (self.nodes, self.hidden) != (other.nodes, other.hidden) {
            return Err(DrsError::Size(format!(
                "copying a {}×{} network into a {}×{} one",
                other.nodes, other.hidden, self.nodes, self.hidden
            )));
        }
        for (to, from) in self.vars.iter().zip(&other.vars) {
            to.set(&from.as_tensor().copy()?)?;
        }
        Ok(())
    }

    /// A plain copy of the weights, for deciding.
    pub fn weights(&self) -> Result<QWeights, DrsError> {
        let mut values = self.values()?.into_iter();
        let mut next = || values.next().unwrap_or_default();
        Ok(QWeights {
            nodes: self.nodes,
            hidden: self.hidden,
            w1: next(),
            b1: next(),
            w2: next(),
            b2: next(),
            h: vec![0.0; self.hidden],
        })
    }
}

/// The Q-network's weights as plain rows, and the scratch of one decision.
#[derive(Debug, Clone)]
pub struct QWeights {
    nodes: usize,
    hidden: usize,
    w1: Vec<f32>,
    b1: Vec<f32>,
    w2: Vec<f32>,
    b2: Vec<f32>,
    h: Vec<f32>,
}

impl QWeights {
    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// The Q-value of every node for `state` (`input_dim(nodes)` numbers)
    /// into `q`; only the nodes `wanted` says are computed in the output
    /// layer (the others are left NaN), since an infeasible node's value is
    /// never read.
    pub fn q_values_into(&mut self, state: &[f32], wanted: &[usize], q: &mut Vec<f32>) {
        let input = input_dim(self.nodes);
        debug_assert_eq!(state.len(), input);
        for (j, h) in self.h.iter_mut().enumerate() {
            let row = &self.w1[j * input..(j + 1) * input];
            *h = (dot(row, state) + self.b1[j]).max(0.0);
        }
        q.clear();
        q.resize(self.nodes, f32::NAN);
        for &i in wanted {
            let row = &self.w2[i * self.hidden..(i + 1) * self.hidden];
            q[i] = dot(row, &self.h) + self.b2[i];
        }
    }
}

/// `a · b` in eight independent lanes, so the compiler can keep them in
/// vector registers (a single running sum is a dependency chain it may not
/// reorder).
fn dot(a: &[f32], b: &[f32]) -> f32 {
    let mut lanes = [0.0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            lanes[k] += x[k] * y[k];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    lanes.iter().sum::<f32>() + tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_parameter_count() {
        let net = QNet::new(4, 50, 1).unwrap();
        // DRS's 4-node network had 30 inputs; ours has 22 per node and 10 for the pod
        assert_eq!(input_dim(4), 4 * 22 + 10);
        assert_eq!(net.parameters(), 50 * 98 + 50 + 4 * 50 + 4);
        assert!(check_sizes(0, 50).is_err());
        assert!(check_sizes(4, 0).is_err());
        assert!(QNet::new(MAX_NODES + 1, 50, 1).is_err());
    }

    #[test]
    fn the_plain_copy_computes_what_candle_computes() {
        let net = QNet::new(6, 16, 7).unwrap();
        let mut rng = stream(3, &[purpose::TRAINING]);
        let state: Vec<f32> = (0..input_dim(6)).map(|_| rng.random_range(-1.0..1.0)).collect();
        let x = Tensor::from_vec(state.clone(), (1, input_dim(6)), &Device::Cpu).unwrap();
        let want = net
            .forward(&x)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap();
        let mut weights = net.weights().unwrap();
        let mut q = Vec::new();
        weights.q_values_into(&state, &[0, 1, 2, 3, 4, 5], &mut q);
        for (a, b) in q.iter().zip(&want) {
            assert!((a - b).abs() < 1e-5, "{q:?} vs {want:?}");
        }
        // the nodes not asked for are not computed
        weights.q_values_into(&state, &[2], &mut q);
        assert!((q[2] - want[2]).abs() < 1e-5);
        assert!(q[0].is_nan() && q[5].is_nan());
    }

    #[test]
    fn seeded_initialisation_and_copies() {
        let a = QNet::new(3, 8, 11).unwrap();
        let b = QNet::new(3, 8, 11).unwrap();
        let c = QNet::new(3, 8, 12).unwrap();
        assert_eq!(a.values().unwrap(), b.values().unwrap());
        assert_ne!(a.values().unwrap(), c.values().unwrap());
        c.copy_from(&a).unwrap();
        assert_eq!(a.values().unwrap(), c.values().unwrap());
        // a copy is a copy, not a shared buffer
        let zeros: Vec<Vec<f32>> = shapes(3, 8).iter().map(|s| vec![0.0; s.iter().product()]).collect();
        let z = QNet::from_values(3, 8, zeros).unwrap();
        a.copy_from(&z).unwrap();
        assert_ne!(a.values().unwrap(), c.values().unwrap());
        assert!(QNet::new(4, 8, 1).unwrap().copy_from(&c).is_err());
    }
}
