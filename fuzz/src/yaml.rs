//! A YAML tree and a writer that writes it in a randomly chosen style.
//!
//! Inputs are kept as trees rather than text so that mutations can reshape
//! them (drop a key, swap two values, alias a subtree) and still write out
//! YAML that gets past the parser to the checks behind it; the style (block
//! or flow, indentation, quoting, comments, line ends, document markers)
//! varies independently, since the same document written another way must
//! load the same.

use crate::generate::pick;
use rand::Rng;

/// A YAML node.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// written as is: numbers, `.nan`, `~`, `true`
    Plain(String),
    /// a string, quoted when it has to be
    Str(String),
    /// a credential planted in the input, which no message may show; structure
    /// mutations never move or copy it, so it stays where credentials belong
    Secret(String),
    Seq(Vec<Node>),
    Map(Vec<(String, Node)>),
    Anchor(String, Box<Node>),
    Alias(String),
    /// `!tag node`
    Tagged(String, Box<Node>),
    /// `depth` flow sequences (or single-key maps) around `inner`, written in
    /// a loop: a nesting thousands deep would overflow the stack of a writer
    /// (or a mutation) that recursed once per level
    Nested {
        depth: usize,
        maps: bool,
        inner: Box<Node>,
    },
}

impl Node {
    /// The tree of a parsed JSON value (what serde-saphyr makes of a scenario).
    pub fn from_json(v: &serde_json::Value) -> Node {
        match v {
            serde_json::Value::Null => Node::Plain("null".into()),
            serde_json::Value::Bool(b) => Node::Plain(b.to_string()),
            serde_json::Value::Number(n) => Node::Plain(n.to_string()),
            serde_json::Value::String(s) => Node::Str(s.clone()),
            serde_json::Value::Array(a) => Node::Seq(a.iter().map(Node::from_json).collect()),
            serde_json::Value::Object(o) => Node::Map(o.iter().map(|(k, v)| (k.clone(), Node::from_json(v))).collect()),
        }
    }

    /// `key: value` pairs, for building trees by hand.
    pub fn map(entries: Vec<(&str, Node)>) -> Node {
        Node::Map(entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
    }

    pub fn str(s: impl Into<String>) -> Node {
        Node::Str(s.into())
    }

    pub fn plain(s: impl std::fmt::Display) -> Node {
        Node::Plain(s.to_string())
    }

    /// The children, in document order.
    pub fn children(&self) -> Vec<&Node> {
        match self {
            Node::Seq(items) => items.iter().collect(),
            Node::Map(entries) => entries.iter().map(|(_, v)| v).collect(),
            Node::Anchor(_, n) | Node::Tagged(_, n) | Node::Nested { inner: n, .. } => vec![&**n],
            Node::Plain(_) | Node::Str(_) | Node::Secret(_) | Node::Alias(_) => Vec::new(),
        }
    }

    /// The child number `i` (as [`Node::children`] counts).
    pub fn child_mut(&mut self, i: usize) -> Option<&mut Node> {
        match self {
            Node::Seq(items) => items.get_mut(i),
            Node::Map(entries) => entries.get_mut(i).map(|(_, v)| v),
            Node::Anchor(_, n) | Node::Tagged(_, n) | Node::Nested { inner: n, .. } => (i == 0).then_some(&mut **n),
            Node::Plain(_) | Node::Str(_) | Node::Secret(_) | Node::Alias(_) => None,
        }
    }

    /// The node at `path` (child numbers from here down).
    pub fn at_mut(&mut self, path: &[usize]) -> Option<&mut Node> {
        let mut node = self;
        for &i in path {
            node = node.child_mut(i)?;
        }
        Some(node)
    }

    pub fn at(&self, path: &[usize]) -> Option<&Node> {
        let mut node = self;
        for &i in path {
            node = *node.children().get(i)?;
        }
        Some(node)
    }

    /// Whether a planted credential lies in this subtree.
    pub fn holds_secret(&self) -> bool {
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            if matches!(n, Node::Secret(_)) {
                return true;
            }
            stack.extend(n.children());
        }
        false
    }

    /// About how many bytes the node takes written out, without writing it.
    pub fn approx_len(&self) -> usize {
        let mut total = 0usize;
        let mut stack = vec![self];
        while let Some(n) = stack.pop() {
            total = total.saturating_add(match n {
                Node::Plain(s) | Node::Str(s) | Node::Secret(s) | Node::Alias(s) => s.len() + 2,
                Node::Map(e) => e.iter().map(|(k, _)| k.len() + 4).sum(),
                Node::Seq(i) => 2 * i.len() + 2,
                Node::Anchor(a, _) | Node::Tagged(a, _) => a.len() + 2,
                Node::Nested { depth, .. } => depth.saturating_mul(5),
            });
            stack.extend(n.children());
        }
        total
    }

    /// Every node's path, in document order (pre-order), with the key it
    /// sits under when its parent is a map.
    pub fn paths(&self) -> Vec<(Vec<usize>, Option<String>)> {
        let mut out = Vec::new();
        let mut stack = vec![(self, Vec::new(), None)];
        while let Some((n, path, key)) = stack.pop() {
            let kids: Vec<(&Node, Option<String>)> = match n {
                Node::Map(entries) => entries.iter().map(|(k, v)| (v, Some(k.clone()))).collect(),
                _ => n.children().into_iter().map(|c| (c, None)).collect(),
            };
            // pushed in reverse so that they pop in order
            for (i, (c, k)) in kids.into_iter().enumerate().rev() {
                let mut p = path.clone();
                p.push(i);
                stack.push((c, p, k));
            }
            out.push((path, key));
        }
        out
    }
}

/// What may come before a document: a BOM, `---`, a `%YAML` directive, a comment.
const PREFIXES: [&str; 8] = [
    "",
    "",
    "",
    "---\n",
    "--- \n",
    "%YAML 1.2\n---\n",
    "\u{feff}",
    "# a comment\n",
];
/// ... and after it: `...`, a second document, stray text.
const SUFFIXES: [&str; 8] = ["", "", "", "...\n", "---\n", "---\n{}\n", "--- x\n", "# end"];

/// How a tree is written.
#[derive(Debug, Clone)]
pub struct Style {
    /// spaces per block level
    pub indent: usize,
    /// chance that a collection is written in flow style (`{a: 1}`, `[1]`)
    pub flow: f64,
    /// single quotes where they can do, else double
    pub single_quotes: bool,
    /// `# ...` lines between entries
    pub comments: bool,
    /// `\r\n` line ends
    pub crlf: bool,
    /// a tab instead of the space after `key:`
    pub tab_after_colon: bool,
    /// `|-` and `>-` for strings that allow it
    pub block_scalars: bool,
    /// before the document: a BOM, `---`, a `%YAML` directive
    pub prefix: &'static str,
    /// after it: `...`, a second document
    pub suffix: &'static str,
}

impl Style {
    /// The style real scenario files use: block, two spaces, `\n`.
    pub fn plain() -> Style {
        Style {
            indent: 2,
            flow: 0.0,
            single_quotes: false,
            comments: false,
            crlf: false,
            tab_after_colon: false,
            block_scalars: false,
            prefix: "",
            suffix: "",
        }
    }

    /// A random layout of one document: what must load as the plain style does.
    pub fn random_layout(rng: &mut impl Rng) -> Style {
        let mut s = Style::random(rng);
        s.prefix = *pick(rng, &["", "---\n", "# a comment\n"]);
        s.suffix = *pick(rng, &["", "...\n", "# end"]);
        s
    }

    pub fn random(rng: &mut impl Rng) -> Style {
        if rng.random_bool(0.4) {
            return Style::plain();
        }
        Style {
            indent: rng.random_range(1..=4),
            flow: *pick(rng, &[0.0, 0.0, 0.2, 0.5, 1.0]),
            single_quotes: rng.random_bool(0.3),
            comments: rng.random_bool(0.2),
            crlf: rng.random_bool(0.1),
            tab_after_colon: rng.random_bool(0.03),
            block_scalars: rng.random_bool(0.3),
            prefix: PREFIXES[rng.random_range(0..PREFIXES.len())],
            suffix: SUFFIXES[rng.random_range(0..SUFFIXES.len())],
        }
    }
}

/// `node` as YAML text in `style`; `rng` decides which collections go flow.
pub fn write(node: &Node, style: &Style, rng: &mut impl Rng) -> String {
    let mut w = Writer {
        out: String::new(),
        style,
    };
    w.out.push_str(style.prefix);
    match node {
        Node::Map(e) if !e.is_empty() && !rng.random_bool(style.flow) => w.block_map(e, 0, None, rng),
        Node::Seq(i) if !i.is_empty() && !rng.random_bool(style.flow) => w.block_seq(i, 0, None, rng),
        other => {
            w.out.push_str(&w.inline(other, false));
            w.out.push('\n');
        }
    }
    w.out.push_str(style.suffix);
    if style.crlf { w.out.replace('\n', "\r\n") } else { w.out }
}

struct Writer<'a> {
    out: String,
    style: &'a Style,
}

impl Writer<'_> {
    fn spaces(&mut self, n: usize) {
        self.out.extend(std::iter::repeat_n(' ', n));
    }

    /// `entries` as a block map at `indent`; the first entry follows `first`
    /// (`"- "` of a sequence entry) instead of the indentation.
    fn block_map(&mut self, entries: &[(String, Node)], indent: usize, first: Option<&str>, rng: &mut impl Rng) {
        for (i, (k, v)) in entries.iter().enumerate() {
            match (i, first) {
                (0, Some(f)) => self.out.push_str(f),
                _ => {
                    if self.style.comments && rng.random_bool(0.1) {
                        self.spaces(indent);
                        self.out.push_str("# ünï comment: {[\n");
                    }
                    self.spaces(indent);
                }
            }
            let key = scalar_text(k, false, self.style.single_quotes);
            self.out.push_str(&key);
            self.out.push(':');
            self.value(v, indent, rng);
        }
    }

    fn block_seq(&mut self, items: &[Node], indent: usize, first: Option<&str>, rng: &mut impl Rng) {
        for (i, item) in items.iter().enumerate() {
            match (i, first) {
                (0, Some(f)) => self.out.push_str(f),
                _ => self.spaces(indent),
            }
            self.out.push('-');
            match item {
                Node::Map(e) if !e.is_empty() && !rng.random_bool(self.style.flow) => {
                    self.out.push(' ');
                    self.block_map(e, indent + 2, Some(""), rng);
                }
                Node::Seq(s) if !s.is_empty() && !rng.random_bool(self.style.flow) => {
                    self.out.push(' ');
                    self.block_seq(s, indent + 2, Some(""), rng);
                }
                other => self.value(other, indent, rng),
            }
        }
    }

    /// What follows `key:` or `-`: a space and an inline value, or a new line
    /// and a block collection one level deeper.
    fn value(&mut self, v: &Node, indent: usize, rng: &mut impl Rng) {
        let deeper = indent + self.style.indent;
        let sep = if self.style.tab_after_colon { '\t' } else { ' ' };
        match v {
            Node::Map(e) if !e.is_empty() && !rng.random_bool(self.style.flow) => {
                self.out.push('\n');
                self.block_map(e, deeper, None, rng);
            }
            Node::Seq(s) if !s.is_empty() && !rng.random_bool(self.style.flow) => {
                self.out.push('\n');
                self.block_seq(s, deeper, None, rng);
            }
            Node::Anchor(name, inner) | Node::Tagged(name, inner)
                if is_block(inner) && !rng.random_bool(self.style.flow) =>
            {
                self.out.push(sep);
                if matches!(v, Node::Anchor(..)) {
                    self.out.push('&');
                }
                self.out.push_str(name);
                self.out.push('\n');
                match &**inner {
                    Node::Map(e) => self.block_map(e, deeper, None, rng),
                    Node::Seq(s) => self.block_seq(s, deeper, None, rng),
                    _ => unreachable!("is_block"),
                }
            }
            Node::Str(s) | Node::Secret(s)
                if self.style.block_scalars && block_scalar_ok(s) && rng.random_bool(0.5) =>
            {
                // `|-` keeps the lines; `>-` folds them, so only single lines are written that way
                let literal = s.contains('\n') || rng.random_bool(0.5);
                self.out.push(sep);
                self.out.push_str(if literal { "|-\n" } else { ">-\n" });
                for line in s.split('\n') {
                    if !line.is_empty() {
                        self.spaces(deeper.max(1));
                    }
                    self.out.push_str(line);
                    self.out.push('\n');
                }
            }
            other => {
                self.out.push(sep);
                let text = self.inline(other, false);
                self.out.push_str(&text);
                if self.style.comments && rng.random_bool(0.05) {
                    self.out.push_str("  # 💬");
                }
                self.out.push('\n');
            }
        }
    }

    /// A node on one line, in flow style.
    fn inline(&self, node: &Node, in_flow: bool) -> String {
        let q = self.style.single_quotes;
        match node {
            Node::Plain(s) => s.clone(),
            Node::Str(s) | Node::Secret(s) => scalar_text(s, in_flow, q),
            Node::Seq(items) => {
                let parts: Vec<String> = items.iter().map(|i| self.inline(i, true)).collect();
                format!("[{}]", parts.join(", "))
            }
            Node::Map(entries) => {
                let parts: Vec<String> = entries
                    .iter()
                    .map(|(k, v)| format!("{}: {}", scalar_text(k, true, q), self.inline(v, true)))
                    .collect();
                format!("{{{}}}", parts.join(", "))
            }
            Node::Anchor(name, inner) => format!("&{name} {}", self.inline(inner, in_flow)),
            Node::Alias(name) => format!("*{name}"),
            Node::Tagged(tag, inner) => format!("{tag} {}", self.inline(inner, in_flow)),
            Node::Nested { depth, maps, inner } => {
                let (open, close) = if *maps { ("{a: ", "}") } else { ("[", "]") };
                let inner = self.inline(inner, true);
                let mut s = String::with_capacity(depth * (open.len() + close.len()) + inner.len());
                s.extend(std::iter::repeat_n(open, *depth));
                s.push_str(&inner);
                s.extend(std::iter::repeat_n(close, *depth));
                s
            }
        }
    }
}

fn is_block(n: &Node) -> bool {
    matches!(n, Node::Map(e) if !e.is_empty()) || matches!(n, Node::Seq(s) if !s.is_empty())
}

/// Whether `s` reads back the same from a `|-` or `>-` block.
fn block_scalar_ok(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with([' ', '\t', '\n', '#'])
        && !s.ends_with([' ', '\t', '\n'])
        && !s.contains("\n\n")
        && !s.chars().any(|c| (c.is_control() && c != '\n') || c == '\u{feff}')
        && !s.lines().any(|l| l.starts_with([' ', '\t']) || l != l.trim_end())
        && (s.contains('\n') || !s.contains("  "))
}

/// A string as a YAML scalar: plain where YAML reads it back as this same
/// string, else quoted.
pub fn scalar_text(s: &str, in_flow: bool, single_quotes: bool) -> String {
    if !needs_quotes(s, in_flow) {
        return s.to_string();
    }
    if single_quotes
        && !s
            .chars()
            .any(|c| c.is_control() || c == '\u{feff}' || c == '\u{2028}' || c == '\u{2029}')
    {
        return format!("'{}'", s.replace('\'', "''"));
    }
    // a JSON string is a YAML double-quoted scalar
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_string())
}

fn needs_quotes(s: &str, in_flow: bool) -> bool {
    const RESOLVED: &[&str] = &[
        "null", "Null", "NULL", "~", "true", "True", "TRUE", "false", "False", "FALSE", "yes", "no", "on", "off", "y",
        "n", "Yes", "No", "On", "Off", "Y", "N", "<<",
    ];
    let Some(first) = s.chars().next() else {
        return true;
    };
    s != s.trim()
        || s.chars()
            .any(|c| c.is_control() || matches!(c, '\u{85}' | '\u{feff}' | '\u{2028}' | '\u{2029}'))
        || "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || first.is_ascii_digit()
        || first == '+'
        || first == '.'
        || s.contains(": ")
        || s.contains(" #")
        || s.ends_with(':')
        || (in_flow && s.contains([',', '[', ']', '{', '}', ':']))
        || RESOLVED.contains(&s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::input_rng;

    fn sample() -> Node {
        Node::map(vec![
            ("name", Node::str("x")),
            ("count", Node::plain(3)),
            ("text", Node::str("a: b #c\nd")),
            ("odd", Node::str("5m")),
            (
                "list",
                Node::Seq(vec![
                    Node::map(vec![
                        ("k", Node::str("${a * 2}")),
                        ("v", Node::Seq(vec![Node::plain(1)])),
                    ]),
                    Node::str("-x"),
                    Node::Seq(vec![Node::str("y"), Node::Map(vec![])]),
                ]),
            ),
            (
                "anchored",
                Node::Anchor("a".into(), Box::new(Node::map(vec![("q", Node::str("it's"))]))),
            ),
            ("alias", Node::Alias("a".into())),
        ])
    }

    /// The same tree in any style reads back as the same document.
    #[test]
    fn every_style_writes_the_same_document() {
        let expected = serde_json::json!({
            "name": "x", "count": 3, "text": "a: b #c\nd", "odd": "5m",
            "list": [{"k": "${a * 2}", "v": [1]}, "-x", ["y", {}]],
            "anchored": {"q": "it's"}, "alias": {"q": "it's"},
        });
        for i in 0..300 {
            let mut rng = input_rng("yaml", 1, i);
            let style = Style::random_layout(&mut rng);
            let text = write(&sample(), &style, &mut rng);
            let back: serde_json::Value =
                serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{style:?}\n{text}\n{e}"));
            assert_eq!(back, expected, "{style:?}\n{text}");
        }
    }

    #[test]
    fn deep_nesting_is_written_without_recursion() {
        let n = Node::Nested {
            depth: 100_000,
            maps: false,
            inner: Box::new(Node::plain(1)),
        };
        let text = write(
            &Node::map(vec![("a", n)]),
            &Style::plain(),
            &mut input_rng("yaml", 1, 0),
        );
        assert_eq!(text.len(), "a: ".len() + 200_001 + 1);
    }

    #[test]
    fn paths_come_in_document_order() {
        let t = sample();
        let paths = t.paths();
        assert_eq!(paths[0], (vec![], None));
        assert_eq!(paths[1], (vec![0], Some("name".into())));
        assert_eq!(t.at(&[4, 0, 0]), Some(&Node::str("${a * 2}")));
        let keys: Vec<_> = paths.iter().filter_map(|(_, k)| k.clone()).collect();
        assert_eq!(keys[..5], ["name", "count", "text", "odd", "list"]);
    }
}
