//! The `agmarl*` arms: the full method, its two controls (the same
//! controller with untrained or hand-written scores, [`Control`]) and its
//! ablations, each beside its untrained twin; each an [`AgmarlScheduler`]
//! with the defaults of its [`Variant`].

use crate::agmarl::measured::MeasuredError;
use crate::agmarl::network::AgmarlNet;
use crate::agmarl::policy::{AgmarlConfig, AgmarlScheduler, Control, Variant};
use crate::api::Scheduler;
use crate::registry::ArmError;

/// The AGMARL arm names: the full method and its controls, then each
/// ablation and its untrained twin.
pub const AGMARL_ARMS: &[&str] = &[
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

/// The trained AGMARL arms (one per [`Variant`], each with a checkpoint).
pub const VARIANT_ARMS: &[&str] = &["agmarl", "agmarl-nognn", "agmarl-linear", "agmarl-nostress"];

/// The control arms (one per [`Control`]): no checkpoint, never trained.
pub const CONTROL_ARMS: &[&str] = &[
    "agmarl-untrained",
    "agmarl-analytic",
    "agmarl-nognn-untrained",
    "agmarl-linear-untrained",
    "agmarl-nostress-untrained",
];

/// The untrained twins' init seed unless told otherwise: the training seed
/// of the bundled checkpoints, so by default the control starts where they
/// started.
pub const DEFAULT_INIT_SEED: u64 = 1000;

/// The AGMARL arm `name` with the given network (e.g. from `--checkpoint`),
/// its heads' measured error (the selection's tolerance,
/// [`crate::agmarl::CheckpointMeta::head_rmse`]) and the variant's default
/// configuration.
pub fn agmarl_arm_with(
    name: &str,
    net: AgmarlNet,
    head_error: Option<MeasuredError>,
    seed: u64,
) -> crate::Result<Box<dyn Scheduler>> {
    agmarl_arm_configured(name, net, &AgmarlConfig::default(), head_error, seed)
}

/// The trained AGMARL arm `name` with the given network, its heads'
/// measured error and controller settings; the settings' variant is
/// replaced by the arm's. The controls take no network: see
/// [`control_arm`].
pub fn agmarl_arm_configured(
    name: &str,
    net: AgmarlNet,
    config: &AgmarlConfig,
    head_error: Option<MeasuredError>,
    seed: u64,
) -> crate::Result<Box<dyn Scheduler>> {
    let variant = Variant::from_arm_name(name).ok_or_else(|| ArmError::NotAgmarl { name: name.to_string() })?;
    let config = AgmarlConfig {
        variant,
        ..config.clone()
    };
    Ok(Box::new(
        AgmarlScheduler::new(net, config, seed).with_measured_error(head_error),
    ))
}

/// The control arm `name` with the controller settings `config` (run as the
/// variant's the control stands beside: [`Control::variant`]) and the
/// selection tolerance of the trained checkpoint it stands beside
/// (`head_error`, that checkpoint's measured errors), so that only the
/// scores differ between the two; an untrained twin starts from the initial
/// weights of `init_seed`, which `agmarl-analytic` ignores.
pub fn control_arm(
    name: &str,
    config: &AgmarlConfig,
    head_error: Option<MeasuredError>,
    init_seed: u64,
    seed: u64,
) -> crate::Result<Box<dyn Scheduler>> {
    let control = Control::from_arm_name(name).ok_or_else(|| ArmError::NotControl { name: name.to_string() })?;
    let config = AgmarlConfig {
        variant: control.variant(),
        ..config.clone()
    };
    Ok(Box::new(
        match control {
            Control::Untrained(_) => AgmarlScheduler::untrained(init_seed, config, seed)?,
            Control::Analytic => AgmarlScheduler::analytic(config, seed),
        }
        .with_measured_error(head_error),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::checkpoint::to_bytes;
    use crate::agmarl::network::Hyper;
    use crate::agmarl::train::{TrainConfig, Trainer};

    #[test]
    fn arm_names_are_the_variants_and_the_controls() {
        let names: Vec<&str> = Variant::ALL.iter().map(|v| v.arm_name()).collect();
        assert_eq!(names, VARIANT_ARMS);
        let controls: Vec<&str> = Control::ALL.iter().map(|c| c.arm_name()).collect();
        assert_eq!(controls, CONTROL_ARMS);
        // the full method with its controls, then each ablation beside its twin
        let mut all = vec!["agmarl", "agmarl-untrained", "agmarl-analytic"];
        for v in &Variant::ALL[1..] {
            all.push(v.arm_name());
            all.push(Control::Untrained(*v).arm_name());
        }
        assert_eq!(all, AGMARL_ARMS);
        // every twin is named after its variant, and every control arm is one of the controls
        for v in Variant::ALL {
            assert_eq!(Control::Untrained(v).arm_name(), format!("{}-untrained", v.arm_name()));
            assert_eq!(Control::Untrained(v).variant(), v);
        }
        assert_eq!(Control::Analytic.variant(), Variant::Full);
    }

    #[test]
    fn builds_each_arm_and_rejects_others() {
        for name in VARIANT_ARMS {
            let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
            assert_eq!(agmarl_arm_with(name, net, None, 1).unwrap().name(), *name);
        }
        for name in CONTROL_ARMS {
            let arm = control_arm(name, &AgmarlConfig::for_variant(Variant::Linear), None, 7, 1).unwrap();
            assert_eq!(arm.name(), *name);
        }
        let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let err = agmarl_arm_with("default", net, None, 1).err().unwrap();
        assert!(err.to_string().contains("agmarl-nostress"), "{err}");
        let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let err = agmarl_arm_with("agmarl-untrained", net, None, 1).err().unwrap();
        assert!(err.to_string().contains("control"), "{err}");
        let err = control_arm("agmarl", &AgmarlConfig::default(), None, 7, 1)
            .err()
            .unwrap();
        assert!(err.to_string().contains("agmarl-analytic"), "{err}");
    }

    #[test]
    fn each_control_runs_the_controller_it_stands_beside() {
        // whatever variant the settings name, the arm's own variant wins
        let config = AgmarlConfig::for_variant(Variant::NoStress);
        for control in Control::ALL {
            let arm = control_arm(control.arm_name(), &config, None, 3, 1).unwrap();
            assert_eq!(arm.name(), control.arm_name());
        }
        let analytic = AgmarlScheduler::analytic(config.clone(), 1);
        assert_eq!(analytic.config().variant, Variant::Full);
        assert_eq!(analytic.control(), Some(Control::Analytic));
        assert!(analytic.net().is_none());
        for variant in Variant::ALL {
            let twin = AgmarlScheduler::untrained(3, AgmarlConfig::for_variant(variant), 1).unwrap();
            assert_eq!(twin.config().variant, variant);
            assert_eq!(twin.control(), Some(Control::Untrained(variant)));
            assert_eq!(twin.name(), format!("{}-untrained", variant.arm_name()));
        }
    }

    #[test]
    fn untrained_weights_are_where_training_starts_bit_for_bit() {
        for (init_seed, variant) in [1000, 5000].into_iter().flat_map(|s| Variant::ALL.map(|v| (s, v))) {
            let s = AgmarlScheduler::untrained(init_seed, AgmarlConfig::for_variant(variant), 1).unwrap();
            let mut cfg = TrainConfig::default();
            cfg.policy.variant = variant;
            let trainer = Trainer::new(cfg, init_seed).unwrap();
            let ours = to_bytes(s.net().expect("a network")).unwrap();
            assert_eq!(
                ours,
                to_bytes(trainer.actor()).unwrap(),
                "init seed {init_seed}, {variant:?}"
            );
        }
        // and another seed starts elsewhere
        let a = AgmarlScheduler::untrained(1000, AgmarlConfig::default(), 1).unwrap();
        let b = AgmarlScheduler::untrained(1001, AgmarlConfig::default(), 1).unwrap();
        assert_ne!(to_bytes(a.net().unwrap()).unwrap(), to_bytes(b.net().unwrap()).unwrap());
    }
}
