//! `--drs-checkpoint`: the network the DRS arms decide with, read and
//! checked against the arms listed and the scenario's cluster size before
//! anything runs.

use crate::exit::InputError;
use anyhow::{Result, bail};
use scheduler::drs::{DRS_ARMS, DrsMeta, DrsReward, QWeights};
use std::path::{Path, PathBuf};

/// A DRS checkpoint fit for this invocation.
#[derive(Debug)]
pub struct DrsCheckpoint {
    pub file: PathBuf,
    pub weights: QWeights,
    pub meta: DrsMeta,
}

/// Whether `arm` is one of the DRS arms.
pub fn is_drs_arm(arm: &str) -> bool {
    DrsReward::from_arm_name(arm).is_some()
}

/// Reads `--drs-checkpoint` when given and checks it: a DRS arm needs it
/// (no DRS network is bundled: each is trained for one cluster size), it is
/// refused when no DRS arm is listed, when it was trained for the other
/// reward, and when the scenario starts with another number of nodes than
/// it was built for (`nodes`).
pub fn check(file: Option<&Path>, arms: &[String], nodes: usize) -> Result<Option<DrsCheckpoint>> {
    let listed: Vec<&str> = arms.iter().map(String::as_str).filter(|a| is_drs_arm(a)).collect();
    let Some(file) = file else {
        if let Some(arm) = listed.first() {
            bail!(InputError(format!(
                "--arms {arm}: the DRS arms need --drs-checkpoint FILE, a network trained for this scenario's \
                 {nodes} nodes (`schedlab train --variant {arm} --set nodes={nodes}`): one network runs at one \
                 cluster size only"
            )));
        }
        return Ok(None);
    };
    if listed.is_empty() {
        bail!(InputError(format!(
            "--drs-checkpoint {} is for the DRS arms ({}), and --arms lists none: it would change nothing here",
            file.display(),
            DRS_ARMS.join(", ")
        )));
    }
    let (net, meta) =
        scheduler::drs::checkpoint::load(file).map_err(|e| InputError(format!("--drs-checkpoint: {e}")))?;
    let trained = meta.reward.arm_name();
    if let Some(other) = listed.iter().find(|a| **a != trained) {
        bail!(InputError(format!(
            "--drs-checkpoint {} was trained as {trained}, and --arms lists {other}: give each DRS arm a run of \
             its own with a checkpoint trained for its reward",
            file.display()
        )));
    }
    meta.check_cluster(&file.display().to_string(), nodes)
        .map_err(|e| InputError(e.to_string()))?;
    let weights = net
        .weights()
        .map_err(|e| InputError(format!("--drs-checkpoint: {e}")))?;
    Ok(Some(DrsCheckpoint {
        file: file.to_path_buf(),
        weights,
        meta,
    }))
}
