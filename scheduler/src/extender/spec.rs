//! The `--arms` entry of an extender arm:
//! `extender:[NAME=]URL[#OPTION&OPTION...]`.
//!
//! - `URL` is the extender's `urlPrefix` (plain `http://`); the verbs are
//!   called at `URL/filter` and `URL/prioritize`.
//! - `NAME` is the arm's name in the run folder (default `extender`).
//! - Options, after `#` (a URL fragment is never sent to a server, so it
//!   cannot clash with the extender's own path or query):
//!   `timeout=DURATION` (`500ms`, `2s`; kube-scheduler's default 5s),
//!   `weight=N` (the extender's prioritize weight, a positive integer,
//!   default 1), `base=PROFILE` (the built-in profile the extender runs
//!   on top of, default `default`) and `ignorable=true` (kube-scheduler's
//!   `ignorable`: a failed filter call is skipped instead of failing the
//!   attempt).

use super::ExtenderError;
use crate::profile::Profile;
use crate::registry::PROFILES;
use serde::Serialize;
use std::time::Duration;

/// How an extender arm is written in `--arms`.
pub const PREFIX: &str = "extender:";
/// The arm's name when none is given.
pub const DEFAULT_NAME: &str = "extender";
/// kube-scheduler's extender `httpTimeout` when none is set (`DefaultExtenderTimeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// The longest timeout taken: longer would stall a run for minutes on one attempt.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(60);

/// An extender arm as given, checked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExtenderArm {
    /// the arm's name in the run folder
    pub arm: String,
    /// the `--arms` entry as given
    pub spec: String,
    /// the extender's URL prefix
    pub url: String,
    /// the prioritize weight
    pub weight: i64,
    /// each call's timeout
    #[serde(serialize_with = "as_millis")]
    pub timeout: Duration,
    /// the profile the extender runs on top of
    #[serde(serialize_with = "as_profile_name")]
    pub base: Profile,
    /// a failed filter call is skipped (the profile's nodes stand) instead
    /// of failing the attempt
    pub ignorable: bool,
}

fn as_millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_duration(*d))
}

fn as_profile_name<S: serde::Serializer>(p: &Profile, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(p.name)
}

/// A duration as the options write it: whole seconds as `5s`, else milliseconds.
pub fn format_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 && d.as_secs() > 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// Whether `spec`, an `--arms` entry, is an extender arm.
pub fn is_extender_arm(spec: &str) -> bool {
    spec.starts_with(PREFIX)
}

fn parse_duration(text: &str) -> Option<Duration> {
    let (number, unit) = match text.strip_suffix("ms") {
        Some(n) => (n, 1),
        None => (text.strip_suffix('s')?, 1000),
    };
    let n: u64 = number.parse().ok()?;
    Some(Duration::from_millis(n.checked_mul(unit)?))
}

/// Reads an `--arms` entry `extender:[NAME=]URL[#OPTIONS]`.
pub fn parse_arm(spec: &str) -> Result<ExtenderArm, ExtenderError> {
    let bad = |message: String| ExtenderError::Spec {
        spec: without_credentials(spec),
        message,
    };
    let rest = spec
        .strip_prefix(PREFIX)
        .ok_or_else(|| bad(format!("an extender arm starts with {PREFIX:?}")))?;
    let (rest, options) = match rest.split_once('#') {
        Some((rest, options)) => (rest, Some(options)),
        None => (rest, None),
    };
    // NAME= only when what precedes the first '=' could not be part of a URL's scheme or host
    let (name, url) = match rest.split_once('=') {
        Some((name, url)) if !name.contains([':', '/']) => (name, url),
        _ => (DEFAULT_NAME, rest),
    };
    crate::profile::file::check_arm_name(name).map_err(|why| bad(format!("{why}; name it with extender:NAME=URL")))?;
    check_url(url).map_err(bad)?;
    let mut arm = ExtenderArm {
        arm: name.to_string(),
        spec: spec.to_string(),
        url: url.trim_end_matches('/').to_string(),
        weight: 1,
        timeout: DEFAULT_TIMEOUT,
        base: crate::default::PROFILE,
        ignorable: false,
    };
    for option in options.into_iter().flat_map(|o| o.split('&')) {
        let Some((key, value)) = option.split_once('=') else {
            return Err(bad(format!(
                "option {option:?} is not KEY=VALUE (timeout=500ms, weight=2, base=binpack)"
            )));
        };
        match key {
            "timeout" => {
                arm.timeout = parse_duration(value)
                    .filter(|d| !d.is_zero() && *d <= MAX_TIMEOUT)
                    .ok_or_else(|| {
                        bad(format!(
                            "timeout={value}: give a duration from 1ms to {} such as 500ms or 2s",
                            format_duration(MAX_TIMEOUT)
                        ))
                    })?;
            }
            "weight" => {
                arm.weight = value
                    .parse::<i64>()
                    .ok()
                    .filter(|w| (1..=1_000_000).contains(w))
                    .ok_or_else(|| {
                        bad(format!(
                            "weight={value}: give a positive integer (kube-scheduler requires a positive weight), at most 1000000"
                        ))
                    })?;
            }
            "base" => {
                arm.base = PROFILES.iter().find(|p| p.name == value).copied().ok_or_else(|| {
                    let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
                    bad(format!(
                        "base={value}: the base is one of the profiles {}",
                        names.join(", ")
                    ))
                })?;
            }
            "ignorable" => {
                arm.ignorable = match value {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad(format!("ignorable={value}: give true or false"))),
                };
            }
            other => {
                return Err(bad(format!(
                    "unknown option {other:?}: the options are timeout, weight, base and ignorable"
                )));
            }
        }
    }
    Ok(arm)
}

/// `spec` with a URL's `USER:PASSWORD@` replaced, for messages.
fn without_credentials(spec: &str) -> String {
    let Some(scheme_end) = spec.find("://").map(|i| i + 3) else {
        return spec.to_string();
    };
    let authority_end = spec[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(spec.len(), |i| scheme_end + i);
    match spec[scheme_end..authority_end].rfind('@') {
        Some(at) => format!("{}[REDACTED]{}", &spec[..scheme_end], &spec[scheme_end + at..]),
        None => spec.to_string(),
    }
}

fn check_url(url: &str) -> Result<(), String> {
    if url.starts_with("https://") {
        return Err(format!(
            "{url:?}: only plain http:// extenders are supported (the lab's extender client has no TLS)"
        ));
    }
    let Some(after) = url.strip_prefix("http://") else {
        return Err(format!(
            "{url:?} is not an http:// URL (write extender:http://HOST:PORT/PATH)"
        ));
    };
    let host = after.split(['/', '?']).next().unwrap_or("");
    if host.contains('@') {
        // not echoed: what precedes '@' may be a password, and messages and manifests are shared
        return Err(
            "the URL carries credentials (USER:PASSWORD@HOST): an extender URL names a host only, and \
                    schedlab would have to show and record it"
                .to_string(),
        );
    }
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(format!("{url:?} names no host (write extender:http://HOST:PORT/PATH)"));
    }
    if url.contains('?') {
        return Err(format!(
            "{url:?} has a query: the verbs are appended to the URL as kube-scheduler's urlPrefix, so give a path only"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_in_the_url_are_refused_without_being_shown() {
        let err = parse_arm("extender:http://admin:hunter2-secret@127.0.0.1:8888/x")
            .unwrap_err()
            .to_string();
        assert!(err.contains("carries credentials"), "{err}");
        // the spec is quoted by the error's prefix: it must not be
        assert!(!err.contains("hunter2-secret"), "{err}");
    }

    #[test]
    fn the_name_url_and_options_are_read() {
        let arm = parse_arm("extender:http://127.0.0.1:8888/scheduler").unwrap();
        assert_eq!(
            (
                arm.arm.as_str(),
                arm.url.as_str(),
                arm.weight,
                arm.timeout,
                arm.base.name
            ),
            (
                "extender",
                "http://127.0.0.1:8888/scheduler",
                1,
                DEFAULT_TIMEOUT,
                "default"
            )
        );
        let arm = parse_arm("extender:spread=http://localhost:9/x/#timeout=250ms&weight=3&base=binpack").unwrap();
        assert_eq!(
            (
                arm.arm.as_str(),
                arm.url.as_str(),
                arm.weight,
                arm.timeout,
                arm.base.name
            ),
            (
                "spread",
                "http://localhost:9/x",
                3,
                Duration::from_millis(250),
                "binpack"
            )
        );
        assert_eq!(
            parse_arm("extender:a=http://h:1#timeout=2s").unwrap().timeout,
            Duration::from_secs(2)
        );
        assert!(!arm.ignorable);
        assert!(parse_arm("extender:http://h:1#ignorable=true").unwrap().ignorable);
    }

    #[test]
    fn bad_entries_are_refused_naming_the_value() {
        let cases = [
            ("extender:", "is not an http:// URL"),
            ("extender:https://h:1", "only plain http://"),
            ("extender:ftp://h", "is not an http:// URL"),
            ("extender:http://", "names no host"),
            ("extender:http://h:1/x?a=b", "has a query"),
            ("extender:default=http://h:1", "is a built-in arm's"),
            ("extender:a b=http://h:1", "is not 1 to 64"),
            ("extender:http://h:1#timeout=0ms", "timeout=0ms"),
            ("extender:http://h:1#timeout=5", "timeout=5"),
            ("extender:http://h:1#timeout=61s", "timeout=61s"),
            ("extender:http://h:1#weight=0", "weight=0"),
            ("extender:http://h:1#weight=x", "weight=x"),
            ("extender:http://h:1#base=random", "base=random"),
            ("extender:http://h:1#colour=red", "unknown option \"colour\""),
            ("extender:http://h:1#timeout", "is not KEY=VALUE"),
            ("extender:http://h:1#ignorable=yes", "ignorable=yes"),
        ];
        for (spec, want) in cases {
            let message = parse_arm(spec).unwrap_err().to_string();
            assert!(message.contains(want), "{spec}: {message}");
            assert!(message.contains(spec), "{spec}: {message}");
        }
    }

    #[test]
    fn durations_are_written_back_as_read() {
        for text in ["500ms", "5s", "1ms", "60s"] {
            assert_eq!(format_duration(parse_duration(text).unwrap()), text);
        }
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
    }
}
