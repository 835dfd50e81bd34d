//! The networks the DRS arms decide with: `--drs-checkpoint` for the one
//! DRS arm listed, else the network bundled for the scenario's size, read
//! and checked against the arms and the cluster size before anything runs.

use crate::Result;
use crate::error::input;
use scheduler::drs::checkpoint::{bundled, bundled_sizes};
use scheduler::drs::{DRS_ARMS, DrsMeta, DrsReward, QWeights};
use std::collections::BTreeMap;
use std::path::Path;

/// A DRS network fit for this invocation.
#[derive(Debug)]
pub struct DrsNetwork {
    /// the file given, or the bundled checkpoint's origin
    pub origin: String,
    pub weights: QWeights,
    pub meta: DrsMeta,
}

/// The network of each DRS arm listed, by arm name.
pub type DrsNetworks = BTreeMap<String, DrsNetwork>;

/// Whether `arm` is one of the DRS arms.
pub fn is_drs_arm(arm: &str) -> bool {
    DrsReward::from_arm_name(arm).is_some()
}

fn network(net: scheduler::drs::QNet, meta: DrsMeta, origin: String) -> Result<DrsNetwork> {
    let weights = net.weights().map_err(|e| input(format!("{origin}: {e}")))?;
    Ok(DrsNetwork { origin, weights, meta })
}

/// The networks of the DRS arms among `arms` for a scenario of `nodes`
/// nodes. With `file` (`--drs-checkpoint`): refused when no DRS arm is
/// listed, when it was trained for another reward than a listed arm's, and
/// when it was built for another size. Without it: each arm's bundled
/// network of that size, or an error saying which sizes ship and how to
/// train the one asked for.
pub fn check(file: Option<&Path>, arms: &[String], nodes: usize) -> Result<DrsNetworks> {
    let listed: Vec<(&str, DrsReward)> = arms
        .iter()
        .filter_map(|a| Some((a.as_str(), DrsReward::from_arm_name(a)?)))
        .collect();
    let mut networks = DrsNetworks::new();
    let Some(file) = file else {
        for (arm, reward) in listed {
            match bundled(reward, nodes) {
                Some(loaded) => {
                    let (net, meta, origin) = loaded.map_err(|e| input(format!("--arms {arm}: {e}")))?;
                    networks.insert(arm.to_string(), network(net, meta, origin.to_string())?);
                }
                None => {
                    let sizes: Vec<String> = bundled_sizes(reward).iter().map(usize::to_string).collect();
                    return Err(input(format!(
                        "--arms {arm}: no {arm} network ships for this scenario's {nodes} nodes (bundled: {} nodes); \
                         a DRS network runs at the size it was trained for only: train one with `schedlab train \
                         --variant {arm} --set nodes={nodes}` and give it with --drs-checkpoint FILE",
                        sizes.join(", ")
                    )));
                }
            }
        }
        return Ok(networks);
    };
    if listed.is_empty() {
        return Err(input(format!(
            "--drs-checkpoint {} is for the DRS arms ({}), and --arms lists none: it would change nothing here",
            file.display(),
            DRS_ARMS.join(", ")
        )));
    }
    let (net, meta) = scheduler::drs::checkpoint::load(file).map_err(|e| input(format!("--drs-checkpoint: {e}")))?;
    let trained = meta.reward.arm_name();
    if let Some((other, _)) = listed.iter().find(|(a, _)| *a != trained) {
        return Err(input(format!(
            "--drs-checkpoint {} was trained as {trained}, and --arms lists {other}: give each DRS arm a run of \
             its own with a checkpoint trained for its reward",
            file.display()
        )));
    }
    meta.check_cluster(&file.display().to_string(), nodes)
        .map_err(|e| input(e.to_string()))?;
    networks.insert(trained.to_string(), network(net, meta, file.display().to_string())?);
    Ok(networks)
}
