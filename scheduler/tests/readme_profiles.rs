//! The README's table of the profile arms (under `--arms`) says what the
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
fn readme_table(readme: &str) -> Option<String> {
    let mut lines = readme.lines().map(str::trim).skip_while(|l| *l != HEADER);
    let header = lines.next()?;
    let rest = lines.take_while(|l| l.starts_with('|'));
    Some(std::iter::once(header).chain(rest).collect::<Vec<_>>().join("\n"))
}

#[test]
fn the_readme_arm_table_is_the_profiles() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let readme = std::fs::read_to_string(path).expect("the workspace README");
    assert_eq!(readme.matches(HEADER).count(), 1, "one profile table in README.md");
    let want = expected_table();
    assert_eq!(
        readme_table(&readme).as_deref(),
        Some(want.as_str()),
        "README.md's profile table differs from the profiles; it should read:\n{want}"
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
    let readme = format!("intro\n  {HEADER}\n  | --- |\n  {}\n\nafter", row(&changed));
    assert_eq!(
        readme_table(&readme),
        Some(format!("{HEADER}\n| --- |\n{}", row(&changed)))
    );
}
