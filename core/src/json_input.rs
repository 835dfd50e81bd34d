//! A JSON document a user can hand us or damage (a run folder's manifests, a
//! checkpoint's sidecar, a configuration file), parsed into a typed value
//! with an error that names the field and says what was wrong in the
//! document's terms, where serde's own text speaks of Rust ("expected struct
//! Manifest with 7 elements" for an array in place of an object).

use serde::de::DeserializeOwned;

/// Why a JSON document is not the object it should be. The message has no
/// file name: the caller names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct JsonInputError {
    pub message: String,
}

/// Characters of a message at most (serde quotes a wrong value whole).
const MAX_MESSAGE_CHARS: usize = 300;

/// Parses `text` as one JSON object of type `T`.
/// A leading UTF-8 byte-order mark is skipped.
pub fn parse_object<T: DeserializeOwned>(text: &str) -> Result<T, JsonInputError> {
    let text = crate::text::strip_bom(text);
    // serde quotes the document's values: escaped and cut like any outside text
    let fail = |message: String| {
        Err(JsonInputError {
            message: crate::text::capped(&message, MAX_MESSAGE_CHARS),
        })
    };
    match text.trim_start().chars().next() {
        None => return fail("it is empty, where a JSON object ({ ... }) belongs".into()),
        Some('{') => {}
        Some(c) => {
            let kind = match c {
                '[' => "a JSON array",
                '"' => "a JSON string",
                't' | 'f' => "a JSON boolean",
                'n' => "JSON null",
                '-' | '0'..='9' => "a JSON number",
                _ => "no JSON",
            };
            return fail(format!("it holds {kind}, where a JSON object ({{ ... }}) belongs"));
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed: Result<T, _> = serde_path_to_error::deserialize(&mut de);
    let value = match parsed {
        Ok(value) => value,
        Err(e) => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let at = format!("(line {}, column {})", inner.line(), inner.column());
            let what = serde_words(&inner);
            return fail(if path.is_empty() || path == "." {
                format!("{what} {at}")
            } else {
                format!("field `{path}`: {what} {at}")
            });
        }
    };
    if let Err(e) = de.end() {
        return fail(format!(
            "text after the object (line {}, column {})",
            e.line(),
            e.column()
        ));
    }
    Ok(value)
}

/// serde_json's message without its trailing position, which the caller
/// writes in its own form.
fn serde_words(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Doc {
        name: String,
        seeds: Vec<u32>,
    }

    fn err(text: &str) -> String {
        parse_object::<Doc>(text).unwrap_err().to_string()
    }

    #[test]
    fn a_well_formed_object_parses() {
        let d: Doc = parse_object(r#" {"name": "a", "seeds": [1, 2]} "#).unwrap();
        assert_eq!(d.seeds, vec![1, 2]);
    }

    #[test]
    fn the_wrong_kind_of_document_is_named_in_json_terms() {
        for (text, kind) in [
            ("[1, 2, 3]", "a JSON array"),
            ("[]", "a JSON array"),
            ("\"a\"", "a JSON string"),
            ("12", "a JSON number"),
            ("null", "JSON null"),
            ("\u{0}garbage", "no JSON"),
            ("   ", "it is empty"),
        ] {
            let e = err(text);
            assert!(e.contains(kind), "{text:?}: {e}");
            assert!(!e.contains("struct") && !e.contains("elements"), "{text:?}: {e}");
        }
    }

    #[test]
    fn a_wrong_field_is_named_with_its_path_and_position() {
        let e = err(r#"{"name": "a", "seeds": [1, "x"]}"#);
        assert!(e.starts_with("field `seeds[1]`: invalid type: string \"x\""), "{e}");
        assert!(e.ends_with("(line 1, column 30)"), "{e}");
        let e = err(r#"{"name": "a", "seeds": [], "extra": 1}"#);
        assert!(e.contains("unknown field `extra`"), "{e}");
        let e = err(r#"{"name": "a"}"#);
        assert!(e.contains("missing field `seeds`"), "{e}");
        let e = err(r#"{"name": "a", "seeds": []} {"#);
        assert!(e.starts_with("text after the object"), "{e}");
        let e = err(r#"{"name": "a", "se"#);
        assert!(e.contains("EOF") || e.contains("end"), "{e}");
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let d: Doc = parse_object("\u{feff}{\"name\": \"a\", \"seeds\": [1]}").unwrap();
        assert_eq!(d.seeds, vec![1]);
    }

    #[test]
    fn a_quoted_value_is_escaped_and_cut() {
        let long = "y".repeat(10_000);
        let e = err(&format!(
            "{{\"name\": \"a\", \"seeds\": [\"\\u001b]0;x\\u0007{long}\"]}}"
        ));
        assert!(!e.contains('\u{1b}') && !e.contains('\u{7}'), "{e:?}");
        assert!(e.chars().count() <= MAX_MESSAGE_CHARS + 1, "{}", e.len());
    }
}
