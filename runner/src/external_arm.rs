//! `--arms external:NAME`: a scheduler already running in the cluster (a
//! scheduler-plugins build, a second kube-scheduler profile, anyone's own)
//! as an arm. The run's pods carry `schedulerName: NAME`, the cluster's
//! scheduler of that name binds them, and the lab records the run as it
//! does `default`'s. The simulator has no such scheduler, so the arm is
//! refused there.

use crate::Result;
use crate::error::input;
use std::collections::{BTreeMap, BTreeSet};

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
        return Err(input(format!(
            "--arms {arm:?}: {name:?} is not a scheduler name a pod can carry (lower-case letters, digits, '-' and \
             '.', at most 253 characters, each dot-separated part starting and ending with a letter or digit)"
        )));
    }
    if scheduler::arm(name, 0).is_ok() || crate::drs_input::is_drs_arm(name) {
        return Err(input(format!(
            "--arms {arm:?}: {name:?} is the name of a built-in arm; an external scheduler's name must differ from \
             every arm's, since the run folder keeps each arm under its name"
        )));
    }
    Ok(name.to_string())
}

/// One finished run as the warning needs it.
#[derive(Debug, Clone, Copy)]
pub struct RunBinds<'a> {
    pub arm: &'a str,
    pub seed: u64,
    pub pods_created: u64,
    pub pods_bound: u64,
}

/// A warning for every external arm that bound nothing in a run that
/// created pods. A misspelt name, or a scheduler that is not running, leaves
/// every pod Pending; the tables show that only as numbers, and the lab
/// cannot know beforehand which names the cluster's schedulers answer to.
pub fn unbound_warnings<'a>(runs: impl IntoIterator<Item = RunBinds<'a>>, external: &BTreeSet<String>) -> Vec<String> {
    let mut idle: BTreeMap<&str, (Vec<u64>, u64)> = BTreeMap::new();
    for run in runs {
        if external.contains(run.arm) && run.pods_created > 0 && run.pods_bound == 0 {
            let (seeds, pods) = idle.entry(run.arm).or_default();
            seeds.push(run.seed);
            *pods += run.pods_created;
        }
    }
    idle.into_iter()
        .map(|(name, (seeds, pods))| {
            let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
            let (word, list) = match seeds.as_slice() {
                [one] => ("seed", one.clone()),
                _ => ("seeds", seeds.join(", ")),
            };
            format!(
                "warning: {PREFIX}{name} bound none of the {pods} pods of {word} {list}: no scheduler in the cluster \
                 took pods with schedulerName {name:?}. Is one running under that name (its profile's \
                 schedulerName)?"
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(arm: &str, seed: u64, pods_created: u64, pods_bound: u64) -> RunBinds<'_> {
        RunBinds {
            arm,
            seed,
            pods_created,
            pods_bound,
        }
    }

    #[test]
    fn an_external_arm_that_bound_nothing_is_named_with_its_seeds() {
        let external: BTreeSet<String> = ["nobody".to_string(), "someone".to_string()].into();
        let runs = [
            run("nobody", 1, 40, 0),
            run("someone", 1, 40, 38),
            run("default", 1, 40, 0),
            run("nobody", 2, 30, 0),
            run("someone", 2, 0, 0),
        ];
        let warnings = unbound_warnings(runs, &external);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        let w = &warnings[0];
        assert!(
            w.starts_with("warning: external:nobody bound none of the 70 pods of seeds 1, 2:"),
            "{w}"
        );
        assert!(w.contains("schedulerName \"nobody\""), "{w}");
        let one = unbound_warnings([run("nobody", 7, 5, 0), run("nobody", 8, 5, 1)], &external);
        assert_eq!(one.len(), 1);
        assert!(one[0].contains("the 5 pods of seed 7:"), "{}", one[0]);
        assert!(unbound_warnings([run("nobody", 1, 5, 1)], &external).is_empty());
    }

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
