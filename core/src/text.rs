//! Text from outside (a file, a server, a tool, the command line) as
//! messages and terminal tables show it: control characters escaped, so
//! that no ESC, OSC or BEL reaches the terminal raw and a message stays on
//! one line, and, where asked, cut to a length.

use std::borrow::Cow;

/// The byte-order mark some editors put at the start of a UTF-8 file.
pub const BOM: char = '\u{feff}';

/// `text` without a leading UTF-8 byte-order mark: a CSV or JSON file saved
/// by a spreadsheet or a Windows editor starts with one, which is no part
/// of its first column name or its first value.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// Whether `c` must not reach a terminal raw: the C0 controls (line breaks
/// and tabs included), DEL, the C1 controls (U+0080..=U+009F, of which
/// U+009B opens a control sequence as ESC `[` does) and the marks that
/// reorder or hide text (bidirectional overrides and isolates).
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{2028}' | '\u{2029}'
        )
}

/// `text` with every [`is_unsafe`] character escaped: `\n`, `\r`, `\t`,
/// `\e` for ESC and `\u{..}` for the rest; a backslash is kept as it is.
/// Text with nothing to escape is borrowed as is.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

/// [`escape_controls`], keeping the characters of `keep` as they are: a
/// terminal table or a tab-separated listing keeps its `\n` and `\t`.
pub fn escape_controls_except<'a>(text: &'a str, keep: &[char]) -> Cow<'a, str> {
    if !text.chars().any(|c| is_unsafe(c) && !keep.contains(&c)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if keep.contains(&c) {
            out.push(c);
        } else {
            push_escaped(&mut out, c);
        }
    }
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        '\u{1b}' => out.push_str("\\e"),
        c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        c => out.push(c),
    }
}

/// `text` escaped ([`escape_controls`]) and cut after `max` characters of
/// the original, with `…` where it was cut. The text is walked only as far
/// as the cut, so a huge text costs no more than a short one.
pub fn capped(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == max {
            out.push('…');
            return out;
        }
        push_escaped(&mut out, c);
    }
    out
}

/// How many characters of outside text a message quotes at most.
pub const QUOTE_CHARS: usize = 80;

/// `text` as a message quotes it: [`capped`] at [`QUOTE_CHARS`].
pub fn quoted(text: &str) -> String {
    capped(text, QUOTE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_the_rest_kept() {
        assert_eq!(escape_controls("plain é ü 名"), "plain é ü 名");
        assert!(matches!(escape_controls("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape_controls("a\u{1b}]0;title\u{7}b\u{1b}[31mred\r\n\t\u{9b}2J\u{7f}\u{202e}x\\y"),
            "a\\e]0;title\\u{7}b\\e[31mred\\r\\n\\t\\u{9b}2J\\u{7f}\\u{202e}x\\y"
        );
        let shown = escape_controls("\u{0}\u{1}\u{1f}\u{85}\u{2028}");
        assert!(!shown.chars().any(is_unsafe), "{shown:?}");
    }

    #[test]
    fn some_controls_can_be_kept() {
        assert_eq!(
            escape_controls_except("a\tb\n\u{1b}[2J\r", &['\n', '\t']),
            "a\tb\n\\e[2J\\r"
        );
        assert!(matches!(
            escape_controls_except("a\tb\n", &['\n', '\t']),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn capped_cuts_long_text_and_escapes_what_it_keeps() {
        assert_eq!(capped("short", 80), "short");
        assert_eq!(capped(&"x".repeat(81), 80), format!("{}…", "x".repeat(80)));
        assert_eq!(capped(&"x".repeat(80), 80), "x".repeat(80));
        assert_eq!(capped("a\u{1b}b", 2), "a\\e…");
        assert_eq!(quoted(&"é".repeat(10_000)).chars().count(), QUOTE_CHARS + 1);
    }

    #[test]
    fn a_byte_order_mark_is_stripped_once_and_only_at_the_start() {
        assert_eq!(strip_bom("\u{feff}name,cpu"), "name,cpu");
        assert_eq!(strip_bom("name\u{feff}"), "name\u{feff}");
        assert_eq!(strip_bom("\u{feff}\u{feff}x"), "\u{feff}x");
        assert_eq!(strip_bom(""), "");
    }
}
