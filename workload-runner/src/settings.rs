//! What the pod tells the program, through environment variables that
//! `kube_backend::objects::use_workload_image` sets (most of them from the
//! pod's own labels and annotations through the Downward API).

use schedlab_core::behaviour::ModelConfig;
use schedlab_core::pod::{Behaviour, PodId, PodSlot, WorkloadId};
use schedlab_core::resources::{Resources, parse_cpu_milli, parse_memory_bytes};

/// The pod's behaviour, JSON of `schedlab_core::pod::Behaviour` (required).
pub const BEHAVIOUR: &str = "SCHEDLAB_BEHAVIOUR";
/// The run's seed (required).
pub const SEED: &str = "SCHEDLAB_SEED";
/// The pod's id (required).
pub const POD_ID: &str = "SCHEDLAB_POD_ID";
/// The pod's slot: its workload index and ordinal (required: the model's
/// draws are keyed by the slot, not by the pod id).
pub const WORKLOAD: &str = "SCHEDLAB_WORKLOAD";
pub const ORDINAL: &str = "SCHEDLAB_ORDINAL";
/// Pods the owner created for the slot before this one (required).
pub const INCARNATION: &str = "SCHEDLAB_INCARNATION";
/// The container's limits as Kubernetes quantities ("500m", "256Mi"); absent,
/// empty or zero: no limit.
pub const CPU_LIMIT: &str = "SCHEDLAB_CPU_LIMIT";
pub const MEMORY_LIMIT: &str = "SCHEDLAB_MEMORY_LIMIT";
/// Scenario seconds per wall second (default 1).
pub const TIME_SCALE: &str = "SCHEDLAB_TIME_SCALE";
/// The run's behaviour-model tunables, JSON of `ModelConfig` (default: the defaults).
pub const MODEL: &str = "SCHEDLAB_MODEL";

/// Every variable the program reads.
pub const ALL: [&str; 11] = [
    BEHAVIOUR,
    SEED,
    POD_ID,
    WORKLOAD,
    ORDINAL,
    INCARNATION,
    CPU_LIMIT,
    MEMORY_LIMIT,
    TIME_SCALE,
    MODEL,
    "RUST_LOG",
];

/// Values quoted in errors are cut to this many characters.
const QUOTE_MAX: usize = 200;

/// An environment variable the program cannot use.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    #[error("{var} is not set ({what})")]
    Missing { var: &'static str, what: &'static str },
    #[error("{var}={value:?}: {reason}")]
    Invalid {
        var: &'static str,
        value: String,
        reason: String,
    },
}

impl SettingsError {
    fn invalid(var: &'static str, value: &str, reason: impl Into<String>) -> SettingsError {
        let value = if value.chars().count() > QUOTE_MAX {
            let cut: String = value.chars().take(QUOTE_MAX).collect();
            format!("{cut}…")
        } else {
            value.to_string()
        };
        SettingsError::Invalid {
            var,
            value,
            reason: reason.into(),
        }
    }

    /// The variable at fault.
    pub fn var(&self) -> &'static str {
        match self {
            SettingsError::Missing { var, .. } | SettingsError::Invalid { var, .. } => var,
        }
    }
}

/// Everything one start of the program needs besides its start number.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub behaviour: Behaviour,
    pub seed: u64,
    pub pod: PodId,
    pub slot: PodSlot,
    pub incarnation: u32,
    /// a zero dimension is no limit, as in `PodSpec::limits`
    pub limits: Resources,
    pub time_scale: f64,
    pub model: ModelConfig,
}

impl Settings {
    /// Reads the settings from the process environment.
    pub fn from_env() -> Result<Settings, SettingsError> {
        Settings::from_lookup(|var| std::env::var(var).ok())
    }

    /// Reads the settings through `lookup` (the environment, or a map in tests).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Settings, SettingsError> {
        let required = |var: &'static str, what: &'static str| {
            lookup(var)
                .filter(|v| !v.trim().is_empty())
                .ok_or(SettingsError::Missing { var, what })
        };
        let optional = |var: &'static str| lookup(var).filter(|v| !v.trim().is_empty());

        let text = required(BEHAVIOUR, "the pod's behaviour as JSON")?;
        let behaviour: Behaviour =
            serde_json::from_str(&text).map_err(|e| SettingsError::invalid(BEHAVIOUR, &text, e.to_string()))?;
        validate_behaviour(&behaviour).map_err(|reason| SettingsError::invalid(BEHAVIOUR, &text, reason))?;

        let seed = parse_int::<u64>(SEED, &required(SEED, "the run's seed")?)?;
        let pod = PodId(parse_int::<u64>(POD_ID, &required(POD_ID, "the pod's id")?)?);
        let workload = parse_int::<u32>(WORKLOAD, &required(WORKLOAD, "the pod's workload index")?)?;
        let ordinal = parse_int::<u32>(ORDINAL, &required(ORDINAL, "the pod's ordinal in its workload")?)?;
        let incarnation = parse_int::<u32>(INCARNATION, &required(INCARNATION, "the slot's incarnation")?)?;

        let cpu_milli = match optional(CPU_LIMIT) {
            Some(v) => parse_cpu_milli(v.trim()).map_err(|e| SettingsError::invalid(CPU_LIMIT, &v, e.to_string()))?,
            None => 0,
        };
        let memory_bytes = match optional(MEMORY_LIMIT) {
            Some(v) => {
                parse_memory_bytes(v.trim()).map_err(|e| SettingsError::invalid(MEMORY_LIMIT, &v, e.to_string()))?
            }
            None => 0,
        };

        let time_scale = match optional(TIME_SCALE) {
            Some(v) => {
                let scale: f64 = v
                    .trim()
                    .parse()
                    .map_err(|_| SettingsError::invalid(TIME_SCALE, &v, "not a number"))?;
                if !(scale.is_finite() && scale > 0.0) {
                    return Err(SettingsError::invalid(
                        TIME_SCALE,
                        &v,
                        "give a positive number (1 is real time, 60 plays a scenario hour in a wall minute)",
                    ));
                }
                scale
            }
            None => 1.0,
        };

        let model = match optional(MODEL) {
            Some(v) => {
                let model: ModelConfig =
                    serde_json::from_str(&v).map_err(|e| SettingsError::invalid(MODEL, &v, e.to_string()))?;
                model
                    .validate()
                    .map_err(|e| SettingsError::invalid(MODEL, &v, e.to_string()))?;
                model
            }
            None => ModelConfig::default(),
        };

        Ok(Settings {
            behaviour,
            seed,
            pod,
            slot: PodSlot {
                workload: WorkloadId(workload),
                ordinal,
            },
            incarnation,
            limits: Resources::new(cpu_milli, memory_bytes),
            time_scale,
            model,
        })
    }
}

fn parse_int<T: std::str::FromStr>(var: &'static str, value: &str) -> Result<T, SettingsError> {
    value
        .trim()
        .parse::<T>()
        .map_err(|_| SettingsError::invalid(var, value, "not a non-negative integer in range"))
}

fn validate_behaviour(b: &Behaviour) -> Result<(), String> {
    b.cpu_usage.validate().map_err(|e| format!("cpu_usage: {e}"))?;
    b.memory_usage.validate().map_err(|e| format!("memory_usage: {e}"))?;
    if let Some(run) = &b.run_seconds {
        run.validate().map_err(|e| format!("run_seconds: {e}"))?;
    }
    if !(b.crash_rate_per_hour.is_finite() && b.crash_rate_per_hour >= 0.0) {
        return Err(format!(
            "crash_rate_per_hour must be finite and >= 0, got {}",
            b.crash_rate_per_hour
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn base() -> HashMap<String, String> {
        env(&[
            (
                BEHAVIOUR,
                r#"{"cpu_usage":{"kind":"const","value":250},"memory_usage":{"kind":"const","value":1048576},"crash_rate_per_hour":2}"#,
            ),
            (SEED, "7"),
            (POD_ID, "42"),
            (WORKLOAD, "3"),
            (ORDINAL, "5"),
            (INCARNATION, "1"),
        ])
    }

    fn read(map: &HashMap<String, String>) -> Result<Settings, SettingsError> {
        Settings::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn reads_required_and_defaults() {
        let s = read(&base()).unwrap();
        assert_eq!(s.seed, 7);
        assert_eq!(s.pod, PodId(42));
        assert_eq!(s.slot.workload, WorkloadId(3));
        assert_eq!(s.slot.ordinal, 5);
        assert_eq!(s.incarnation, 1);
        assert_eq!(s.limits, Resources::ZERO);
        assert_eq!(s.time_scale, 1.0);
        assert_eq!(s.model, ModelConfig::default());
        assert_eq!(s.behaviour.crash_rate_per_hour, 2.0);
    }

    #[test]
    fn reads_limits_scale_and_model() {
        let mut m = base();
        m.insert(CPU_LIMIT.into(), "1500m".into());
        m.insert(MEMORY_LIMIT.into(), "64Mi".into());
        m.insert(TIME_SCALE.into(), "60".into());
        m.insert(MODEL.into(), r#"{"oom_delay_mean_seconds": 2.5}"#.into());
        let s = read(&m).unwrap();
        assert_eq!(s.limits, Resources::new(1500, 64 << 20));
        assert_eq!(s.time_scale, 60.0);
        assert_eq!(s.model.oom_delay_mean_seconds, 2.5);
    }

    #[test]
    fn missing_variables_are_named() {
        for var in [BEHAVIOUR, SEED, POD_ID, WORKLOAD, ORDINAL, INCARNATION] {
            let mut m = base();
            m.remove(var);
            let err = read(&m).unwrap_err();
            assert_eq!(err.var(), var);
            assert!(err.to_string().contains(var), "{err}");
            // empty counts as missing (a Downward API field of an absent label is empty)
            m.insert(var.into(), "".into());
            assert_eq!(read(&m).unwrap_err().var(), var);
        }
    }

    #[test]
    fn bad_values_name_the_variable_and_the_value() {
        let cases = [
            (SEED, "-1"),
            (POD_ID, "forty-two"),
            (WORKLOAD, "99999999999"),
            (TIME_SCALE, "0"),
            (TIME_SCALE, "fast"),
            (CPU_LIMIT, "lots"),
            (MEMORY_LIMIT, "12Qi"),
            (MODEL, r#"{"nope": 1}"#),
            (MODEL, r#"{"oom_delay_mean_seconds": 0}"#),
            (BEHAVIOUR, "{not json"),
            (
                BEHAVIOUR,
                r#"{"cpu_usage":{"kind":"const","value":1},"memory_usage":{"kind":"exponential","mean":0}}"#,
            ),
            (
                BEHAVIOUR,
                r#"{"cpu_usage":{"kind":"const","value":1},"memory_usage":{"kind":"const","value":1},"crash_rate_per_hour":-3}"#,
            ),
        ];
        for (var, value) in cases {
            let mut m = base();
            m.insert(var.into(), value.into());
            let err = read(&m).unwrap_err();
            assert_eq!(err.var(), var, "{value}: {err}");
            let text = err.to_string();
            assert!(text.contains(var) && text.contains(&format!("{value:?}")), "{text}");
        }
    }

    #[test]
    fn long_values_are_cut_in_errors() {
        let mut m = base();
        let long = format!("{{{}", "x".repeat(5000));
        m.insert(BEHAVIOUR.into(), long);
        let text = read(&m).unwrap_err().to_string();
        assert!(text.len() < 600, "{}", text.len());
        assert!(text.contains('…'));
    }
}
