//! Writes an untrained AGMARL-DKS checkpoint (default hyperparameters, seed
//! 0), the placeholder bundled until `schedlab train` produces a trained one:
//!
//! ```text
//! cargo run -p scheduler --example agmarl_init_checkpoint [OUT.safetensors]
//! ```
//!
//! Without an argument it overwrites `scheduler/checkpoints/agmarl.safetensors`
//! and its sidecar `agmarl.json`.

use scheduler::agmarl::checkpoint::{CheckpointMeta, save};
use scheduler::agmarl::network::{AgmarlNet, Hyper};
use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args_os().nth(1).map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("checkpoints")
            .join("agmarl.safetensors")
    });
    let hyper = Hyper::default();
    let net = AgmarlNet::new(&hyper, 0)?;
    let training = serde_json::json!({
        "trained": false,
        "note": "initial weights, replaced by schedlab train",
        "seed": 0,
    });
    save(&net, &CheckpointMeta::new(&hyper, training), &out)?;
    println!("wrote {} ({} parameters)", out.display(), net.parameter_count());
    Ok(())
}
