//! Checkpoints: the actor network's weights as safetensors, plus a JSON
//! sidecar with the feature schema, the hyperparameters and how the weights
//! were trained.
//!
//! `foo.safetensors` goes with `foo.json`. Tensors are f32, little-endian,
//! named PyTorch-style (`gnn.lin_rel.weight`, `encoder.fc1.bias`, …;
//! see [`crate::agmarl::network`]), so they load into PyTorch with
//! `safetensors.torch.load_file` (the header's `__metadata__` says
//! `format: pt`, as PyTorch's writer does). The versions live in the sidecar.
//!
//! Loading checks everything before any number is used: the format and
//! feature schema versions, that every tensor the hyperparameters call for is
//! present with its exact shape and dtype, and that there is no tensor left
//! over (a sign of a checkpoint from another architecture). Every failure is
//! a [`CheckpointError`] naming the file.

use crate::agmarl::error::AgmarlError;
use crate::agmarl::features::FEATURE_SCHEMA_VERSION;
use crate::agmarl::measured::MeasuredError;
use crate::agmarl::network::{AgmarlNet, Hyper};
use crate::agmarl::policy::Variant;
use safetensors::{Dtype, SafeTensors};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// Version of the checkpoint layout itself (file pair, naming, sidecar).
/// 2: the sidecar holds the SHA-256 of the weights file.
pub const FORMAT_VERSION: u32 = 2;

/// Largest weights file read: networks at [`crate::agmarl::network::MAX_DIM`]
/// widths stay far below it, and a damaged or wrong file cannot take the
/// machine's memory.
pub const MAX_WEIGHTS_BYTES: u64 = 256 << 20;
/// Largest sidecar read.
pub const MAX_SIDECAR_BYTES: u64 = 4 << 20;

/// The bundled checkpoints, one per variant, each trained as that variant
/// (`scheduler/checkpoints/<arm>.safetensors` and `.json`): weights, sidecar
/// and how it is named in errors.
struct Bundled {
    weights: &'static [u8],
    sidecar: &'static str,
    origin: &'static str,
}

macro_rules! bundled_files {
    ($arm:literal) => {
        Bundled {
            weights: include_bytes!(concat!("../../checkpoints/", $arm, ".safetensors")),
            sidecar: include_str!(concat!("../../checkpoints/", $arm, ".json")),
            origin: concat!("bundled checkpoint scheduler/checkpoints/", $arm, ".safetensors"),
        }
    };
}

fn bundled_files(variant: Variant) -> Bundled {
    match variant {
        Variant::Full => bundled_files!("agmarl"),
        Variant::NoGnn => bundled_files!("agmarl-nognn"),
        Variant::Linear => bundled_files!("agmarl-linear"),
        Variant::NoStress => bundled_files!("agmarl-nostress"),
    }
}

/// How the bundled checkpoint of the full method is named in errors.
pub const BUNDLED_ORIGIN: &str = "bundled checkpoint scheduler/checkpoints/agmarl.safetensors";

/// How the bundled checkpoint of `variant` is named.
pub fn bundled_origin(variant: Variant) -> &'static str {
    bundled_files(variant).origin
}

/// The sidecar: what the weights need to be used, and where they came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// [`FORMAT_VERSION`] of the writer
    pub format_version: u32,
    /// [`FEATURE_SCHEMA_VERSION`] the weights were trained on
    pub feature_schema_version: u32,
    pub hyper: Hyper,
    /// SHA-256 of the weights file, lowercase hex ([`weights_digest`]): a
    /// flipped byte in the tensor data is refused, not loaded
    pub weights_sha256: String,
    /// written by training: scenarios, seeds, episodes, hyperparameters, git
    /// revision, wall time; free-form
    #[serde(default)]
    pub training: serde_json::Value,
}

/// The SHA-256 of a weights file, lowercase hex.
pub fn weights_digest(weights: &[u8]) -> String {
    schedlab_core::digest::sha256_hex(weights)
}

impl CheckpointMeta {
    /// The variant the weights were trained as, from the training record
    /// (None when the sidecar does not say, e.g. hand-written).
    pub fn trained_variant(&self) -> Option<Variant> {
        let name = self.training.pointer("/config/policy/variant")?.as_str()?;
        serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
    }

    /// The seed training started from (`training.seed`, else
    /// `training.seeds.first`), as `schedlab train` records it; None when the
    /// sidecar does not say.
    pub fn training_seed(&self) -> Option<u64> {
        self.training
            .pointer("/seed")
            .or_else(|| self.training.pointer("/seeds/first"))?
            .as_u64()
    }

    /// The score heads' RMSE `[ft, util, cost]` on the validation split at
    /// the end of training (`training.validation.heads.rmse`, written by
    /// `schedlab train`), the selection's tolerance by default; None when
    /// the sidecar does not record all three (older or hand-made weights).
    pub fn head_rmse(&self) -> Option<[f32; 3]> {
        let rmse = self.training.pointer("/validation/heads/rmse")?.as_array()?;
        let mut out = [0.0f32; 3];
        if rmse.len() != 3 {
            return None;
        }
        for (o, v) in out.iter_mut().zip(rmse) {
            *o = v.as_f64().filter(|x| x.is_finite() && *x >= 0.0)? as f32;
        }
        Some(out)
    }

    /// The wait head's RMSE (`training.wait.rmse`, written by `schedlab
    /// train`): measured on each decline's target before the learner
    /// trained on it. None when the sidecar does not record it.
    pub fn wait_rmse(&self) -> Option<f32> {
        let rmse = self.training.pointer("/wait/rmse")?.as_f64()?;
        (rmse.is_finite() && rmse >= 0.0).then_some(rmse as f32)
    }

    /// The heads' measured errors: the selection's tolerance and
    /// restraint's margin. None without the score heads' RMSE.
    pub fn measured_error(&self) -> Option<MeasuredError> {
        Some(MeasuredError {
            heads: self.head_rmse()?,
            wait: self.wait_rmse(),
        })
    }

    /// What identifies the training run of these weights, for the run
    /// folder's arm facts: `seed:<training seed>` when the sidecar records
    /// it, else `sha256:<the first 12 hex digits of the weights' digest>`
    /// (hand-made or foreign weights: one file, one run).
    pub fn training_run(&self) -> String {
        match self.training_seed() {
            Some(seed) => format!("seed:{seed}"),
            None => {
                let digest = &self.weights_sha256;
                format!("sha256:{}", digest.get(..12).unwrap_or(digest))
            }
        }
    }

    /// Metadata for weights of `hyper` under the current versions; [`save`]
    /// fills in the digest of the weights it writes.
    pub fn new(hyper: &Hyper, training: serde_json::Value) -> CheckpointMeta {
        CheckpointMeta {
            format_version: FORMAT_VERSION,
            feature_schema_version: FEATURE_SCHEMA_VERSION,
            hyper: hyper.clone(),
            weights_sha256: String::new(),
            training,
        }
    }
}

/// Saving or loading a checkpoint failed. `file` names the file at fault
/// (or, for checkpoints loaded from memory, where the bytes came from).
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    #[error("checkpoint {file}: file not found")]
    Missing { file: String },
    #[error("checkpoint {file}: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("checkpoint {file}: damaged safetensors file: {reason}")]
    Damaged { file: String, reason: String },
    #[error("checkpoint {file}: bad sidecar JSON: {reason}")]
    Sidecar { file: String, reason: String },
    #[error(
        "checkpoint {file}: the weights' SHA-256 is {found}, its sidecar says {expected}: the file was changed or \
         damaged after training"
    )]
    Digest {
        file: String,
        expected: String,
        found: String,
    },
    #[error("checkpoint {file}: format version {found}, this build reads version {expected}")]
    FormatVersion { file: String, found: u32, expected: u32 },
    #[error(
        "checkpoint {file}: trained on feature schema version {found}, this build computes version {expected}; \
         retrain with `schedlab train`"
    )]
    SchemaVersion { file: String, found: u32, expected: u32 },
    #[error("checkpoint {file}: tensor {name} is missing")]
    MissingTensor { file: String, name: String },
    #[error("checkpoint {file}: tensor {name} has shape {found:?}, expected {expected:?}")]
    TensorShape {
        file: String,
        name: String,
        found: Vec<usize>,
        expected: Vec<usize>,
    },
    #[error("checkpoint {file}: tensor {name} has dtype {found}, expected F32")]
    TensorDtype { file: String, name: String, found: String },
    #[error("checkpoint {file}: unexpected tensor(s) {names:?} (another architecture?)")]
    UnexpectedTensors { file: String, names: Vec<String> },
    #[error("checkpoint {file}: {source}")]
    Network {
        file: String,
        #[source]
        source: AgmarlError,
    },
}

/// Internal error of the build callback, given a file name afterwards.
#[derive(Debug)]
enum LoadFailure {
    Checkpoint(CheckpointError),
    Network(AgmarlError),
}

impl From<AgmarlError> for LoadFailure {
    fn from(e: AgmarlError) -> LoadFailure {
        LoadFailure::Network(e)
    }
}

/// The sidecar path of a weights path: same stem, extension `json`.
pub fn sidecar_path(weights: &Path) -> PathBuf {
    weights.with_extension("json")
}

fn io_error(path: &Path, source: std::io::Error) -> CheckpointError {
    let file = path.display().to_string();
    if source.kind() == std::io::ErrorKind::NotFound {
        CheckpointError::Missing { file }
    } else {
        CheckpointError::Io { file, source }
    }
}

/// The weights of `net` in safetensors format. The bytes depend on the
/// weights only (tensors sorted by name), so the same network always saves
/// to the same file.
pub fn to_bytes(net: &AgmarlNet) -> Result<Vec<u8>, CheckpointError> {
    let file = "(in memory)".to_string();
    let network = |source| CheckpointError::Network {
        file: file.clone(),
        source,
    };
    let vars = net
        .varmap()
        .data()
        .lock()
        .map_err(|_| network(AgmarlError::Poisoned))?
        .clone();
    let mut tensors = Vec::with_capacity(vars.len());
    for (name, var) in vars {
        let values = var
            .as_tensor()
            .flatten_all()
            .and_then(|t| t.to_vec1::<f32>())
            .map_err(|e| network(e.into()))?;
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        tensors.push((name, var.dims().to_vec(), bytes));
    }
    let views = tensors
        .iter()
        .map(|(name, shape, bytes)| {
            safetensors::tensor::TensorView::new(Dtype::F32, shape.clone(), bytes).map(|v| (name.as_str(), v))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| CheckpointError::Damaged {
            file: file.clone(),
            reason: e.to_string(),
        })?;
    // one key only: the header map is a HashMap, and with several keys its
    // random iteration order would make the bytes differ from save to save
    let header = HashMap::from([("format".to_string(), "pt".to_string())]);
    safetensors::tensor::serialize(views, Some(header)).map_err(|e| CheckpointError::Damaged {
        file,
        reason: e.to_string(),
    })
}

/// Writes `net` to `path` (safetensors) and `meta` to its sidecar
/// ([`sidecar_path`]).
pub fn save(net: &AgmarlNet, meta: &CheckpointMeta, path: &Path) -> crate::Result<()> {
    let bytes = to_bytes(net)?;
    let sidecar = sidecar_path(path);
    let meta = CheckpointMeta {
        weights_sha256: weights_digest(&bytes),
        ..meta.clone()
    };
    let json = serde_json::to_string_pretty(&meta).map_err(|e| CheckpointError::Sidecar {
        file: sidecar.display().to_string(),
        reason: e.to_string(),
    })?;
    std::fs::write(path, bytes).map_err(|e| io_error(path, e))?;
    std::fs::write(&sidecar, json + "\n").map_err(|e| io_error(&sidecar, e))?;
    Ok(())
}

/// Reads the checkpoint at `path` (safetensors) and its sidecar.
pub fn load(path: &Path) -> crate::Result<(AgmarlNet, CheckpointMeta)> {
    let sidecar = sidecar_path(path);
    let weights = schedlab_core::input::read_bounded(path, MAX_WEIGHTS_BYTES).map_err(|e| io_error(path, e))?;
    let meta =
        schedlab_core::input::read_bounded_string(&sidecar, MAX_SIDECAR_BYTES).map_err(|e| io_error(&sidecar, e))?;
    let loaded = load_parts(
        &weights,
        &path.display().to_string(),
        &meta,
        &sidecar.display().to_string(),
    )?;
    Ok(loaded)
}

/// A checkpoint from memory; `origin` names where the bytes came from in
/// errors.
pub fn load_bytes(weights: &[u8], sidecar: &str, origin: &str) -> Result<(AgmarlNet, CheckpointMeta), CheckpointError> {
    load_parts(weights, origin, sidecar, &format!("{origin} (sidecar)"))
}

/// The checkpoint of the full method built into the binary (`scheduler/checkpoints/agmarl.*`).
pub fn bundled() -> crate::Result<(AgmarlNet, CheckpointMeta)> {
    Ok(bundled_for(Variant::Full)?)
}

/// The checkpoint built into the binary for `variant`, trained as that variant.
pub fn bundled_for(variant: Variant) -> Result<(AgmarlNet, CheckpointMeta), CheckpointError> {
    let files = bundled_files(variant);
    load_bytes(files.weights, files.sidecar, files.origin)
}

/// Parses and checks a sidecar.
pub fn parse_meta(sidecar: &str, file: &str) -> Result<CheckpointMeta, CheckpointError> {
    let meta: CheckpointMeta =
        schedlab_core::json_input::parse_object(sidecar).map_err(|e| CheckpointError::Sidecar {
            file: file.to_string(),
            reason: e.to_string(),
        })?;
    if meta.format_version != FORMAT_VERSION {
        return Err(CheckpointError::FormatVersion {
            file: file.to_string(),
            found: meta.format_version,
            expected: FORMAT_VERSION,
        });
    }
    if meta.feature_schema_version != FEATURE_SCHEMA_VERSION {
        return Err(CheckpointError::SchemaVersion {
            file: file.to_string(),
            found: meta.feature_schema_version,
            expected: FEATURE_SCHEMA_VERSION,
        });
    }
    meta.hyper.validate().map_err(|source| CheckpointError::Network {
        file: file.to_string(),
        source,
    })?;
    Ok(meta)
}

fn load_parts(
    weights: &[u8],
    weights_file: &str,
    sidecar: &str,
    sidecar_file: &str,
) -> Result<(AgmarlNet, CheckpointMeta), CheckpointError> {
    let meta = parse_meta(sidecar, sidecar_file)?;
    let file = weights_file.to_string();
    let tensors = SafeTensors::deserialize(weights).map_err(|e| CheckpointError::Damaged {
        file: file.clone(),
        reason: e.to_string(),
    })?;
    let mut used = BTreeSet::new();
    let mut init = |name: &str, shape: &[usize], _fan_in: usize| -> Result<Vec<f32>, LoadFailure> {
        let view = tensors.tensor(name).map_err(|_| {
            LoadFailure::Checkpoint(CheckpointError::MissingTensor {
                file: file.clone(),
                name: name.to_string(),
            })
        })?;
        if view.dtype() != Dtype::F32 {
            return Err(LoadFailure::Checkpoint(CheckpointError::TensorDtype {
                file: file.clone(),
                name: name.to_string(),
                found: format!("{:?}", view.dtype()),
            }));
        }
        if view.shape() != shape {
            return Err(LoadFailure::Checkpoint(CheckpointError::TensorShape {
                file: file.clone(),
                name: name.to_string(),
                found: view.shape().to_vec(),
                expected: shape.to_vec(),
            }));
        }
        used.insert(name.to_string());
        let values: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(LoadFailure::Checkpoint(CheckpointError::Damaged {
                file: file.clone(),
                reason: format!("tensor {name} holds a non-finite value at element {i}"),
            }));
        }
        Ok(values)
    };
    let net = AgmarlNet::build(&meta.hyper, &mut init).map_err(|e| match e {
        LoadFailure::Checkpoint(c) => c,
        LoadFailure::Network(source) => CheckpointError::Network {
            file: file.clone(),
            source,
        },
    })?;
    let extra: Vec<String> = tensors
        .names()
        .into_iter()
        .filter(|n| !used.contains(*n))
        .map(str::to_string)
        .collect();
    if !extra.is_empty() {
        let mut names = extra;
        names.sort();
        return Err(CheckpointError::UnexpectedTensors { file, names });
    }
    // last: a structural fault is named as such; well-formed bytes that are
    // not the ones trained are caught here
    let found = weights_digest(weights);
    if found != meta.weights_sha256 {
        return Err(CheckpointError::Digest {
            file,
            expected: meta.weights_sha256.clone(),
            found,
        });
    }
    Ok((net, meta))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_checkpoint_loads_and_was_trained_as_its_variant() {
        for variant in Variant::ALL {
            let (net, meta) = bundled_for(variant).unwrap();
            assert_eq!(meta.feature_schema_version, FEATURE_SCHEMA_VERSION);
            assert_eq!(net.hyper(), &meta.hyper);
            assert_eq!(meta.trained_variant(), Some(variant), "{}", bundled_origin(variant));
        }
        assert_eq!(bundled_origin(Variant::Full), BUNDLED_ORIGIN);
    }

    #[test]
    fn the_trained_variant_comes_from_the_training_record() {
        let h = Hyper::default();
        let meta = |training| CheckpointMeta::new(&h, training);
        let with = |v: &str| meta(serde_json::json!({"config": {"policy": {"variant": v}}}));
        assert_eq!(with("agmarl-nognn").trained_variant(), Some(Variant::NoGnn));
        assert_eq!(with("agmarl").trained_variant(), Some(Variant::Full));
        assert_eq!(with("something").trained_variant(), None);
        assert_eq!(meta(serde_json::Value::Null).trained_variant(), None);
    }

    #[test]
    fn the_training_run_is_the_seed_else_the_weights_digest() {
        // the bundled checkpoints started where agmarl-untrained starts by default
        let init = crate::agmarl::arms::DEFAULT_INIT_SEED;
        for variant in Variant::ALL {
            let (_, meta) = bundled_for(variant).unwrap();
            assert_eq!(meta.training_run(), format!("seed:{init}"), "{variant:?}");
        }
        let mut meta = CheckpointMeta::new(&Hyper::default(), serde_json::json!({"seeds": {"first": 2000}}));
        meta.weights_sha256 = "0123456789abcdef".repeat(4);
        assert_eq!(meta.training_run(), "seed:2000");
        meta.training = serde_json::json!({"note": "hand-made"});
        assert_eq!(meta.training_run(), "sha256:0123456789ab");
        meta.training = serde_json::Value::Null;
        assert_eq!(meta.training_seed(), None);
    }

    #[test]
    fn the_head_error_is_the_recorded_validation_rmse() {
        let meta = |training| CheckpointMeta::new(&Hyper::default(), training);
        let rmse = |v: serde_json::Value| meta(serde_json::json!({"validation": {"heads": {"rmse": v}}})).head_rmse();
        assert_eq!(
            rmse(serde_json::json!([0.375, 0.25, 0.125])),
            Some([0.375, 0.25, 0.125])
        );
        // a head without a measurement, a negative, or the wrong count: none
        assert_eq!(rmse(serde_json::json!([0.375, null, 0.125])), None);
        assert_eq!(rmse(serde_json::json!([0.375, -0.1, 0.125])), None);
        assert_eq!(rmse(serde_json::json!([0.375, 0.25])), None);
        assert_eq!(meta(serde_json::json!({"seed": 1000})).head_rmse(), None);
    }

    #[test]
    fn header_says_pytorch_and_bytes_are_deterministic() {
        let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let bytes = to_bytes(&net).unwrap();
        let (_, header) = SafeTensors::read_metadata(&bytes).unwrap();
        assert_eq!(header.metadata().as_ref().unwrap()["format"], "pt");
        for _ in 0..5 {
            assert_eq!(to_bytes(&net.deep_clone().unwrap()).unwrap(), bytes);
        }
    }
}
