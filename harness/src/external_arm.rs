//! `--arms external:NAME`: a scheduler already running in the cluster (a
//! scheduler-plugins build, a second kube-scheduler profile, anyone's own)
//! as an arm. The run's pods carry `schedulerName: NAME`, the cluster's
//! scheduler of that name binds them, and the lab records the run as it
//! does `default`'s. The simulator has no such scheduler, so the arm is
//! refused there.

use crate::exit::InputError;
use anyhow::{Result, bail};

/// How an external arm is written in `--arms`.
pub const PREFIX: &str = "external:";

/// Whether `arm` names a scheduler already in the cluster.
pub fn is_external(arm: &str) -> bool {
    arm.starts_with(PREFIX)
}

/// The scheduler name of `external:NAME`, which is the arm's name in the
/// run folder too: a DNS-1123 subdomain (what `spec.schedulerName` must be),
/// not the name of a built-in arm.
pub fn scheduler_name(arm: &str) -> Result<String> {
    let name = arm.strip_prefix(PREFIX).unwrap_or(arm);
    let valid = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    if !valid {
        bail!(InputError(format!(
            "--arms {arm:?}: {name:?} is not a scheduler name a pod can carry (lower-case letters, digits, '-' and \
             '.', at most 253 characters, each dot-separated part starting and ending with a letter or digit)"
        )));
    }
    if scheduler::arm(name, 0).is_ok() || crate::drs_input::is_drs_arm(name) {
        bail!(InputError(format!(
            "--arms {arm:?}: {name:?} is the name of a built-in arm; an external scheduler's name must differ from \
             every arm's, since the run folder keeps each arm under its name"
        )));
    }
    Ok(name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scheduler_name_is_checked_as_kubernetes_checks_it() {
        assert_eq!(scheduler_name("external:my-scheduler").unwrap(), "my-scheduler");
        assert_eq!(
            scheduler_name("external:default-scheduler").unwrap(),
            "default-scheduler"
        );
        assert_eq!(scheduler_name("external:a.b-c.d9").unwrap(), "a.b-c.d9");
        for bad in [
            "external:",
            "external:My",
            "external:-a",
            "external:a-",
            "external:a..b",
            "external:a_b",
        ] {
            let err = scheduler_name(bad).unwrap_err().to_string();
            assert!(err.contains("not a scheduler name"), "{bad}: {err}");
        }
        let long = format!("external:{}", "a".repeat(254));
        assert!(scheduler_name(&long).is_err());
        for builtin in [
            "external:default",
            "external:binpack",
            "external:agmarl",
            "external:drs",
        ] {
            let err = scheduler_name(builtin).unwrap_err().to_string();
            assert!(err.contains("built-in arm"), "{builtin}: {err}");
        }
        assert!(is_external("external:x") && !is_external("default"));
    }
}
