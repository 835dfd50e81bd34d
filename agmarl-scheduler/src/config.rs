//! `--agmarl-config FILE`: the AGMARL controller's settings as JSON, any
//! subset of [`AgmarlConfig`]'s fields, as `schedlab scenario
//! --agmarl-config` reads them (e.g. `{"preemption": false}` to leave pods no
//! node takes unschedulable instead of preempting for them).

use scheduler::agmarl::{AgmarlConfig, Variant};
use std::path::Path;

/// Largest configuration file read.
pub const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Why `--agmarl-config` cannot be used; the file is named in every case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("--agmarl-config {file}: {message}")]
    Unreadable { file: String, message: String },
    #[error("--agmarl-config {file}: {message}")]
    Invalid { file: String, message: String },
    #[error(
        "--agmarl-config {file}: variant {variant:?} is for schedlab's ablation arms; the in-cluster scheduler runs \
         the full method (drop \"variant\")"
    )]
    Variant { file: String, variant: &'static str },
}

/// Reads and checks the configuration file `path`.
pub fn read(path: &Path) -> Result<AgmarlConfig, ConfigError> {
    let file = path.display().to_string();
    let text =
        schedlab_core::input::read_bounded_string(path, MAX_CONFIG_BYTES).map_err(|e| ConfigError::Unreadable {
            file: file.clone(),
            message: e.to_string(),
        })?;
    let invalid = |message: String| ConfigError::Invalid {
        file: file.clone(),
        message,
    };
    let config: AgmarlConfig = schedlab_core::json_input::parse_object(&text).map_err(|e| invalid(e.to_string()))?;
    config.validate().map_err(|e| invalid(e.to_string()))?;
    if config.variant != Variant::Full {
        return Err(ConfigError::Variant {
            file,
            variant: config.variant.arm_name(),
        });
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, text: &str) -> std::path::PathBuf {
        let path = dir.path().join("agmarl.json");
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn preemption_is_on_unless_the_file_turns_it_off() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read(&write(&dir, "{}")).unwrap().preemption);
        let off = read(&write(&dir, r#"{"preemption": false}"#)).unwrap();
        assert!(!off.preemption);
        assert_eq!(
            off,
            AgmarlConfig {
                preemption: false,
                ..AgmarlConfig::default()
            }
        );
    }

    #[test]
    fn a_bad_file_is_named_with_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let err = read(&missing).unwrap_err();
        assert!(matches!(err, ConfigError::Unreadable { .. }), "{err}");
        assert!(err.to_string().contains("missing.json"), "{err}");
        for (text, needle) in [
            (r#"{"preemption": "no"}"#, "preemption"),
            (r#"{"preemptoin": false}"#, "preemptoin"),
            ("[]", "array"),
            (r#"{"delta_lex": 2}"#, "delta_lex"),
        ] {
            let err = read(&write(&dir, text)).unwrap_err().to_string();
            assert!(err.contains("agmarl.json") && err.contains(needle), "{text}: {err}");
        }
        let err = read(&write(&dir, r#"{"variant": "agmarl-nognn"}"#)).unwrap_err();
        assert!(matches!(err, ConfigError::Variant { .. }), "{err}");
        assert!(err.to_string().contains("agmarl-nognn"), "{err}");
        assert!(read(&write(&dir, r#"{"variant": "agmarl"}"#)).is_ok());
    }
}
