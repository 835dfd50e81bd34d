//! YAML text to [`RawScenario`], with YAML and shape errors turned into
//! [`ScenarioError::Syntax`] carrying the field path and line:column.

use crate::error::{Loc, ScenarioError};
use crate::raw::RawScenario;
use crate::scalar::EXPECTING_SCALAR;
use serde_path_to_error::{Path, Segment};

pub(crate) fn parse_raw(origin: &str, text: &str) -> Result<RawScenario, ScenarioError> {
    let refused = |failed: Box<Failed>| syntax_error(origin, failed.path, &failed.error);
    match parse_with(text, serde_saphyr::Options::default()) {
        Err(first) if is_only_large(&first.error) => {
            // A document over the reader's value budget by its size alone (the
            // resolved form of a scenario that replays large traces carries every
            // pod inline) is read again with a budget of its size, and no aliases,
            // which are how a small file expands: what it holds stays bounded by
            // its bytes. One that uses aliases keeps the first refusal.
            match parse_with(text, sized_options(text.len())) {
                Err(again) if is_alias_breach(&again.error) => Err(refused(first)),
                other => other.map_err(refused),
            }
        }
        other => other.map_err(refused),
    }
}

/// The reader's error, and the field path it was at where known.
struct Failed {
    error: serde_saphyr::Error,
    path: Option<String>,
}

fn parse_with(text: &str, options: serde_saphyr::Options) -> Result<RawScenario, Box<Failed>> {
    let mut path = None;
    let result = serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        serde_path_to_error::deserialize::<_, RawScenario>(de).map_err(|e| {
            path = field_path(e.path(), &e.inner().to_string());
            e.into_inner()
        })
    });
    result.map_err(|error| Box::new(Failed { error, path }))
}

/// The default budget with room for as many values, events and scalar bytes
/// as a text of `bytes` can hold without aliases (a value takes at least a
/// byte and a separator), and no aliases or anchors at all.
fn sized_options(bytes: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::budget::Budget::default();
    budget.max_nodes = budget.max_nodes.max(bytes);
    budget.max_events = budget.max_events.max(bytes.saturating_mul(2));
    budget.max_total_scalar_bytes = budget.max_total_scalar_bytes.max(bytes);
    budget.max_aliases = 0;
    budget.max_anchors = 0;
    let mut options = serde_saphyr::Options::default();
    options.budget = Some(budget);
    options
}

/// The reader's own error inside the snippet and alias-site wrappers.
fn innermost(mut e: &serde_saphyr::Error) -> &serde_saphyr::Error {
    while let serde_saphyr::Error::AliasError { error, .. } | serde_saphyr::Error::WithSnippet { error, .. } = e {
        e = error;
    }
    e
}

fn breach(e: &serde_saphyr::Error) -> Option<&serde_saphyr::budget::BudgetBreach> {
    match innermost(e) {
        serde_saphyr::Error::Budget { breach, .. } => Some(breach),
        _ => None,
    }
}

/// Refused for holding too many values or events, not for how it holds them.
fn is_only_large(e: &serde_saphyr::Error) -> bool {
    use serde_saphyr::budget::BudgetBreach as B;
    matches!(
        breach(e),
        Some(B::Nodes { .. } | B::Events { .. } | B::ScalarBytes { .. })
    )
}

fn is_alias_breach(e: &serde_saphyr::Error) -> bool {
    use serde_saphyr::budget::BudgetBreach as B;
    matches!(
        breach(e),
        Some(B::Aliases { .. } | B::Anchors { .. } | B::AliasAnchorRatio { .. })
    )
}

fn syntax_error(origin: &str, path: Option<String>, e: &serde_saphyr::Error) -> ScenarioError {
    let e = e.without_snippet();
    let location = e.location().and_then(|l| Loc::known(l.line(), l.column()));
    if let Some(message) = own_words(e) {
        return ScenarioError::Syntax {
            origin: origin.to_string(),
            path,
            message,
            location,
        };
    }
    let mut message = e.to_string();
    // serde-saphyr ends its messages with the location, which we show in our own form
    if let Some(l) = location {
        let suffix = format!(" at line {}, column {}", l.line, l.column);
        if let Some(stripped) = message.strip_suffix(&suffix) {
            message = stripped.to_string();
        }
    }
    // advice meant for programs that embed serde-saphyr, not for scenario authors
    let message = message.replace(", set DuplicateKeyPolicy in Options if acceptable", "");
    ScenarioError::Syntax {
        origin: origin.to_string(),
        path,
        message,
        location,
    }
}

/// Our words for the errors whose serde-saphyr text addresses the program
/// that embeds it ("use from_str_multiple", "the configured policy",
/// "budget breached: Nodes { .. }") rather than the scenario's author.
fn own_words(e: &serde_saphyr::Error) -> Option<String> {
    use serde_saphyr::Error;
    match innermost(e) {
        Error::MultipleDocuments { .. } => Some(
            "a second YAML document (after `---`): a scenario file holds exactly one; put each scenario in its own file"
                .to_string(),
        ),
        Error::NonFiniteFloat { value, .. } => Some(format!("`{value}` is not a finite number")),
        Error::Budget { breach, .. } => Some(budget_words(breach)),
        _ => None,
    }
}

/// What a breach of the YAML reader's budget (serde-saphyr's defaults, which
/// keep a hostile file from taking the machine) means, with the limit.
fn budget_words(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    use serde_saphyr::budget::{Budget, BudgetBreach as B};
    let limit = Budget::default();
    let (what, found, max) = match *breach {
        B::Events { events } => ("YAML events", events, limit.max_events),
        B::Aliases { aliases } => ("aliases (`*name`)", aliases, limit.max_aliases),
        B::Anchors { anchors } => ("anchors (`&name`)", anchors, limit.max_anchors),
        B::Depth { depth } => ("levels of nesting", depth, limit.max_depth),
        B::Documents { documents } => ("YAML documents", documents, limit.max_documents),
        B::Nodes { nodes } => ("YAML values (mappings, sequences and scalars)", nodes, limit.max_nodes),
        B::ScalarBytes { total_scalar_bytes } => {
            ("bytes of scalar text", total_scalar_bytes, limit.max_total_scalar_bytes)
        }
        B::MergeKeys { merge_keys } => ("merge keys (`<<`)", merge_keys, limit.max_merge_keys),
        B::RecordedAnchorEvents { recorded_anchor_events } => (
            "YAML events under anchors",
            recorded_anchor_events,
            limit.max_recorded_anchor_events,
        ),
        B::RecordedAnchorBytes { recorded_anchor_bytes } => (
            "bytes under anchors",
            recorded_anchor_bytes,
            limit.max_recorded_anchor_bytes,
        ),
        B::AliasAnchorRatio { aliases, anchors } => {
            return format!(
                "{aliases} aliases of {anchors} anchors: more than {} uses of each anchor, which is how a small file expands without bound",
                limit.alias_anchor_ratio_multiplier
            );
        }
        _ => return "the file is larger or deeper than a scenario file may be".to_string(),
    };
    format!("more than {max} {what} ({found} so far): larger or deeper than a scenario file may be")
}

/// `phases[2].create.count`, from serde's path; None where it says nothing.
fn field_path(path: &Path, message: &str) -> Option<String> {
    let mut segments: Vec<String> = Vec::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => segments.push(format!("[{index}]")),
            Segment::Map { key } => segments.push(key.clone()),
            Segment::Enum { variant } => segments.push(variant.clone()),
            Segment::Unknown => return None,
        }
    }
    // A leaf is read through serde-saphyr's `Spanned`, which adds a `value`
    // step of its own below the field.
    if message.contains(EXPECTING_SCALAR) && segments.last().is_some_and(|s| s == "value") {
        segments.pop();
    }
    if segments.is_empty() {
        return None;
    }
    let mut out = String::new();
    for s in segments {
        if !s.starts_with('[') && !out.is_empty() {
            out.push('.');
        }
        out.push_str(&s);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse_raw("t.yaml", text).unwrap_err().to_string()
    }

    #[test]
    fn unknown_fields_carry_path_and_location() {
        let e = err("name: x\nduration: 1h\ncluster:\n  pools:\n    - name: a\n      cuont: 3\n");
        assert!(
            e.starts_with("scenario t.yaml: cluster.pools[0].cuont: unknown field `cuont`"),
            "{e}"
        );
        assert!(e.contains("(line 6, column 7)"), "{e}");
    }

    #[test]
    fn type_errors_name_the_field_not_the_wrapper() {
        let e = err("name: [a, b]\nduration: 1h\ncluster: {pools: []}\n");
        assert!(e.starts_with("scenario t.yaml: name: invalid type: sequence"), "{e}");
    }

    #[test]
    fn phases_need_exactly_one_kind() {
        let base = "name: x\nduration: 1h\ncluster: {pools: []}\nphases:\n";
        let e = err(&format!("{base}  - wait: 5m\n    create: {{template: a, count: 1}}\n"));
        assert!(
            e.contains("phases[0]") && e.contains("found both `wait` and `create`"),
            "{e}"
        );
        let e = err(&format!("{base}  - at: 5m\n"));
        assert!(e.contains("phases[0]") && e.contains("a phase needs one of"), "{e}");
        let e = err(&format!("{base}  - frobnicate: 1\n"));
        assert!(e.contains("phases[0].frobnicate: unknown field `frobnicate`"), "{e}");
    }

    #[test]
    fn reader_errors_speak_to_the_author_not_the_programmer() {
        let base = "name: x\nduration: 1h\ncluster: {pools: []}\n";
        let e = err(&format!("{base}---\n{base}"));
        assert!(e.contains("a second YAML document"), "{e}");
        assert!(!e.contains("from_str_multiple"), "{e}");
        let e = err("name: x\nduration: 1h\ncluster:\n  pools:\n    - name: a\n      hourly_price: .nan\n");
        assert!(e.contains("`.nan` is not a finite number"), "{e}");
        assert!(!e.contains("policy"), "{e}");
        // 28,800 phases of 9 values each, 25,600 of them aliases of 3,200 anchors
        let many: Vec<String> = (0..3200)
            .map(|i| {
                format!(
                    "&a{i} {{at: 1s, create: {{template: a, count: 1}}}}, {}",
                    vec![format!("*a{i}"); 8].join(", ")
                )
            })
            .collect();
        let e = err(&format!(
            "name: x\nduration: 1h\ncluster: {{pools: []}}\nphases: [{}]\n",
            many.join(", ")
        ));
        assert!(e.contains("more than 250000 YAML values"), "{e}");
        assert!(!e.contains("Nodes {") && !e.contains("breached"), "{e}");
    }

    /// Found by schedlab-fuzz (scenario): the resolved form of 2,892 replays
    /// of the bundled trace, every pod inline, held more values than the
    /// reader's budget, so a scenario that loaded did not load again from
    /// its resolved form. Without aliases a document holds no more values
    /// than its size allows, and is read whatever its count.
    #[test]
    fn a_large_document_without_aliases_is_read() {
        let many = vec!["{wait: 1s}"; 90_000].join(", ");
        let raw = parse_raw(
            "t.json",
            &format!("name: x\nduration: 1h\ncluster: {{pools: []}}\nphases: [{many}]\n"),
        )
        .unwrap();
        assert_eq!(raw.phases.len(), 90_000);
    }

    #[test]
    fn broken_yaml_is_a_syntax_error_with_location() {
        let e = parse_raw("t.yaml", "name: [x\n").unwrap_err();
        assert!(matches!(e, ScenarioError::Syntax { .. }));
        assert!(e.location().is_some(), "{e}");
        assert!(!e.to_string().contains('\n'));
    }
}
