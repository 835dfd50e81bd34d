//! A link check of the book: every relative link of a chapter (and of the
//! extra files given, such as the README) names a file or folder that exists
//! and, for a Markdown file, an anchor one of its headings produces by
//! mdBook's rule; and every chapter is listed in SUMMARY.md. A chapter
//! reaches a file outside the book by its repository address
//! ([`results::evaluations_index::repository_link`]), which is checked
//! against the checkout the same way: a relative link out of the book
//! breaks once mdBook has built it (a `.md` target becomes `.html`) or the
//! book is hosted apart from the repository. Written by hand
//! because the workspace has no Markdown parser: it reads paragraphs outside
//! fenced code, with inline code spans taken out, which is all the book uses.

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};

/// Problems found under `root`: the book's source folder `src` (relative to
/// `root`) and the `extra` files (relative to `root`), as `file:line: what`.
pub fn check_book(root: &Path, src: &Path, extra: &[&Path]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut chapters = Vec::new();
    markdown_files(&root.join(src), &mut chapters);
    chapters.sort();
    let mut anchors = Anchors::default();
    for file in chapters.iter().cloned().chain(extra.iter().map(|p| root.join(p))) {
        let Ok(text) = fs::read_to_string(&file) else {
            problems.push(format!("{}: cannot be read", shown(root, &file)));
            continue;
        };
        let book = root.join(src);
        let inside = file.starts_with(&book).then_some(book.as_path());
        for (line, target) in links(&text) {
            if let Err(what) = check_link(root, inside, &file, &target, &mut anchors) {
                problems.push(format!("{}:{line}: {target}: {what}", shown(root, &file)));
            }
        }
    }
    let summary = root.join(src).join("SUMMARY.md");
    let listed: BTreeSet<PathBuf> = fs::read_to_string(&summary)
        .map(|text| {
            links(&text)
                .into_iter()
                .map(|(_, t)| lexical(&root.join(src).join(t.split('#').next().unwrap_or(""))))
                .collect()
        })
        .unwrap_or_default();
    for chapter in &chapters {
        if lexical(chapter) != lexical(&summary) && !listed.contains(&lexical(chapter)) {
            problems.push(format!("{}: not listed in SUMMARY.md", shown(root, chapter)));
        }
    }
    problems
}

fn shown(root: &Path, file: &Path) -> String {
    file.strip_prefix(root).unwrap_or(file).display().to_string()
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            markdown_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
}

/// `a/b/../c` as `a/c`, so that one file has one name.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir if out.file_name().is_some() => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Checks `target`, a link of `file`; `book` is the book's source folder
/// when `file` is one of its chapters.
fn check_link(
    root: &Path,
    book: Option<&Path>,
    file: &Path,
    target: &str,
    anchors: &mut Anchors,
) -> Result<(), String> {
    let repository = results::evaluations_index::REPOSITORY_URL;
    let in_repository = ["blob", "tree"]
        .iter()
        .find_map(|kind| target.strip_prefix(&format!("{repository}/{kind}/main/")));
    let local = in_repository.unwrap_or(target);
    let (path, anchor) = local.split_once('#').unwrap_or((local, ""));
    let resolved = if in_repository.is_some() {
        lexical(&root.join(path))
    } else if target.contains("://") || target.starts_with("mailto:") {
        return Ok(());
    } else if path.is_empty() {
        file.to_path_buf()
    } else if path.starts_with('/') {
        return Err("an absolute path, which neither the book nor a clone resolves".to_string());
    } else {
        let resolved = lexical(&file.parent().unwrap_or(Path::new(".")).join(path));
        if let Some(book) = book
            && !resolved.starts_with(lexical(book))
        {
            return Err(format!(
                "leaves the book: link it by its repository address ({repository}/blob/main/...), as a \
                 relative link breaks once mdBook has built the book"
            ));
        }
        resolved
    };
    if !resolved.exists() {
        return Err("no such file or folder".to_string());
    }
    if anchor.is_empty() || resolved.extension().is_none_or(|e| e != "md") {
        return Ok(());
    }
    if anchors.of(&resolved).contains(anchor) {
        Ok(())
    } else {
        Err(format!("no heading of {} has the anchor #{anchor}", resolved.display()))
    }
}

#[derive(Default)]
struct Anchors(HashMap<PathBuf, BTreeSet<String>>);

impl Anchors {
    fn of(&mut self, file: &Path) -> &BTreeSet<String> {
        self.0.entry(file.to_path_buf()).or_insert_with(|| {
            fs::read_to_string(file)
                .map(|t| heading_anchors(&with_includes(file, &t)))
                .unwrap_or_default()
        })
    }
}

/// `text` with each line `{{#include PATH}}` (mdBook's, relative to `file`)
/// replaced by that file's text, so that a chapter that includes a
/// repository file has its headings.
fn with_includes(file: &Path, text: &str) -> String {
    text.lines()
        .map(|line| {
            line.trim()
                .strip_prefix("{{#include ")
                .and_then(|rest| rest.strip_suffix("}}"))
                .and_then(|path| fs::read_to_string(file.parent().unwrap_or(Path::new(".")).join(path.trim())).ok())
                .unwrap_or_else(|| line.to_string())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every link target of `text` with its line: inline links and images
/// (`[text](target)`, `![alt](target)`) and reference definitions
/// (`[name]: target`), outside fenced code and inline code spans.
pub fn links(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (start, paragraph) in paragraphs(text) {
        let prose = without_code_spans(&paragraph);
        let mut from = 0;
        while let Some(at) = prose[from..].find("](") {
            let open = from + at + 2;
            let end = prose[open..].find(')').map_or(prose.len(), |e| open + e);
            let line = start + prose[..open].matches('\n').count();
            let target = prose[open..end].trim().trim_start_matches('<');
            let target = target.split_whitespace().next().unwrap_or("").trim_end_matches('>');
            out.push((line, target.to_string()));
            from = end.min(prose.len());
        }
        for (i, l) in prose.lines().enumerate() {
            let l = l.trim_start();
            if let Some(rest) = l.strip_prefix('[')
                && let Some((_, def)) = rest.split_once("]:")
                && let Some(target) = def.split_whitespace().next()
            {
                out.push((start + i, target.to_string()));
            }
        }
    }
    out
}

/// The paragraphs outside fenced code, each with the line it starts on
/// (1-based), so that a code span or link broken over lines stays whole.
fn paragraphs(text: &str) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, String)> = Vec::new();
    let mut fence: Option<&str> = None;
    let mut current: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let marker = ["```", "~~~"].into_iter().find(|m| t.starts_with(m));
        if let Some(m) = marker {
            if fence.is_none() {
                fence = Some(m);
                out.extend(current.take());
                continue;
            } else if fence == Some(m) {
                fence = None;
                continue;
            }
        }
        if fence.is_some() {
            continue;
        }
        if t.is_empty() {
            out.extend(current.take());
        } else if let Some((_, p)) = current.as_mut() {
            p.push('\n');
            p.push_str(line);
        } else {
            current = Some((i + 1, line.to_string()));
        }
    }
    out.extend(current);
    out
}

/// `text` with every inline code span (a run of backticks up to the next run
/// of the same length) blanked, its line breaks kept.
fn without_code_spans(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('`') {
        out.push_str(&rest[..at]);
        let run = rest[at..].chars().take_while(|c| *c == '`').count();
        let after = &rest[at + run..];
        let closing = "`".repeat(run);
        match after.find(&closing) {
            Some(end) => {
                out.push_str(&after[..end].replace(|c: char| c != '\n', " "));
                rest = &after[end + run..];
            }
            None => {
                out.push_str(&rest[at..at + run]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The anchors of a file's headings by mdBook's rule (also GitHub's for the
/// text this repository uses): the heading's text without markup, lowercased,
/// whitespace to `-`, anything but alphanumerics, `-` and `_` dropped; a
/// repeated anchor gets `-1`, `-2`, ….
pub fn heading_anchors(text: &str) -> BTreeSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = BTreeSet::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let t = line.trim_start();
        if let Some(m) = ["```", "~~~"].into_iter().find(|m| t.starts_with(m)) {
            match fence {
                None => fence = Some(m),
                Some(open) if open == m => fence = None,
                Some(_) => {}
            }
            continue;
        }
        if fence.is_some() {
            continue;
        }
        let hashes = line.chars().take_while(|c| *c == '#').count();
        let Some(title) = line.get(hashes..).and_then(|r| r.strip_prefix(' ')) else {
            continue;
        };
        if !(1..=6).contains(&hashes) {
            continue;
        }
        let id = anchor(title.trim().trim_end_matches('#').trim());
        let n = seen.entry(id.clone()).or_insert(0);
        out.insert(if *n == 0 { id.clone() } else { format!("{id}-{n}") });
        *n += 1;
    }
    out
}

fn anchor(title: &str) -> String {
    let mut plain = String::new();
    let mut rest = title;
    // [text](target) shows as text
    while let Some(open) = rest.find('[') {
        plain.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find("](").and_then(|m| after[m..].find(')').map(|e| (m, m + e))) {
            Some((mid, end)) => {
                plain.push_str(&after[..mid]);
                rest = &after[end + 1..];
            }
            None => {
                plain.push('[');
                rest = after;
            }
        }
    }
    plain.push_str(rest);
    plain
        .chars()
        .filter(|c| *c != '`' && *c != '*')
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_lowercase().collect::<String>())
            } else if c.is_whitespace() {
                Some("-".to_string())
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_follow_mdbooks_rule() {
        let a = heading_anchors(
            "# Decision records (`--explain`)\n## A real control plane\n## A real control plane\n```\n# not a heading\n```\n#no\n",
        );
        let want: BTreeSet<String> = [
            "decision-records---explain",
            "a-real-control-plane",
            "a-real-control-plane-1",
        ]
        .into_iter()
        .map(String::from)
        .collect();
        assert_eq!(a, want);
        assert_eq!(
            anchor("Where it stands (2026-12-07: the v5 checkpoints)"),
            "where-it-stands-2026-12-07-the-v5-checkpoints"
        );
        assert_eq!(anchor("The monolithic foil (DRS)"), "the-monolithic-foil-drs");
    }

    #[test]
    fn links_outside_code_are_found_with_their_lines() {
        let text = "a [x](one.md) `[no](code.md)`\nb [y](\n\
                    two.md#t \"title\")\n\n```\n[no](fenced.md)\n```\n![img](p.png)\n[ref]: three.md\n`broken\nspan [no](span.md)`\n";
        let found = links(text);
        let found: Vec<(usize, &str)> = found.iter().map(|(l, t)| (*l, t.as_str())).collect();
        assert_eq!(found, [(1, "one.md"), (2, "two.md#t"), (8, "p.png"), (9, "three.md")]);
    }

    #[test]
    fn a_broken_book_is_caught() {
        let dir = tempfile::tempdir().expect("tempdir");
        let src = dir.path().join("docs/src");
        fs::create_dir_all(&src).expect("mkdir");
        fs::write(
            src.join("SUMMARY.md"),
            "# Summary\n\n- [A](a.md)\n- [Gone](gone.md)\n- [Inc](inc.md)\n",
        )
        .expect("write");
        fs::write(
            src.join("a.md"),
            "# A\n\n## Part two\n\n[ok](#part-two) [ok](b.md#b) [bad](../../README.md) [bad](#part-three)\n\
             [bad](b.md#nope) [bad](../../missing.md) [ok](https://example.org/x)\n\
             [ok](https://github.com/schedlab/schedlab/blob/main/README.md#r) \
             [bad](https://github.com/schedlab/schedlab/blob/main/README.md#q) \
             [bad](https://github.com/schedlab/schedlab/tree/main/gone/) [ok](inc.md#included)\n\n\
             ```\n[ignored](nowhere.md)\n```\n",
        )
        .expect("write");
        fs::write(src.join("b.md"), "# B\n").expect("write");
        fs::write(src.join("inc.md"), "{{#include ../../INC.md}}\n").expect("write");
        fs::write(dir.path().join("INC.md"), "# Included\n").expect("write");
        fs::write(
            dir.path().join("README.md"),
            "# R\n\n[ok](docs/src/a.md#part-two) [bad](docs/src/a.md#a-b)\n",
        )
        .expect("write");
        let problems = check_book(dir.path(), Path::new("docs/src"), &[Path::new("README.md")]);
        let want = [
            "docs/src/SUMMARY.md:4: gone.md: no such file or folder",
            "docs/src/a.md:5: ../../README.md: leaves the book",
            "docs/src/a.md:5: #part-three: no heading of",
            "docs/src/a.md:6: b.md#nope: no heading of",
            "docs/src/a.md:6: ../../missing.md: leaves the book",
            "docs/src/a.md:7: https://github.com/schedlab/schedlab/blob/main/README.md#q: no heading of",
            "docs/src/a.md:7: https://github.com/schedlab/schedlab/tree/main/gone/: no such file or folder",
            "README.md:3: docs/src/a.md#a-b: no heading of",
            "docs/src/b.md: not listed in SUMMARY.md",
        ];
        assert_eq!(problems.len(), want.len(), "{problems:#?}");
        for (have, want) in problems.iter().zip(want) {
            assert!(have.starts_with(want), "{have} is not {want}");
        }
    }
}
