//! DRS checkpoints: the Q-network's weights as safetensors (tensors of
//! [`super::network::TENSOR_NAMES`], f32) and a JSON sidecar beside them
//! (`foo.safetensors` goes with `foo.json`) saying the cluster size the
//! network was built for, its reward and how it was trained. A checkpoint
//! runs only on a cluster of its size ([`DrsMeta::check_cluster`]).

use crate::agmarl::checkpoint::{sidecar_path, weights_digest};
use crate::agmarl::features::FEATURE_SCHEMA_VERSION;
use crate::drs::error::DrsError;
use crate::drs::network::{QNet, TENSOR_NAMES, check_sizes, shapes};
use crate::drs::policy::DrsReward;
use safetensors::{Dtype, SafeTensors};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// The sidecar's format version this build writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Largest weights file read: a network at the largest size this machine
/// trains is a few tens of megabytes.
pub const MAX_WEIGHTS_BYTES: u64 = 512 << 20;

/// Largest sidecar read.
pub const MAX_SIDECAR_BYTES: u64 = 4 << 20;

/// What a DRS checkpoint's sidecar says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DrsMeta {
    /// always "drs": tells the file from an AGMARL checkpoint
    pub kind: String,
    pub format_version: u32,
    /// the node feature schema of its state rows
    pub feature_schema_version: u32,
    pub reward: DrsReward,
    /// the cluster size: the network's output count
    pub nodes: usize,
    pub hidden: usize,
    pub parameters: usize,
    /// SHA-256 of the weights file
    pub weights_sha256: String,
    /// how it was trained (`schedlab train`'s record)
    #[serde(default)]
    pub training: serde_json::Value,
}

impl DrsMeta {
    /// The sidecar of `net` trained for `reward`, before its weights are
    /// written (the digest is filled in by [`save`]).
    pub fn new(net: &QNet, reward: DrsReward, training: serde_json::Value) -> DrsMeta {
        DrsMeta {
            kind: "drs".into(),
            format_version: FORMAT_VERSION,
            feature_schema_version: FEATURE_SCHEMA_VERSION,
            reward,
            nodes: net.nodes(),
            hidden: net.hidden(),
            parameters: net.parameters(),
            weights_sha256: String::new(),
            training,
        }
    }

    /// The training run, as manifests name it: `seed:<training seed>`, else
    /// `sha256:<first 12 hex digits of the weights' digest>`.
    pub fn training_run(&self) -> String {
        match self.training.get("seed").and_then(serde_json::Value::as_u64) {
            Some(seed) => format!("seed:{seed}"),
            None => format!("sha256:{}", self.weights_sha256.get(..12).unwrap_or("unknown")),
        }
    }

    /// Refuses a cluster of `asked` nodes unless the network was built for
    /// exactly that many; `file` names the checkpoint in the error.
    pub fn check_cluster(&self, file: &str, asked: usize) -> Result<(), DrsError> {
        if asked == self.nodes {
            return Ok(());
        }
        Err(DrsError::ClusterSize {
            file: file.to_string(),
            variant: self.reward.arm_name().to_string(),
            trained: self.nodes,
            asked,
        })
    }
}

/// A checkpoint built into the binary.
#[derive(Debug, Clone, Copy)]
pub struct Bundled {
    pub weights: &'static [u8],
    pub sidecar: &'static str,
    /// where it came from, for errors and manifests
    pub origin: &'static str,
}

macro_rules! bundled_drs {
    ($($file:literal),* $(,)?) => {
        &[$(Bundled {
            weights: include_bytes!(concat!("../../checkpoints/drs/", $file, ".safetensors")),
            sidecar: include_str!(concat!("../../checkpoints/drs/", $file, ".json")),
            origin: concat!("bundled checkpoint scheduler/checkpoints/drs/", $file, ".safetensors"),
        }),*]
    };
}

/// The networks small enough to ship (`scheduler/checkpoints/drs/`): each
/// reward at 10 and 40 nodes (48 KB and 187 KB of weights). Larger sizes
/// are trained with `schedlab train --variant ARM --set nodes=N`.
pub const BUNDLED: &[Bundled] = bundled_drs!("drs-n10", "drs-n40", "drs-agmarl-reward-n10", "drs-agmarl-reward-n40");

/// The bundled network of `reward` for `nodes` nodes, if one ships.
pub fn bundled(reward: DrsReward, nodes: usize) -> Option<Result<(QNet, DrsMeta, &'static str), DrsError>> {
    BUNDLED.iter().find_map(|b| {
        let meta: DrsMeta = serde_json::from_str(b.sidecar).ok()?;
        (meta.reward == reward && meta.nodes == nodes)
            .then(|| load_bytes(b.weights, b.sidecar, b.origin).map(|(net, meta)| (net, meta, b.origin)))
    })
}

/// The sizes a bundled network of `reward` exists for, ascending.
pub fn bundled_sizes(reward: DrsReward) -> Vec<usize> {
    let mut sizes: Vec<usize> = BUNDLED
        .iter()
        .filter_map(|b| serde_json::from_str::<DrsMeta>(b.sidecar).ok())
        .filter(|m| m.reward == reward)
        .map(|m| m.nodes)
        .collect();
    sizes.sort_unstable();
    sizes
}

fn io_error(path: &Path, source: std::io::Error) -> DrsError {
    let file = path.display().to_string();
    if source.kind() == std::io::ErrorKind::NotFound {
        DrsError::Missing { file }
    } else {
        DrsError::Io { file, source }
    }
}

/// The weights of `net` in safetensors format; the same network always
/// gives the same bytes.
pub fn to_bytes(net: &QNet) -> Result<Vec<u8>, DrsError> {
    let values = net.values()?;
    let bytes: Vec<Vec<u8>> = values
        .iter()
        .map(|v| v.iter().flat_map(|x| x.to_le_bytes()).collect())
        .collect();
    let damaged = |e: safetensors::SafeTensorError| DrsError::Damaged {
        file: "(in memory)".into(),
        reason: e.to_string(),
    };
    let views = TENSOR_NAMES
        .iter()
        .zip(shapes(net.nodes(), net.hidden()))
        .zip(&bytes)
        .map(|((name, shape), b)| safetensors::tensor::TensorView::new(Dtype::F32, shape, b).map(|v| (*name, v)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(damaged)?;
    let header = HashMap::from([("format".to_string(), "pt".to_string())]);
    safetensors::tensor::serialize(views, Some(header)).map_err(damaged)
}

/// Writes `net` to `path` and `meta` (with the weights' digest) to its sidecar.
pub fn save(net: &QNet, meta: &DrsMeta, path: &Path) -> Result<DrsMeta, DrsError> {
    let bytes = to_bytes(net)?;
    let meta = DrsMeta {
        weights_sha256: weights_digest(&bytes),
        ..meta.clone()
    };
    let sidecar = sidecar_path(path);
    let json = serde_json::to_string_pretty(&meta).map_err(|e| DrsError::Sidecar {
        file: sidecar.display().to_string(),
        reason: e.to_string(),
    })?;
    std::fs::write(path, bytes).map_err(|e| io_error(path, e))?;
    std::fs::write(&sidecar, json + "\n").map_err(|e| io_error(&sidecar, e))?;
    Ok(meta)
}

/// Reads the checkpoint at `path` and its sidecar.
pub fn load(path: &Path) -> Result<(QNet, DrsMeta), DrsError> {
    let sidecar = sidecar_path(path);
    let weights = schedlab_core::input::read_bounded(path, MAX_WEIGHTS_BYTES).map_err(|e| io_error(path, e))?;
    let text =
        schedlab_core::input::read_bounded_string(&sidecar, MAX_SIDECAR_BYTES).map_err(|e| io_error(&sidecar, e))?;
    load_bytes(&weights, &text, &path.display().to_string())
}

/// A checkpoint from memory; `file` names it in errors.
pub fn load_bytes(weights: &[u8], sidecar: &str, file: &str) -> Result<(QNet, DrsMeta), DrsError> {
    let meta: DrsMeta = serde_json::from_str(sidecar).map_err(|e| DrsError::Sidecar {
        file: format!("{file} (sidecar)"),
        reason: e.to_string(),
    })?;
    if meta.kind != "drs" {
        return Err(DrsError::Sidecar {
            file: format!("{file} (sidecar)"),
            reason: format!("kind is {:?}, not \"drs\"", meta.kind),
        });
    }
    let version = |field, found, expected| {
        if found == expected {
            Ok(())
        } else {
            Err(DrsError::Version {
                file: file.to_string(),
                field,
                found,
                expected,
            })
        }
    };
    version("format_version", meta.format_version, FORMAT_VERSION)?;
    version(
        "feature_schema_version",
        meta.feature_schema_version,
        FEATURE_SCHEMA_VERSION,
    )?;
    check_sizes(meta.nodes, meta.hidden).map_err(|e| DrsError::Sidecar {
        file: format!("{file} (sidecar)"),
        reason: e.to_string(),
    })?;
    let tensors = SafeTensors::deserialize(weights).map_err(|e| DrsError::Damaged {
        file: file.to_string(),
        reason: e.to_string(),
    })?;
    let tensor_error = |name: &str, problem: String| DrsError::Tensor {
        file: file.to_string(),
        name: name.to_string(),
        problem,
    };
    let mut values = Vec::with_capacity(TENSOR_NAMES.len());
    for (name, shape) in TENSOR_NAMES.iter().zip(shapes(meta.nodes, meta.hidden)) {
        let view = tensors.tensor(name).map_err(|_| tensor_error(name, "missing".into()))?;
        if view.dtype() != Dtype::F32 {
            return Err(tensor_error(name, format!("dtype {:?}, expected F32", view.dtype())));
        }
        if view.shape() != shape {
            return Err(tensor_error(
                name,
                format!(
                    "shape {:?}, expected {shape:?} for the sidecar's {} nodes and {} hidden units",
                    view.shape(),
                    meta.nodes,
                    meta.hidden
                ),
            ));
        }
        let v: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(tensor_error(name, format!("non-finite value at element {i}")));
        }
        values.push(v);
    }
    let extra: Vec<&str> = tensors
        .names()
        .into_iter()
        .filter(|n| !TENSOR_NAMES.contains(n))
        .collect();
    if !extra.is_empty() {
        return Err(DrsError::Damaged {
            file: file.to_string(),
            reason: format!("unexpected tensor(s) {extra:?} (another architecture?)"),
        });
    }
    let net = QNet::from_values(meta.nodes, meta.hidden, values)?;
    Ok((net, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_network_loads_at_its_size() {
        for reward in DrsReward::ALL {
            assert_eq!(bundled_sizes(reward), vec![10, 40], "{reward:?}");
            for n in [10, 40] {
                let (net, meta, origin) = bundled(reward, n).expect("bundled").unwrap();
                assert_eq!((net.nodes(), meta.nodes, meta.reward), (n, n, reward));
                assert!(origin.contains(&format!("n{n}.safetensors")), "{origin}");
                assert_eq!(meta.weights_sha256, weights_digest(&to_bytes(&net).unwrap()));
            }
            assert!(bundled(reward, 160).is_none());
        }
    }

    #[test]
    fn round_trip_and_the_size_check() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("drs-n5.safetensors");
        let net = QNet::new(5, 8, 1000).unwrap();
        let meta = DrsMeta::new(&net, DrsReward::Balance, serde_json::json!({"seed": 1000}));
        let saved = save(&net, &meta, &path).unwrap();
        let (back, read) = load(&path).unwrap();
        assert_eq!(back.values().unwrap(), net.values().unwrap());
        assert_eq!(read, saved);
        assert_eq!(read.training_run(), "seed:1000");
        assert_eq!(to_bytes(&back).unwrap(), std::fs::read(&path).unwrap(), "same bytes");
        let file = path.display().to_string();
        read.check_cluster(&file, 5).unwrap();
        let err = read.check_cluster(&file, 40).unwrap_err().to_string();
        assert!(
            err.contains(&file) && err.contains("trained for 5 nodes") && err.contains("has 40"),
            "{err}"
        );
        assert!(err.contains("--variant drs --set nodes=40"), "{err}");
    }

    #[test]
    fn damaged_and_mis_shaped_checkpoints_say_which_file_and_what() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.safetensors");
        let net = QNet::new(3, 4, 1).unwrap();
        save(
            &net,
            &DrsMeta::new(&net, DrsReward::Objectives, serde_json::Value::Null),
            &path,
        )
        .unwrap();
        let sidecar = std::fs::read_to_string(sidecar_path(&path)).unwrap();
        let weights = std::fs::read(&path).unwrap();
        // a sidecar claiming another size than the tensors have
        let lying = sidecar.replace("\"nodes\": 3", "\"nodes\": 4");
        let err = load_bytes(&weights, &lying, "x.safetensors").unwrap_err().to_string();
        assert!(
            err.contains("x.safetensors") && err.contains("q.fc1.weight") && err.contains("shape"),
            "{err}"
        );
        // truncated weights
        let err = load_bytes(&weights[..weights.len() / 2], &sidecar, "x.safetensors").unwrap_err();
        assert!(matches!(err, DrsError::Damaged { .. }), "{err}");
        // an AGMARL sidecar is not a DRS one
        let err = load_bytes(&weights, "{\"format_version\": 1}", "x.safetensors").unwrap_err();
        assert!(matches!(err, DrsError::Sidecar { .. }), "{err}");
        // a missing file
        let err = load(&dir.path().join("none.safetensors")).unwrap_err();
        assert!(matches!(err, DrsError::Missing { .. }), "{err}");
    }
}
