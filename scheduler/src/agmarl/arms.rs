//! The `agmarl*` arms: the full method and its ablations, each an
//! [`AgmarlScheduler`] with the defaults of its [`Variant`].

use crate::agmarl::network::AgmarlNet;
use crate::agmarl::policy::{AgmarlConfig, AgmarlScheduler, Variant};
use crate::api::Scheduler;
use crate::registry::ArmError;

/// The AGMARL arm names, full method first.
pub const AGMARL_ARMS: &[&str] = &["agmarl", "agmarl-nognn", "agmarl-linear", "agmarl-nostress"];

/// The AGMARL arm `name` with the given network (e.g. from `--checkpoint`)
/// and the variant's default configuration.
pub fn agmarl_arm_with(name: &str, net: AgmarlNet, seed: u64) -> crate::Result<Box<dyn Scheduler>> {
    agmarl_arm_configured(name, net, &AgmarlConfig::default(), seed)
}

/// The AGMARL arm `name` with the given network and controller settings;
/// the settings' variant is replaced by the arm's.
pub fn agmarl_arm_configured(
    name: &str,
    net: AgmarlNet,
    config: &AgmarlConfig,
    seed: u64,
) -> crate::Result<Box<dyn Scheduler>> {
    let variant = Variant::from_arm_name(name).ok_or_else(|| ArmError::NotAgmarl { name: name.to_string() })?;
    let config = AgmarlConfig {
        variant,
        ..config.clone()
    };
    Ok(Box::new(AgmarlScheduler::new(net, config, seed)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agmarl::network::Hyper;

    #[test]
    fn arm_names_are_the_variants() {
        let names: Vec<&str> = Variant::ALL.iter().map(|v| v.arm_name()).collect();
        assert_eq!(names, AGMARL_ARMS);
    }

    #[test]
    fn builds_each_arm_and_rejects_others() {
        for name in AGMARL_ARMS {
            let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
            assert_eq!(agmarl_arm_with(name, net, 1).unwrap().name(), *name);
        }
        let net = AgmarlNet::new(&Hyper::default(), 0).unwrap();
        let err = agmarl_arm_with("default", net, 1).err().unwrap();
        assert!(err.to_string().contains("agmarl-nostress"), "{err}");
    }
}
