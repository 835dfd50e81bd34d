//! The book's evaluations chapter (`docs/src/evaluations.md`), rendered from
//! the committed evaluation folders themselves: each folder's README title
//! and first paragraph, and what the folder holds. The numbers stay in the
//! folders; the chapter only points at them, so it cannot drift from them.

use std::fs;
use std::io;
use std::path::Path;

/// The repository, as the workspace's `Cargo.toml` names it. The book links
/// a file outside itself by its address there: mdBook rewrites a relative
/// link to a `.md` file into `.html`, which exists only inside the book.
pub const REPOSITORY_URL: &str = "https://github.com/schedlab/schedlab";

/// The address of `path` (relative to the repository's root) on its main
/// branch: a folder (ending in `/`) under `tree/`, a file under `blob/`.
pub fn repository_link(path: &str) -> String {
    let kind = if path.ends_with('/') { "tree" } else { "blob" };
    format!("{REPOSITORY_URL}/{kind}/main/{path}")
}

/// The chapter over `evaluations` (the repository's `evaluations/` folder).
/// Entries are sorted by name and hidden ones (`.heldout`) left out, so the
/// same folder gives the same text on every machine.
pub fn evaluations_page(evaluations: &Path) -> io::Result<String> {
    let mut out = format!(
        "# Evaluations\n\n\
         <!-- Generated from the folders of evaluations/ by results::evaluations_index; regenerate it with \
         `SCHEDLAB_BLESS=1 cargo test -p results --test book`. -->\n\n\
         Every measured evaluation is committed under [evaluations/]({evaluations}), one folder each, \
         with the command that wrote it in its README. Below: each folder's title and first paragraph, and \
         what it holds.\n",
        evaluations = repository_link("evaluations/"),
    );
    let (folders, files) = entries(evaluations)?;
    if !files.is_empty() {
        out.push_str("\nBeside the folders: ");
        out.push_str(&links("evaluations", &files));
        out.push_str(".\n");
    }
    for name in folders {
        let folder = evaluations.join(&name);
        let base = format!("evaluations/{name}");
        let readme = match fs::read_to_string(folder.join("README.md")) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let (title, paragraph) = readme.as_deref().map(title_and_paragraph).unwrap_or_default();
        let title = title.unwrap_or_else(|| name.clone());
        out.push_str(&format!(
            "\n## {title}\n\n[`{base}/`]({})",
            repository_link(&format!("{base}/"))
        ));
        if readme.is_none() {
            out.push_str(" (no README)");
        }
        out.push_str("\n\n");
        if !paragraph.is_empty() {
            out.push_str(&rebase_links(&paragraph, &base));
            out.push_str("\n\n");
        }
        let (sub, subfiles) = entries(&folder)?;
        let all: Vec<String> = sub.iter().map(|s| format!("{s}/")).chain(subfiles).collect();
        out.push_str("Holds: ");
        out.push_str(&links(&base, &all));
        out.push_str(".\n");
    }
    Ok(out)
}

/// The visible folders and files of `dir`, each sorted by name.
fn entries(dir: &Path) -> io::Result<(Vec<String>, Vec<String>)> {
    let (mut folders, mut files) = (Vec::new(), Vec::new());
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        if entry.file_type()?.is_dir() {
            folders.push(name);
        } else {
            files.push(name);
        }
    }
    folders.sort();
    files.sort();
    Ok((folders, files))
}

fn links(base: &str, names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("[{n}]({})", repository_link(&format!("{base}/{n}"))))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The first `# ` heading, and the first paragraph after it (up to a blank
/// line, a heading, a list, a table or a code block), joined on spaces.
fn title_and_paragraph(readme: &str) -> (Option<String>, String) {
    let mut lines = readme.lines();
    let title = lines
        .by_ref()
        .find_map(|l| l.strip_prefix("# "))
        .map(|t| t.trim().to_string());
    let paragraph: Vec<&str> = lines
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| {
            let t = l.trim_start();
            !(t.is_empty() || t.starts_with('#') || t.starts_with("- ") || t.starts_with('|') || t.starts_with("```"))
        })
        .map(str::trim)
        .collect();
    (title, paragraph.join(" "))
}

/// Relative link targets in `text`, written from the folder `base`,
/// rewritten to reach the same place from the chapter.
fn rebase_links(text: &str, base: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        let (before, after) = rest.split_at(at + 2);
        out.push_str(before);
        let end = after.find(')').unwrap_or(after.len());
        let target = &after[..end];
        if target.contains(':') || target.starts_with('#') || target.starts_with('/') {
            out.push_str(target);
        } else {
            out.push_str(&repository_link(&normalise(&format!("{base}/{target}"))));
        }
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// `a/b/../c` as `a/c`, lexically; a trailing `/` is kept.
fn normalise(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "." => {}
            ".." if parts.last().is_some_and(|p| *p != "..") => {
                parts.pop();
            }
            _ => parts.push(part),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_paragraph_stops_at_a_blank_line_or_a_list() {
        let (title, para) = title_and_paragraph("# T\n\nOne\ntwo.\n\nthree\n");
        assert_eq!((title.as_deref(), para.as_str()), (Some("T"), "One two."));
        let (_, para) = title_and_paragraph("# T\n\nOne:\n- a\n");
        assert_eq!(para, "One:");
        assert_eq!(title_and_paragraph("no title\n").0, None);
    }

    #[test]
    fn links_are_rebased_from_the_folder_to_the_chapter() {
        let text = "see [the pre-registration](../PREREGISTRATION.md) and [x](https://e.org/a) [h](#h) [d](runs/)";
        assert_eq!(
            rebase_links(text, "evaluations/scaling"),
            "see [the pre-registration](https://github.com/schedlab/schedlab/blob/main/evaluations/PREREGISTRATION.md) \
             and [x](https://e.org/a) [h](#h) [d](https://github.com/schedlab/schedlab/tree/main/evaluations/scaling/runs/)"
        );
        assert_eq!(normalise("a/../../b"), "../b");
    }
}
