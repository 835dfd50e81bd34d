//! Building a policy from its arm name: the baselines ([`baseline`]) and,
//! through [`arm`], the AGMARL-DKS arms with the bundled checkpoint and its
//! controls.

use crate::agmarl::arms::{AGMARL_ARMS, CONTROL_ARMS, DEFAULT_INIT_SEED, VARIANT_ARMS, agmarl_arm_with, control_arm};
use crate::agmarl::checkpoint::{CheckpointError, CheckpointMeta, bundled_for};
use crate::agmarl::measured::MeasuredError;
use crate::agmarl::network::AgmarlNet;
use crate::agmarl::policy::{AgmarlConfig, Control, Variant};
use crate::api::Scheduler;
use crate::binpack::BinPackScheduler;
use crate::cost_binpack::CostBinPackScheduler;
use crate::default::DefaultScheduler;
use crate::load_aware::LoadAwareScheduler;
use crate::profile::Profile;
use crate::random::RandomScheduler;
use crate::target_load::TargetLoadScheduler;
use crate::{binpack, cost_binpack, default, load_aware, target_load};

/// The baselines that are kube-scheduler-like profiles of plugins, in
/// [`BASELINE_NAMES`]' order (`random` is not one): the data the book's
/// profile table (docs/src/arms.md) is checked against.
pub const PROFILES: &[Profile] = &[
    default::PROFILE,
    binpack::PROFILE,
    cost_binpack::PROFILE,
    target_load::PROFILE,
    load_aware::PROFILE,
];

/// The arm names [`baseline`] knows.
pub const BASELINE_NAMES: &[&str] = &[
    DefaultScheduler::NAME,
    BinPackScheduler::NAME,
    RandomScheduler::NAME,
    CostBinPackScheduler::NAME,
    TargetLoadScheduler::NAME,
    LoadAwareScheduler::NAME,
];

/// Every arm [`arm`] knows: the baselines, then the AGMARL arms.
pub const ARM_NAMES: &[&str] = &[
    "default",
    "binpack",
    "random",
    "cost-binpack",
    "target-load",
    "load-aware",
    "agmarl",
    "agmarl-untrained",
    "agmarl-analytic",
    "agmarl-nognn",
    "agmarl-nognn-untrained",
    "agmarl-linear",
    "agmarl-linear-untrained",
    "agmarl-nostress",
    "agmarl-nostress-untrained",
];

/// An arm that cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ArmError {
    #[error("unknown arm {name:?}: the arms are {}", ARM_NAMES.join(", "))]
    Unknown { name: String },
    #[error(
        "{name:?} is not a trained AGMARL arm (the controls {} take no network): those are {}",
        CONTROL_ARMS.join(", "),
        VARIANT_ARMS.join(", ")
    )]
    NotAgmarl { name: String },
    #[error("{name:?} is not an AGMARL control: those are {}", CONTROL_ARMS.join(", "))]
    NotControl { name: String },
    /// The checkpoint error is part of the message, not a source, so that a
    /// caller printing the chain does not print it twice.
    #[error("arm {name}: {error}")]
    Checkpoint { name: String, error: Box<CheckpointError> },
}

/// The arm called `name`: a baseline, an AGMARL arm with the bundled
/// checkpoint trained as its variant, or an AGMARL control (an untrained twin
/// from [`DEFAULT_INIT_SEED`]'s initial weights), with the measured errors
/// of the bundled checkpoint it stands beside. Random choices (tie-breaks,
/// preemption's) come from `seed`.
pub fn arm(name: &str, seed: u64) -> crate::Result<Box<dyn Scheduler>> {
    if let Ok(s) = baseline(name, seed) {
        return Ok(s);
    }
    if let Some(control) = Control::from_arm_name(name) {
        return control_arm(
            name,
            &AgmarlConfig::default(),
            control_head_error(control.variant())?,
            DEFAULT_INIT_SEED,
            seed,
        );
    }
    let (net, meta) = bundled_checkpoint(name)?;
    agmarl_arm_with(name, net, meta.measured_error(), seed)
}

/// Whether the policy of arm `name` answers a pod no node takes with
/// DefaultPreemption (for the AGMARL arms, as their settings `agmarl` say);
/// None for an unknown arm. Whether a backend carries the preemption out is the
/// backend's affair: the simulator and schedlab's bind loop both do.
pub fn preempts(name: &str, agmarl: &AgmarlConfig) -> Option<bool> {
    if let Some(profile) = PROFILES.iter().find(|p| p.name == name) {
        // every built-in kube-scheduler profile runs the DefaultPreemption PostFilter
        return Some(profile.preemption);
    }
    if name == RandomScheduler::NAME {
        return Some(false);
    }
    AGMARL_ARMS.contains(&name).then_some(agmarl.preemption)
}

/// The bundled network of the AGMARL arm `name`, trained as its variant.
pub fn bundled_net(name: &str) -> crate::Result<AgmarlNet> {
    Ok(bundled_checkpoint(name)?.0)
}

/// The measured errors (selection tolerance, decline margin) a control of
/// `variant` runs with when no checkpoint is given: those of the bundled
/// checkpoint of that variant, which it stands beside.
pub fn control_head_error(variant: Variant) -> crate::Result<Option<MeasuredError>> {
    Ok(bundled_checkpoint(variant.arm_name())?.1.measured_error())
}

/// The bundled checkpoint of the trained AGMARL arm `name`: its network and
/// sidecar.
pub fn bundled_checkpoint(name: &str) -> crate::Result<(AgmarlNet, CheckpointMeta)> {
    let variant = Variant::from_arm_name(name).ok_or_else(|| ArmError::Unknown { name: name.to_string() })?;
    Ok(bundled_for(variant).map_err(|error| ArmError::Checkpoint {
        name: name.to_string(),
        error: Box::new(error),
    })?)
}

/// An arm name that is not a baseline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown scheduler {name:?}: the baselines are {}", BASELINE_NAMES.join(", "))]
pub struct UnknownScheduler {
    pub name: String,
}

/// The baseline called `name`, drawing its random choices from `seed`.
pub fn baseline(name: &str, seed: u64) -> crate::Result<Box<dyn Scheduler>> {
    match name {
        // the default profile with explanations (see explain::default_arm)
        DefaultScheduler::NAME => Ok(Box::new(DefaultScheduler::new(seed))),
        BinPackScheduler::NAME => Ok(Box::new(BinPackScheduler::new(seed))),
        RandomScheduler::NAME => Ok(Box::new(RandomScheduler::new(seed))),
        CostBinPackScheduler::NAME => Ok(Box::new(CostBinPackScheduler::new(seed))),
        TargetLoadScheduler::NAME => Ok(Box::new(TargetLoadScheduler::new(seed))),
        LoadAwareScheduler::NAME => Ok(Box::new(LoadAwareScheduler::new(seed))),
        _ => Err(UnknownScheduler { name: name.to_string() }.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_every_baseline_by_name() {
        for name in BASELINE_NAMES {
            let s = baseline(name, 1).unwrap();
            assert_eq!(s.name(), *name);
        }
        assert_eq!(
            BASELINE_NAMES,
            [
                "default",
                "binpack",
                "random",
                "cost-binpack",
                "target-load",
                "load-aware"
            ]
        );
    }

    #[test]
    fn arm_names_are_the_baselines_then_the_agmarl_arms() {
        let all: Vec<&str> = BASELINE_NAMES.iter().chain(AGMARL_ARMS).copied().collect();
        assert_eq!(ARM_NAMES, all.as_slice());
    }

    #[test]
    fn builds_every_arm_by_name() {
        for name in ARM_NAMES {
            let s = arm(name, 1).unwrap();
            assert_eq!(s.name(), *name);
        }
        let err = arm("agmarl-typo", 1).err().unwrap();
        assert_eq!(
            err.to_string(),
            "unknown arm \"agmarl-typo\": the arms are default, binpack, random, cost-binpack, target-load, \
             load-aware, agmarl, agmarl-untrained, agmarl-analytic, agmarl-nognn, agmarl-nognn-untrained, \
             agmarl-linear, agmarl-linear-untrained, agmarl-nostress, agmarl-nostress-untrained"
        );
    }

    #[test]
    fn the_profiles_and_the_agmarl_arms_preempt_random_does_not() {
        let on = AgmarlConfig::default();
        let off = AgmarlConfig {
            preemption: false,
            ..AgmarlConfig::default()
        };
        for name in ARM_NAMES {
            let agmarl = name.starts_with("agmarl");
            assert_eq!(preempts(name, &on), Some(*name != "random"), "{name}");
            assert_eq!(preempts(name, &off), Some(!agmarl && *name != "random"), "{name}");
        }
        assert_eq!(preempts("agmarl-typo", &on), None);
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let err = match baseline("agmarl-typo", 1) {
            Err(e) => e,
            Ok(s) => panic!("built {}", s.name()),
        };
        assert!(
            matches!(&err, crate::Error::UnknownScheduler(e) if e.name == "agmarl-typo"),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "unknown scheduler \"agmarl-typo\": the baselines are default, binpack, random, cost-binpack, \
             target-load, load-aware"
        );
    }
}
