//! The arms of an invocation (`--arms`, or a sweep file's `arms`), each read
//! and checked: built-in names, profile files, the DRS foils, extenders and
//! schedulers already in a cluster.

use crate::Result;
use crate::error::input;
use scheduler::profile::file::ProfileFile;
use std::collections::{BTreeMap, BTreeSet};

/// The arms, each read and checked.
#[derive(Debug)]
pub struct CheckedArms {
    /// every arm's name, in order
    pub names: Vec<String>,
    /// the arms read from configuration files (`profile:FILE`, `profile:NAME=FILE`), by name
    pub profile_files: BTreeMap<String, ProfileFile>,
    /// the arms a scheduler already in the cluster decides (`external:NAME`), by name
    pub external: BTreeSet<String>,
    /// the arms that call a kube-scheduler extender (`extender:URL`), by name
    pub extenders: crate::extender_arm::ExtenderArms,
}

/// Reads and checks every arm as given; `what` names where they were given
/// (`--arms`, or a sweep file's field) in every message.
pub fn check(arms: &[String], what: &str) -> Result<CheckedArms> {
    let mut seen = Vec::new();
    let mut files = BTreeMap::new();
    let mut external = BTreeSet::new();
    let mut extenders = crate::extender_arm::ExtenderArms::new();
    for arm in arms {
        let arm = arm.trim();
        if arm.is_empty() {
            return Err(input(format!("{what}: an arm name is empty")));
        }
        let name = if scheduler::profile::file::is_file_arm(arm) {
            let file = scheduler::profile::file::load_arm(arm)
                .map_err(scheduler::Error::from)
                .map_err(|e| named(what, e.into()))?;
            let name = file.arm.clone();
            if files.insert(name.clone(), file).is_some() {
                return Err(input(format!(
                    "{what}: {arm:?} is a second arm named {name:?}: name them apart with profile:NAME=FILE"
                )));
            }
            name
        } else if crate::drs_input::is_drs_arm(arm) {
            // its network comes from --drs-checkpoint, checked with the cluster size
            arm.to_string()
        } else if crate::extender_arm::is_extender_arm(arm) {
            let extender = crate::extender_arm::parse(arm)?;
            let name = extender.arm.clone();
            if extenders.insert(name.clone(), extender).is_some() {
                return Err(input(format!(
                    "{what}: {arm:?} is a second arm named {name:?}: name them apart with extender:NAME=URL"
                )));
            }
            name
        } else if crate::external_arm::is_external(arm) {
            let name = crate::external_arm::scheduler_name(arm)?;
            external.insert(name.clone());
            name
        } else {
            scheduler::arm(arm, 0).map_err(|e| named(what, e.into()))?;
            arm.to_string()
        };
        if seen.contains(&name) {
            return Err(input(format!("{what}: {arm:?} is listed twice")));
        }
        seen.push(name);
    }
    if seen.is_empty() {
        return Err(input(format!("{what}: give at least one arm")));
    }
    Ok(CheckedArms {
        names: seen,
        profile_files: files,
        external,
        extenders,
    })
}

/// An error about one arm, said with where the arms were given; the user's input stays the user's input.
fn named(what: &str, e: crate::RunnerError) -> crate::RunnerError {
    use schedlab_core::error::UserInput;
    if e.is_input_error() {
        input(format!("{what}: {e}"))
    } else {
        e
    }
}
