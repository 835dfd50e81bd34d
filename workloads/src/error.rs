//! Scenario errors: one line each, naming where the scenario came from, the
//! field path, the offending value and what is wrong with it.

use std::fmt;

/// Where a value was written in a scenario file (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loc {
    pub line: u64,
    pub column: u64,
}

impl Loc {
    /// None for serde-saphyr's "unknown" location (line 0).
    pub(crate) fn known(line: u64, column: u64) -> Option<Loc> {
        (line > 0).then_some(Loc { line, column })
    }
}

impl fmt::Display for Loc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Why a scenario could not be loaded: every error of the crate's public API.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Neither a built-in name nor an existing file.
    #[error(
        "unknown scenario `{}`: it is not a built-in (built-ins: {builtins}) and no file has that path",
        shown(name)
    )]
    UnknownScenario { name: String, builtins: String },

    /// The scenario file exists but cannot be read.
    #[error("scenario {}: cannot read the file: {source}", one_line(origin))]
    Read {
        origin: String,
        #[source]
        source: std::io::Error,
    },

    /// Not valid YAML, or YAML of the wrong shape (unknown field, missing
    /// field, a list where a mapping belongs, ...).
    #[error("scenario {}: {}", one_line(origin), syntax_detail(path.as_deref(), message, *location))]
    Syntax {
        origin: String,
        path: Option<String>,
        message: String,
        location: Option<Loc>,
    },

    /// Well-formed YAML with a value that is not allowed.
    #[error("scenario {}: {}", one_line(origin), invalid_detail(path, value.as_deref(), reason, *location))]
    Invalid {
        origin: String,
        path: String,
        value: Option<String>,
        reason: String,
        location: Option<Loc>,
    },

    /// A `replay` phase's trace file is missing, unreadable or malformed:
    /// names the file and, for a bad row, its line and column.
    #[error("scenario {}: {path} = {}: {source}", one_line(origin), shown(file))]
    Trace {
        origin: String,
        path: String,
        file: String,
        /// boxed: a trace error is large and rare, scenario errors are common
        #[source]
        source: Box<crate::trace::TraceError>,
    },

    /// A `--set key=value` that names no param or gives a value of the wrong type.
    #[error(
        "scenario {}: --set {}: {} (known params: {})",
        one_line(origin),
        shown(arg),
        one_line(reason),
        one_line(known)
    )]
    Override {
        origin: String,
        arg: String,
        reason: String,
        known: String,
    },
}

/// The name the crate's modules (and its users) know [`Error`] by.
pub type ScenarioError = Error;

pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Whether the user's input caused it: every scenario error is about the
    /// scenario the user named, its file, its traces or a `--set`.
    pub fn is_input_error(&self) -> bool {
        match self {
            Error::UnknownScenario { .. }
            | Error::Read { .. }
            | Error::Syntax { .. }
            | Error::Invalid { .. }
            | Error::Trace { .. }
            | Error::Override { .. } => true,
        }
    }
}

impl schedlab_core::error::UserInput for Error {
    fn is_input_error(&self) -> bool {
        Error::is_input_error(self)
    }
}

impl ScenarioError {
    /// The scenario's origin ("builtin:NAME" or the file path), where known.
    pub fn origin(&self) -> Option<&str> {
        match self {
            ScenarioError::UnknownScenario { .. } => None,
            ScenarioError::Read { origin, .. }
            | ScenarioError::Syntax { origin, .. }
            | ScenarioError::Invalid { origin, .. }
            | ScenarioError::Trace { origin, .. }
            | ScenarioError::Override { origin, .. } => Some(origin),
        }
    }

    /// The field path the error is about (e.g. `phases[2].create.count`), where known.
    pub fn path(&self) -> Option<&str> {
        match self {
            ScenarioError::Syntax { path, .. } => path.as_deref(),
            ScenarioError::Invalid { path, .. } | ScenarioError::Trace { path, .. } => Some(path),
            _ => None,
        }
    }

    /// Where in the file the offending value was written, where known.
    pub fn location(&self) -> Option<Loc> {
        match self {
            ScenarioError::Syntax { location, .. } | ScenarioError::Invalid { location, .. } => *location,
            _ => None,
        }
    }

    pub(crate) fn invalid(
        origin: &str,
        path: impl Into<String>,
        value: Option<String>,
        reason: impl Into<String>,
        location: Option<Loc>,
    ) -> ScenarioError {
        ScenarioError::Invalid {
            origin: origin.to_string(),
            path: path.into(),
            value,
            reason: reason.into(),
            location,
        }
    }
}

fn syntax_detail(path: Option<&str>, message: &str, location: Option<Loc>) -> String {
    let mut s = String::new();
    if let Some(p) = path {
        s.push_str(&one_line(p));
        s.push_str(": ");
    }
    s.push_str(&one_line(message));
    if let Some(l) = location {
        s.push_str(&format!(" ({l})"));
    }
    s
}

fn invalid_detail(path: &str, value: Option<&str>, reason: &str, location: Option<Loc>) -> String {
    let mut s = one_line(path);
    if let Some(v) = value {
        s.push_str(" = ");
        s.push_str(&shown(v));
    }
    s.push_str(": ");
    s.push_str(&one_line(reason));
    if let Some(l) = location {
        s.push_str(&format!(" ({l})"));
    }
    s
}

/// Keeps an error on one line whatever text it quotes, and its control
/// characters (ESC, BEL, ...) from the terminal: see [`schedlab_core::text`].
pub(crate) fn one_line(s: &str) -> String {
    schedlab_core::text::escape_controls(s).into_owned()
}

/// A value as shown in an error: on one line, escaped, visibly empty, and
/// cut when long.
pub(crate) fn shown(v: &str) -> String {
    if v.is_empty() {
        return "\"\"".to_string();
    }
    schedlab_core::text::quoted(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_names_origin_path_value_and_location() {
        let e = ScenarioError::invalid(
            "my.yaml",
            "phases[2].create.count",
            Some("-3".into()),
            "expected a non-negative integer",
            Some(Loc { line: 7, column: 14 }),
        );
        assert_eq!(
            e.to_string(),
            "scenario my.yaml: phases[2].create.count = -3: expected a non-negative integer (line 7, column 14)"
        );
        assert_eq!(e.path(), Some("phases[2].create.count"));
        assert_eq!(e.origin(), Some("my.yaml"));
    }

    /// Found by schedlab-fuzz (scenario): a `--set` key with a line break
    /// made a multi-line message, through the reason that quotes it.
    #[test]
    fn an_override_with_a_line_break_stays_on_one_line() {
        let text = "name: x\nduration: 1m\ncluster:\n  pools:\n    - {name: a, count: 1, machine_type: m, hourly_price: 0, capacity: {cpu: 1, memory: 1Gi}}\n";
        for arg in ["a\r\nb=1", "a\rb", "nodes\n=1"] {
            let e = crate::parse_str_with("t.yaml", text, &[arg.to_string()])
                .unwrap_err()
                .to_string();
            assert!(!e.contains(['\n', '\r']), "{e:?}");
            assert!(e.starts_with("scenario t.yaml: --set "), "{e:?}");
        }
    }

    /// Hardening round 2, item 15: ESC, OSC and BEL in a `--set` value, a
    /// scenario's name or a value reached the terminal raw.
    #[test]
    fn control_characters_from_the_user_are_escaped() {
        let text = "name: x\nduration: 1m\ncluster:\n  pools:\n    - {name: a, count: 1, machine_type: m, hourly_price: 0, capacity: {cpu: 1, memory: 1Gi}}\n";
        let e = crate::parse_str_with(
            "t\u{1b}]0;pwned\u{7}.yaml",
            text,
            &["no\u{1b}[2J=\u{1b}]0;x\u{7}".to_string()],
        )
        .unwrap_err()
        .to_string();
        assert!(!e.contains(['\u{1b}', '\u{7}']), "{e:?}");
        assert!(e.contains("\\e[2J"), "{e:?}");
        let e = ScenarioError::invalid("x", "p", Some("v\u{1b}[31m\u{9b}".into()), "r\u{7}", None).to_string();
        assert!(!e.contains(['\u{1b}', '\u{7}', '\u{9b}']), "{e:?}");
        let e = crate::load("no-such\u{1b}]0;x\u{7}", &[]).unwrap_err().to_string();
        assert!(!e.contains(['\u{1b}', '\u{7}']), "{e:?}");
    }

    #[test]
    fn messages_stay_on_one_line() {
        let e = ScenarioError::invalid("x", "templates.a\nb", Some("a\nb".into()), "bad\nthing", None);
        assert!(!e.to_string().contains('\n'));
        assert_eq!(shown(""), "\"\"");
        assert!(shown(&"x".repeat(200)).ends_with('…'));
    }
}
