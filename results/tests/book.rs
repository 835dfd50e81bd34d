//! The book under `docs/`: its generated chapters equal what their sources
//! render today, the claims chapter states the verdict rule word for word,
//! and no relative link of the book or of the README leads nowhere.
//!
//! `SCHEDLAB_BLESS=1 cargo test -p results --test book` rewrites the
//! generated chapters instead of failing on them.

mod links;

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn src() -> PathBuf {
    root().join("docs/src")
}

/// Fails when `file` differs from `want`, or rewrites it under SCHEDLAB_BLESS.
fn check_generated(file: &str, want: &str) {
    let path = src().join(file);
    if std::env::var_os("SCHEDLAB_BLESS").is_some() {
        std::fs::write(&path, want).expect("write the generated chapter");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/src/{file} is not what its source renders; regenerate it with \
         `SCHEDLAB_BLESS=1 cargo test -p results --test book` and commit it"
    );
}

#[test]
fn the_metrics_chapter_is_the_definitions() {
    check_generated("metrics.md", &results::definitions::metrics_page());
}

#[test]
fn the_metrics_chapter_defines_every_metric() {
    let page = results::definitions::metrics_page();
    for def in results::definitions::METRICS
        .iter()
        .chain(results::definitions::CORRELATIONS)
    {
        assert!(page.contains(&format!("**`{}`**", def.key)), "no entry for {}", def.key);
        assert!(
            page.contains(def.definition),
            "{}'s definition is not on the page",
            def.key
        );
    }
    assert!(page.contains(results::definitions::ACROSS_SEEDS));
}

#[test]
fn the_evaluations_chapter_is_the_evaluation_folders() {
    let page = results::evaluations_index::evaluations_page(&root().join("evaluations")).expect("read evaluations/");
    check_generated("evaluations.md", &page);
}

#[test]
fn the_claims_chapter_states_the_verdict_rule_word_for_word() {
    let claims = std::fs::read_to_string(src().join("claims.md")).expect("docs/src/claims.md");
    assert!(
        claims.contains(results::claims::VERDICT_RULE),
        "docs/src/claims.md's verdict rule is not results::claims::VERDICT_RULE"
    );
}

#[test]
fn every_link_of_the_book_and_the_readme_resolves() {
    let problems = links::check_book(&root(), Path::new("docs/src"), &[Path::new("README.md")]);
    assert!(problems.is_empty(), "broken links:\n{}", problems.join("\n"));
}

#[test]
fn the_book_links_the_repository_cargo_toml_names() {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).expect("the workspace Cargo.toml");
    let want = format!("repository = \"{}\"", results::evaluations_index::REPOSITORY_URL);
    assert!(
        manifest.lines().any(|l| l.trim() == want),
        "Cargo.toml's repository is not results::evaluations_index::REPOSITORY_URL ({want})"
    );
}
