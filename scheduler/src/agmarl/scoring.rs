//! The actor's decision path: the scores of one pod on the candidate nodes,
//! with the work per decision proportional to what changed.
//!
//! The actor ([`crate::agmarl::network`]) is `h_i = relu(W_root z_i +
//! W_rel (S − z_i)/(N−1) + W_dom (S_g − z_i)/(n_g−1) + b + W_pod p +
//! W_din f_g + W_place a_i)` over node encodings `z_i` that depend on the
//! node's state row alone, `S_g` the sum over the node's failure domain and
//! `f_g` its features. A
//! [`Scorer`] remembers, per row of the observation, the state it last saw
//! and `z_i`, `W_root z_i`, `W_rel z_i`, `W_dom z_i`; a decision recomputes
//! those only for rows whose state changed (compared bit for bit), sums the
//! encodings overall and per domain in one pass (O(N·d) additions), applies
//! `W_dom` and `W_din` to the sums and features of the domains its
//! candidates are in (O(d²) each),
//! and evaluates the pod-dependent rest for the candidates only (O(d)
//! each). A remembered row is used only when its state
//! is bit-identical, and every quantity is computed by the same arithmetic
//! in the same order whether remembered or fresh, so a scorer with a memory
//! returns exactly (bit for bit) what a fresh one returns.
//!
//! Plain `f32` arrays rather than tensors: at these sizes (vectors of 16–64
//! numbers) a tensor library's per-operation dispatch costs more than the
//! arithmetic. Dot products keep eight partial sums, a fixed order that the
//! compiler can map onto vector registers.

use crate::agmarl::error::AgmarlError;
use crate::agmarl::features::{
    DOMAIN_FEATURES, NODE_FEATURES, Observation, PLACEMENT_FEATURES, POD_FEATURES, STATE_FEATURES,
};
use crate::agmarl::network::{Hyper, OBJECTIVES};

/// A dense layer `y = W x + b` (`W` is `out × in`, row-major).
#[derive(Debug, Clone, PartialEq)]
struct Dense {
    input: usize,
    output: usize,
    weight: Vec<f32>,
    /// empty when the layer has no bias
    bias: Vec<f32>,
}

impl Dense {
    fn new(
        name: &'static str,
        input: usize,
        output: usize,
        weight: Vec<f32>,
        bias: Vec<f32>,
    ) -> Result<Dense, AgmarlError> {
        if weight.len() != input * output || !(bias.is_empty() || bias.len() == output) {
            return Err(AgmarlError::Shape {
                what: name,
                expected: vec![output, input],
                got: vec![weight.len(), bias.len()],
            });
        }
        Ok(Dense {
            input,
            output,
            weight,
            bias,
        })
    }

    /// `out = W x (+ b)`, optionally through relu.
    fn apply(&self, x: &[f32], out: &mut [f32], relu: bool) {
        for (o, y) in out.iter_mut().enumerate().take(self.output) {
            let mut v = dot(&self.weight[o * self.input..(o + 1) * self.input], x);
            if let Some(b) = self.bias.get(o) {
                v += b;
            }
            *y = if relu { v.max(0.0) } else { v };
        }
    }
}

/// `Σ a_k b_k` with eight partial sums in a fixed order.
fn dot(a: &[f32], b: &[f32]) -> f32 {
    const LANES: usize = 8;
    let mut acc = [0.0f32; LANES];
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let a_chunks = a.chunks_exact(LANES);
    let b_chunks = b.chunks_exact(LANES);
    let mut tail = 0.0f32;
    for (x, y) in a_chunks.remainder().iter().zip(b_chunks.remainder()) {
        tail += x * y;
    }
    for (x, y) in a_chunks.zip(b_chunks) {
        for k in 0..LANES {
            acc[k] += x[k] * y[k];
        }
    }
    let half = [acc[0] + acc[4], acc[1] + acc[5], acc[2] + acc[6], acc[3] + acc[7]];
    (half[0] + half[2]) + (half[1] + half[3]) + tail
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// The actor's weights as plain arrays ([`crate::AgmarlNet::weights`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Weights {
    embed_dim: usize,
    hidden: usize,
    encoder: [Dense; 2],
    /// `W_root`, no bias
    root: Dense,
    /// `W_rel`, no bias (its bias `b` is in `shift_bias`)
    rel: Dense,
    /// `W_dom`, no bias
    domain: Dense,
    /// `W_din`, no bias
    domain_input: Dense,
    /// `b`, the graph layer's bias
    shift_bias: Vec<f32>,
    /// `W_pod`, no bias
    pod: Dense,
    /// `W_place` by column: `place[c * hidden + j]` weighs placement column `c`
    place: Vec<f32>,
    out: Dense,
    /// the wait head, over `[S/N; p]`
    wait: Dense,
}

impl Weights {
    /// Weights of `hyper`'s shapes, PyTorch layout (`[weight, bias]` pairs).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        hyper: &Hyper,
        [enc1_w, enc1_b]: [Vec<f32>; 2],
        [enc2_w, enc2_b]: [Vec<f32>; 2],
        root: Vec<f32>,
        [rel_w, rel_b]: [Vec<f32>; 2],
        domain: Vec<f32>,
        domain_input: Vec<f32>,
        pod: Vec<f32>,
        place: Vec<f32>,
        [out_w, out_b]: [Vec<f32>; 2],
        [wait_w, wait_b]: [Vec<f32>; 2],
    ) -> Result<Weights, AgmarlError> {
        let (e, h) = (hyper.embed_dim, hyper.actor_hidden);
        if rel_b.len() != h || place.len() != h * PLACEMENT_FEATURES {
            return Err(AgmarlError::Shape {
                what: "graph layer bias or placement weights",
                expected: vec![h, h * PLACEMENT_FEATURES],
                got: vec![rel_b.len(), place.len()],
            });
        }
        // W_place is out × in (h × 2): store it by column
        let mut by_column = vec![0.0; h * PLACEMENT_FEATURES];
        for j in 0..h {
            for c in 0..PLACEMENT_FEATURES {
                by_column[c * h + j] = place[j * PLACEMENT_FEATURES + c];
            }
        }
        Ok(Weights {
            embed_dim: e,
            hidden: h,
            encoder: [
                Dense::new("encoder.fc1", STATE_FEATURES, hyper.encoder_hidden, enc1_w, enc1_b)?,
                Dense::new("encoder.fc2", hyper.encoder_hidden, e, enc2_w, enc2_b)?,
            ],
            root: Dense::new("gnn.lin_root", e, h, root, Vec::new())?,
            rel: Dense::new("gnn.lin_rel", e, h, rel_w, Vec::new())?,
            domain: Dense::new("gnn.lin_domain", e, h, domain, Vec::new())?,
            domain_input: Dense::new("gnn.lin_domain_input", DOMAIN_FEATURES, h, domain_input, Vec::new())?,
            shift_bias: rel_b,
            pod: Dense::new("actor.pod", POD_FEATURES, h, pod, Vec::new())?,
            place: by_column,
            out: Dense::new("actor.out", h, OBJECTIVES, out_w, out_b)?,
            wait: Dense::new("actor.wait", e + POD_FEATURES, 1, wait_w, wait_b)?,
        })
    }
}

/// The pod-dependent rest of the actor for one decision: the hidden layer
/// from a node's remembered products, and the output layer, fused so that
/// the hidden vector never leaves registers, eight lanes at a time.
struct Head<'a> {
    /// `b + W_pod p`
    shift: &'a [f32],
    /// `W_rel S`
    rel_sum: &'a [f32],
    /// the two columns of `W_place`
    place: [&'a [f32]; 2],
    out: &'a Dense,
    /// `1/(N−1)` with the GNN, None without
    k: Option<f32>,
}

/// One candidate's remembered products and its domain's.
struct Row<'a> {
    /// `W_root z_i`
    root: &'a [f32],
    /// `W_rel z_i`
    rel: &'a [f32],
    /// `W_dom z_i`
    dom: &'a [f32],
    /// `W_dom S_g` of its domain
    dom_sum: &'a [f32],
    /// `W_din f_g` of its domain
    dom_in: &'a [f32],
    /// `1/(n_g−1)`, 0 alone in its domain
    dom_k: f32,
}

impl Head<'_> {
    fn score(&self, row: &Row<'_>, placement: [f32; 2]) -> [f32; 3] {
        match self.k {
            Some(k) => self.score_with::<true>(row, placement, k),
            None => self.score_with::<false>(row, placement, 0.0),
        }
    }

    /// One candidate's scores; `GNN` adds the global embedding's term. The
    /// eight-lane blocks are fixed-size arrays so that the compiler sees
    /// no bounds and keeps each lane in a vector register.
    fn score_with<const GNN: bool>(&self, row: &Row<'_>, [a0, a1]: [f32; 2], k: f32) -> [f32; 3] {
        const LANES: usize = 8;
        let h = self.shift.len();
        let w = &self.out.weight;
        let (root, rel, shift, rel_sum) = (&row.root[..h], &row.rel[..h], self.shift, &self.rel_sum[..h]);
        let (dom, dom_sum, dom_in, kd) = (&row.dom[..h], &row.dom_sum[..h], &row.dom_in[..h], row.dom_k);
        let (p0, p1) = (&self.place[0][..h], &self.place[1][..h]);
        let (w0, w1, w2) = (&w[..h], &w[h..2 * h], &w[2 * h..3 * h]);
        let hidden = |j: usize| {
            let mut v = root[j] + shift[j] + p0[j] * a0 + p1[j] * a1;
            if GNN {
                v += (rel_sum[j] - rel[j]) * k;
                v += (dom_sum[j] - dom[j]) * kd + dom_in[j];
            }
            if v > 0.0 { v } else { 0.0 }
        };
        let block = |s: &[f32], at: usize| -> [f32; LANES] {
            let mut b = [0.0; LANES];
            b.copy_from_slice(&s[at..at + LANES]);
            b
        };
        let mut acc = [[0.0f32; LANES]; OBJECTIVES];
        let full = h - h % LANES;
        for at in (0..full).step_by(LANES) {
            let (r, sh, q0, q1) = (block(root, at), block(shift, at), block(p0, at), block(p1, at));
            let (rs, rl) = (block(rel_sum, at), block(rel, at));
            let (ds, dl, di) = (block(dom_sum, at), block(dom, at), block(dom_in, at));
            let (x0, x1, x2) = (block(w0, at), block(w1, at), block(w2, at));
            for l in 0..LANES {
                let mut v = r[l] + sh[l] + q0[l] * a0 + q1[l] * a1;
                if GNN {
                    v += (rs[l] - rl[l]) * k;
                    v += (ds[l] - dl[l]) * kd + di[l];
                }
                let v = if v > 0.0 { v } else { 0.0 };
                acc[0][l] += x0[l] * v;
                acc[1][l] += x1[l] * v;
                acc[2][l] += x2[l] * v;
            }
        }
        let mut y = [0.0f32; OBJECTIVES];
        for (o, (y, acc)) in y.iter_mut().zip(&acc).enumerate() {
            let half = [acc[0] + acc[4], acc[1] + acc[5], acc[2] + acc[6], acc[3] + acc[7]];
            let mut tail = 0.0f32;
            for j in full..h {
                tail += w[o * h + j] * hidden(j);
            }
            *y = (half[0] + half[2]) + (half[1] + half[3]) + tail + self.out.bias.get(o).copied().unwrap_or(0.0);
        }
        y.map(sigmoid)
    }
}

/// How much of the last decision was remembered (for benchmarks and tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Reuse {
    /// rows whose encoding was recomputed
    pub recomputed: usize,
    /// rows whose encoding was remembered
    pub remembered: usize,
}

/// The actor's decision path with a memory of node encodings (see the
/// module docs). One per scheduler: it is only as good as the last
/// observation it saw, and never wrong whatever it saw.
#[derive(Debug, Clone)]
pub struct Scorer {
    w: Weights,
    /// remembered state rows (`rows × STATE_FEATURES`)
    states: Vec<f32>,
    /// `z_i` per remembered row (`rows × embed_dim`)
    z: Vec<f32>,
    /// `W_root z_i` per remembered row (`rows × hidden`)
    root: Vec<f32>,
    /// `W_rel z_i` per remembered row (`rows × hidden`)
    rel: Vec<f32>,
    /// `W_dom z_i` per remembered row (`rows × hidden`)
    dom: Vec<f32>,
    /// number of remembered rows
    rows: usize,
    // scratch
    hidden1: Vec<f32>,
    sum: Vec<f32>,
    rel_sum: Vec<f32>,
    /// per domain: `S_g` (`domains × embed_dim`)
    dom_sum: Vec<f32>,
    /// per domain: its node count
    dom_nodes: Vec<u32>,
    /// per domain: `W_dom S_g` once a candidate needed it (`domains × hidden`)
    dom_rel: Vec<f32>,
    /// per domain: `W_din f_g` once a candidate needed it (`domains × hidden`)
    dom_in: Vec<f32>,
    dom_ready: Vec<bool>,
    shift: Vec<f32>,
    /// `[S/N; p]` of the wait head
    wait_input: Vec<f32>,
    /// `sum` holds `S` of the observation last scored with the GNN
    summed: bool,
    reuse: Reuse,
}

impl Scorer {
    pub fn new(w: Weights) -> Scorer {
        let (e, h) = (w.embed_dim, w.hidden);
        Scorer {
            hidden1: vec![0.0; w.encoder[0].output],
            sum: vec![0.0; e],
            rel_sum: vec![0.0; h],
            shift: vec![0.0; h],
            wait_input: vec![0.0; e + POD_FEATURES],
            summed: false,
            w,
            states: Vec::new(),
            z: Vec::new(),
            root: Vec::new(),
            rel: Vec::new(),
            dom: Vec::new(),
            dom_sum: Vec::new(),
            dom_nodes: Vec::new(),
            dom_rel: Vec::new(),
            dom_in: Vec::new(),
            dom_ready: Vec::new(),
            rows: 0,
            reuse: Reuse::default(),
        }
    }

    /// What the last call recomputed and remembered.
    pub fn reuse(&self) -> Reuse {
        self.reuse
    }

    /// Forgets every remembered row.
    pub fn clear(&mut self) {
        self.rows = 0;
    }

    /// The scores of the nodes `rows` of `obs` (in that order) into `out`
    /// (cleared first). `use_gnn = false` drops the global embedding.
    pub fn scores_into(
        &mut self,
        obs: &Observation,
        rows: &[usize],
        use_gnn: bool,
        out: &mut Vec<[f32; 3]>,
    ) -> Result<(), AgmarlError> {
        let n = obs.n;
        if obs.node_features.len() != n * NODE_FEATURES
            || obs.pod_features.len() != POD_FEATURES
            || obs.domains.len() != n
            || obs.domain_features.len() != obs.domain_count * DOMAIN_FEATURES
        {
            return Err(AgmarlError::Shape {
                what: "observation",
                expected: vec![n * NODE_FEATURES, POD_FEATURES, n, obs.domain_count * DOMAIN_FEATURES],
                got: vec![
                    obs.node_features.len(),
                    obs.pod_features.len(),
                    obs.domains.len(),
                    obs.domain_features.len(),
                ],
            });
        }
        if let Some(&bad) = obs.domains.iter().find(|&&d| d as usize >= obs.domain_count) {
            return Err(AgmarlError::Index {
                what: "domain",
                index: bad as usize,
                n: obs.domain_count,
            });
        }
        if let Some(&bad) = rows.iter().find(|&&r| r >= n) {
            return Err(AgmarlError::Index {
                what: "row",
                index: bad,
                n,
            });
        }
        out.clear();
        self.summed = false;
        if rows.is_empty() {
            return Ok(());
        }
        self.refresh(obs);
        let (e, h) = (self.w.embed_dim, self.w.hidden);

        // the pod's share of the pre-activation, once per decision
        self.w.pod.apply(&obs.pod_features, &mut self.shift, false);
        for (s, b) in self.shift.iter_mut().zip(&self.w.shift_bias) {
            *s += b;
        }
        // a single node has no other node (m = d = 0, k = 0) but its domain's features
        let gnn = use_gnn;
        let k = if gnn && n > 1 { 1.0 / (n - 1) as f32 } else { 0.0 };
        if gnn {
            let domains = obs.domain_count;
            self.sum.fill(0.0);
            self.dom_sum.clear();
            self.dom_sum.resize(domains * e, 0.0);
            self.dom_nodes.clear();
            self.dom_nodes.resize(domains, 0);
            self.dom_ready.clear();
            self.dom_ready.resize(domains, false);
            if self.dom_rel.len() < domains * h {
                self.dom_rel.resize(domains * h, 0.0);
                self.dom_in.resize(domains * h, 0.0);
            }
            for (z, &g) in self.z[..n * e].chunks_exact(e).zip(&obs.domains) {
                let g = g as usize;
                self.dom_nodes[g] += 1;
                let dom = &mut self.dom_sum[g * e..(g + 1) * e];
                for ((s, d), x) in self.sum.iter_mut().zip(dom).zip(z) {
                    *s += x;
                    *d += x;
                }
            }
            self.summed = true;
            self.w.rel.apply(&self.sum, &mut self.rel_sum, false);
            // W_dom S_g and W_din f_g only for the domains of candidates
            // (W_dom S_g only where the candidate has company)
            for &r in rows {
                let g = obs.domains[r] as usize;
                if self.dom_ready[g] {
                    continue;
                }
                self.dom_ready[g] = true;
                self.w.domain_input.apply(
                    &obs.domain_features[g * DOMAIN_FEATURES..(g + 1) * DOMAIN_FEATURES],
                    &mut self.dom_in[g * h..(g + 1) * h],
                    false,
                );
                if self.dom_nodes[g] > 1 {
                    self.w.domain.apply(
                        &self.dom_sum[g * e..(g + 1) * e],
                        &mut self.dom_rel[g * h..(g + 1) * h],
                        false,
                    );
                }
            }
        }

        let (place0, place1) = self.w.place.split_at(h);
        let head = Head {
            shift: &self.shift,
            rel_sum: &self.rel_sum,
            place: [place0, place1],
            out: &self.w.out,
            k: if gnn { Some(k) } else { None },
        };
        out.reserve(rows.len());
        for &r in rows {
            let row = &obs.node_features[r * NODE_FEATURES..(r + 1) * NODE_FEATURES];
            let placement = [row[STATE_FEATURES], row[STATE_FEATURES + 1]];
            let g = obs.domains[r] as usize;
            let alone = !gnn || self.dom_nodes[g] <= 1;
            let own = &self.dom[r * h..(r + 1) * h];
            let remembered = Row {
                root: &self.root[r * h..(r + 1) * h],
                rel: &self.rel[r * h..(r + 1) * h],
                dom: own,
                // alone, the domain term is (W z_i − W z_i)·0: own products stand in
                dom_sum: if alone { own } else { &self.dom_rel[g * h..(g + 1) * h] },
                dom_k: if alone {
                    0.0
                } else {
                    1.0 / (self.dom_nodes[g] - 1) as f32
                },
                // read only with the GNN, where every candidate's domain has it
                dom_in: if gnn { &self.dom_in[g * h..(g + 1) * h] } else { own },
            };
            out.push(head.score(&remembered, placement));
        }
        Ok(())
    }

    /// The wait head ([`crate::agmarl::network`]) for `obs`'s pod: the
    /// fault tolerance it is predicted to realise if declined now. Reuses
    /// the encodings' sum of the [`Scorer::scores_into`] call just made on
    /// `obs` (an O(d²) product); without one, sums them first.
    pub fn wait(&mut self, obs: &Observation, use_gnn: bool) -> Result<f32, AgmarlError> {
        if obs.pod_features.len() != POD_FEATURES || obs.node_features.len() != obs.n * NODE_FEATURES {
            return Err(AgmarlError::Shape {
                what: "observation",
                expected: vec![obs.n * NODE_FEATURES, POD_FEATURES],
                got: vec![obs.node_features.len(), obs.pod_features.len()],
            });
        }
        let e = self.w.embed_dim;
        if use_gnn && obs.n > 0 && !(self.summed && self.rows == obs.n) {
            self.refresh(obs);
            self.sum.fill(0.0);
            for z in self.z[..obs.n * e].chunks_exact(e) {
                for (s, x) in self.sum.iter_mut().zip(z) {
                    *s += x;
                }
            }
            self.summed = true;
        }
        let (mean, pod) = self.wait_input.split_at_mut(e);
        pod.copy_from_slice(&obs.pod_features);
        if use_gnn && obs.n > 0 {
            let inv = 1.0 / obs.n as f32;
            for (m, s) in mean.iter_mut().zip(&self.sum) {
                *m = s * inv;
            }
        } else {
            mean.fill(0.0);
        }
        let mut y = [0.0f32];
        self.w.wait.apply(&self.wait_input, &mut y, false);
        Ok(sigmoid(y[0]))
    }

    /// Brings the remembered rows in line with `obs`'s states.
    fn refresh(&mut self, obs: &Observation) {
        let n = obs.n;
        let (e, h) = (self.w.embed_dim, self.w.hidden);
        if self.states.len() < n * STATE_FEATURES {
            self.states.resize(n * STATE_FEATURES, 0.0);
            self.z.resize(n * e, 0.0);
            self.root.resize(n * h, 0.0);
            self.rel.resize(n * h, 0.0);
            self.dom.resize(n * h, 0.0);
        }
        let mut reuse = Reuse::default();
        for i in 0..n {
            let state = &obs.node_features[i * NODE_FEATURES..i * NODE_FEATURES + STATE_FEATURES];
            let known = &mut self.states[i * STATE_FEATURES..(i + 1) * STATE_FEATURES];
            let same = i < self.rows && known.iter().zip(state).all(|(a, b)| a.to_bits() == b.to_bits());
            if same {
                reuse.remembered += 1;
                continue;
            }
            reuse.recomputed += 1;
            known.copy_from_slice(state);
            let z = &mut self.z[i * e..(i + 1) * e];
            self.w.encoder[0].apply(state, &mut self.hidden1, true);
            self.w.encoder[1].apply(&self.hidden1, z, true);
            self.w.root.apply(z, &mut self.root[i * h..(i + 1) * h], false);
            self.w.rel.apply(z, &mut self.rel[i * h..(i + 1) * h], false);
            self.w.domain.apply(z, &mut self.dom[i * h..(i + 1) * h], false);
        }
        self.rows = n;
        self.reuse = reuse;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::network::AgmarlNet;
    use rand::Rng;
    use schedlab_core::rng::stream;

    fn random_obs(n: usize, rng: &mut schedlab_core::rng::SimRng) -> Observation {
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

    /// A long random walk of cluster changes (a node's state edited, nodes
    /// added and removed, the pod and the placement columns redrawn, rows
    /// swapped, candidates subsets): the remembering scorer must agree bit
    /// for bit with a fresh one at every step, and remember what did not
    /// change.
    #[test]
    fn remembering_scores_exactly_like_a_full_recomputation() {
        let net = AgmarlNet::new(&Hyper::default(), 11).unwrap();
        let mut rng = stream(5, &[23]);
        let mut obs = random_obs(40, &mut rng);
        let mut scorer = Scorer::new(net.weights().unwrap());
        let (mut got, mut want) = (Vec::new(), Vec::new());
        let mut refreshed_last_step = false;
        for step in 0..2_000 {
            // how many rows may need a new encoding after this step's change
            // (None: a removal shifts every later row)
            let mut may_change = Some(0);
            match rng.random_range(0..8) {
                0 => {
                    may_change = Some(1);
                    let i = rng.random_range(0..obs.n);
                    let c = rng.random_range(0..STATE_FEATURES);
                    obs.node_features[i * NODE_FEATURES + c] = rng.random();
                }
                1 if obs.n < 80 => {
                    may_change = Some(1);
                    obs.n += 1;
                    obs.node_features
                        .extend((0..NODE_FEATURES).map(|_| rng.random::<f32>()));
                    let d = rng.random_range(0..=obs.domain_count);
                    if d == obs.domain_count {
                        obs.domain_count += 1;
                        obs.domain_features
                            .extend((0..DOMAIN_FEATURES).map(|_| rng.random::<f32>()));
                    }
                    obs.domains.push(d as u32);
                }
                2 if obs.n > 1 => {
                    may_change = None;
                    let i = rng.random_range(0..obs.n);
                    obs.node_features.drain(i * NODE_FEATURES..(i + 1) * NODE_FEATURES);
                    obs.domains.remove(i);
                    obs.n -= 1;
                }
                3 => {
                    obs.pod_features = (0..POD_FEATURES).map(|_| rng.random::<f32>()).collect();
                    for i in 0..obs.n {
                        for c in STATE_FEATURES..NODE_FEATURES {
                            obs.node_features[i * NODE_FEATURES + c] = rng.random();
                        }
                    }
                }
                4 if obs.n > 1 => {
                    may_change = Some(2);
                    let (a, b) = (rng.random_range(0..obs.n), rng.random_range(0..obs.n));
                    for c in 0..NODE_FEATURES {
                        obs.node_features.swap(a * NODE_FEATURES + c, b * NODE_FEATURES + c);
                    }
                    obs.domains.swap(a, b);
                }
                5 => {
                    // a node moves to another domain: no encoding changes
                    let i = rng.random_range(0..obs.n);
                    obs.domains[i] = rng.random_range(0..obs.domain_count) as u32;
                }
                6 => {
                    // a failure in a domain: no encoding changes either
                    let g = rng.random_range(0..obs.domain_features.len());
                    obs.domain_features[g] = rng.random();
                }
                _ => {}
            }
            let rows: Vec<usize> = (0..obs.n).filter(|_| rng.random_bool(0.7)).collect();
            let use_gnn = step % 7 != 0;
            scorer.scores_into(&obs, &rows, use_gnn, &mut got).unwrap();
            let reuse = scorer.reuse();
            if !rows.is_empty() {
                assert_eq!(reuse.recomputed + reuse.remembered, obs.n, "step {step}");
                if let (true, Some(bound)) = (refreshed_last_step, may_change) {
                    assert!(reuse.recomputed <= bound, "step {step}: {reuse:?}, at most {bound}");
                }
            }
            refreshed_last_step = !rows.is_empty();
            Scorer::new(net.weights().unwrap())
                .scores_into(&obs, &rows, use_gnn, &mut want)
                .unwrap();
            let bits = |v: &[[f32; 3]]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want), "step {step}");
        }
    }

    #[test]
    fn a_decision_recomputes_only_the_rows_that_changed() {
        let net = AgmarlNet::new(&Hyper::default(), 2).unwrap();
        let mut rng = stream(6, &[1]);
        let mut obs = random_obs(50, &mut rng);
        let mut scorer = Scorer::new(net.weights().unwrap());
        let mut out = Vec::new();
        let all: Vec<usize> = (0..50).collect();
        scorer.scores_into(&obs, &all, true, &mut out).unwrap();
        assert_eq!(
            scorer.reuse(),
            Reuse {
                recomputed: 50,
                remembered: 0
            }
        );
        // a new pod: only the placement columns move
        obs.pod_features[0] = 0.123;
        obs.node_features[3 * NODE_FEATURES + STATE_FEATURES] = 0.9;
        scorer.scores_into(&obs, &all, true, &mut out).unwrap();
        assert_eq!(
            scorer.reuse(),
            Reuse {
                recomputed: 0,
                remembered: 50
            }
        );
        obs.node_features[7 * NODE_FEATURES] = 0.5;
        scorer.scores_into(&obs, &all[..3], true, &mut out).unwrap();
        assert_eq!(
            scorer.reuse(),
            Reuse {
                recomputed: 1,
                remembered: 49
            }
        );
        assert_eq!(out.len(), 3);
        scorer.clear();
        scorer.scores_into(&obs, &all, true, &mut out).unwrap();
        assert_eq!(scorer.reuse().recomputed, 50);
    }

    #[test]
    fn dot_is_the_sum_of_products() {
        for len in [0, 1, 7, 8, 9, 16, 33] {
            let a: Vec<f32> = (0..len).map(|i| i as f32 * 0.5).collect();
            let b: Vec<f32> = (0..len).map(|i| 1.0 - i as f32 * 0.25).collect();
            let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-4, "len {len}");
        }
    }

    #[test]
    fn misshaped_weights_are_errors() {
        let bad = Dense::new("x", 3, 2, vec![0.0; 5], Vec::new());
        assert!(matches!(bad, Err(AgmarlError::Shape { .. })));
        let bad_bias = Dense::new("x", 3, 2, vec![0.0; 6], vec![0.0; 3]);
        assert!(matches!(bad_bias, Err(AgmarlError::Shape { .. })));
        assert!(Dense::new("x", 3, 2, vec![0.0; 6], vec![0.0; 2]).is_ok());
    }
}
