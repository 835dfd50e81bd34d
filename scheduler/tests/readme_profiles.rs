//! The book's table of the profile arms (docs/src/arms.md) says what the
//! profiles are: a profile changed without its row fails here.

use scheduler::profile::Profile;
use scheduler::registry::PROFILES;
use scheduler::{BASELINE_NAMES, RandomScheduler};

const HEADER: &str =
    "| profile | release | nodes examined | filter plugins | preferred first | score plugins (weight) |";

fn list<T: std::fmt::Display>(items: &[T]) -> String {
    if items.is_empty() {
        return "–".to_string();
    }
    items.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
}

fn row(p: &Profile) -> String {
    format!(
        "| `{}` | {} | {} | {} | {} | {} |",
        p.name,
        p.release,
        p.sampling,
        list(p.filters),
        list(p.preferences),
        list(p.scores)
    )
}

fn expected_table() -> String {
    let mut lines = vec![HEADER.to_string(), "| --- | --- | --- | --- | --- | --- |".to_string()];
    lines.extend(PROFILES.iter().map(row));
    lines.join("\n")
}

/// The table under the header line, each line trimmed of the list indent.
fn table_in(page: &str) -> Option<String> {
    let mut lines = page.lines().map(str::trim).skip_while(|l| *l != HEADER);
    let header = lines.next()?;
    let rest = lines.take_while(|l| l.starts_with('|'));
    Some(std::iter::once(header).chain(rest).collect::<Vec<_>>().join("\n"))
}

fn docs_file(path: &str) -> String {
    let path = format!("{}/../{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn the_book_arm_table_is_the_profiles() {
    let arms = docs_file("docs/src/arms.md");
    let want = expected_table();
    assert_eq!(
        table_in(&arms).as_deref(),
        Some(want.as_str()),
        "docs/src/arms.md's profile table differs from the profiles; it should read:\n{want}"
    );
}

/// One table, so that a stale copy elsewhere cannot pass for the real one.
#[test]
fn the_profile_table_is_written_once() {
    let book = std::fs::read_dir(format!("{}/../docs/src", env!("CARGO_MANIFEST_DIR"))).expect("docs/src");
    let mut places: Vec<String> = book
        .flatten()
        .map(|e| format!("docs/src/{}", e.file_name().to_string_lossy()))
        .filter(|p| p.ends_with(".md"))
        .chain(["README.md".to_string()])
        .filter(|p| docs_file(p).contains(HEADER))
        .collect();
    places.sort();
    assert_eq!(
        places,
        ["docs/src/arms.md"],
        "the profile table is in docs/src/arms.md only"
    );
}

#[test]
fn every_baseline_but_random_is_a_listed_profile() {
    let names: Vec<&str> = PROFILES.iter().map(|p| p.name).collect();
    let baselines: Vec<&str> = BASELINE_NAMES
        .iter()
        .copied()
        .filter(|&n| n != RandomScheduler::NAME)
        .collect();
    assert_eq!(names, baselines);
}

#[test]
fn a_changed_profile_no_longer_matches_its_row() {
    let mut changed = PROFILES[0];
    changed.filters = &changed.filters[1..];
    assert_ne!(row(&changed), row(&PROFILES[0]));
    let page = format!("intro\n  {HEADER}\n  | --- |\n  {}\n\nafter", row(&changed));
    assert_eq!(table_in(&page), Some(format!("{HEADER}\n| --- |\n{}", row(&changed))));
}
